#include "cli/cli.h"
#include "core/config.h"
#include "core/fs.h"
#include "core/repo.h"
#include "reviewer/reviewer.h"
#include "core/utf8.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *cli_esc_lines(const char *s, int keep_lines)
{
	static char *ring[16];
	static unsigned next;
	const unsigned char *p = (const unsigned char *)(s ? s : ""), *end;
	size_t n = strlen((const char *)p), o = 0, l, cap;
	unsigned long cp;
	char *out;

	if (!keep_lines) /* a trailing line break ends the line: no need to show it */
		while (n && (p[n - 1] == '\n' || p[n - 1] == '\r'))
			n--;
	cap = n * 6 + 1;
	if (!(out = malloc(cap)))
		return "(out of memory)";
	for (end = p + n; p < end; p += l) {
		if (!(l = sl_utf8_seq(p, 4, &cp))) { /* not UTF-8: the byte, in hex */
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", *p);
			l = 1;
		} else if (keep_lines && (cp == '\n' || cp == '\t')) {
			out[o++] = (char)cp;
		} else if (cp == '\n' || cp == '\t' || cp == '\r') {
			out[o++] = '\\';
			out[o++] = cp == '\n' ? 'n' : cp == '\t' ? 't' : 'r';
		} else if (sl_utf8_hidden(cp)) {
			if (cp < 0x80)
				o += (size_t)snprintf(out + o, cap - o, "\\x%02lx", cp);
			else
				o += (size_t)snprintf(out + o, cap - o, "\\u%04lx", cp);
		} else {
			memcpy(out + o, p, l);
			o += l;
		}
	}
	out[o] = '\0';
	free(ring[next]);
	ring[next] = out;
	next = (next + 1) % (sizeof(ring) / sizeof(ring[0]));
	return out;
}

const char *cli_esc(const char *s)
{
	return cli_esc_lines(s, 0);
}

void cli_error(const char *fmt, ...)
{
	char msg[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fputs("sluice: ", stderr);
	fputs(cli_esc_lines(msg, 1), stderr); /* C1 codes and bidi overrides too, not only C0 */
	fputc('\n', stderr);
}

int cli_report(const struct sl_err *err)
{
	cli_error("%s", err->msg[0] ? err->msg : "failed (no message)");
	return CLI_FAIL;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	/* getopt has already said which option it did not know */
	if (strcmp(fmt, "unknown option")) {
		fprintf(stderr, "sluice %s: ", cmd);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	fprintf(stderr, "see 'sluice %s --help'\n", cmd);
	return CLI_USAGE;
}

int cli_common_opt(struct cli *cli, int opt, const char *arg)
{
	switch (opt) {
	case 'C':
		cli->dir = arg;
		return 1;
	case CLI_OPT_JSON:
		if (!cli->json_ok) { /* never silently ignored: a script would parse text */
			fprintf(stderr, "sluice %s: 'sluice %s' has no --json output\n", cli->cmd,
				cli->cmd);
			return 0;
		}
		cli->json = 1;
		return 1;
	case 'v':
		cli->verbose++;
		return 1;
	default:
		return 0;
	}
}

int cli_help(const char *text)
{
	fputs(text, stdout);
	return CLI_OK;
}

char *cli_repo_dir(const struct cli *cli)
{
	char buf[PATH_MAX];

	if (!realpath(cli->dir ? cli->dir : ".", buf))
		return NULL;
	return strdup(buf);
}

int cli_isatty_out(void)
{
	return isatty(STDOUT_FILENO);
}

void cli_take_token(const char *dir)
{
	struct sl_repo repo = SL_REPO_INIT;
	struct sl_config *cfg = NULL;
	struct sl_err ignored = SL_ERR_INIT;

	if (sl_repo_find(&repo, dir, &ignored) == 0 && repo.config_path &&
	    sl_path_exists(repo.config_path) &&
	    sl_config_load(&cfg, repo.config_path, &ignored) == 0)
		reviewer_token_capture(cfg);
	sl_config_free(cfg);
	sl_repo_release(&repo);
}
