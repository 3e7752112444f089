#include "cli/cli.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Print text with control characters (terminal escapes from input) shown as '?'. */
static void put_safe(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		fputc((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f ? '?' : c, out);
	}
}

void cli_error(const char *fmt, ...)
{
	char msg[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fputs("sluice: ", stderr);
	put_safe(stderr, msg);
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
