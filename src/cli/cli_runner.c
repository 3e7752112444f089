#include "cli/cli_runner.h"
#include "core/time.h"
#include "queue/queue.h"

#include <string.h>

#include <getopt.h>
#include <stdlib.h>

int cli_ctx_open(struct cli *cli, struct sl_ctx *ctx)
{
	struct sl_err err = SL_ERR_INIT;

	if (runner_ctx_open(ctx, cli->dir, &err) != 0)
		return cli_report(&err);
	return CLI_OK;
}

int cli_print_json(json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (s)
		printf("%s\n", s);
	free(s);
	return s ? CLI_OK : CLI_FAIL;
}

void cli_elapsed(char *out, size_t n, int64_t start_ms, int64_t end_ms)
{
	sl_duration_format(out, n, (end_ms ? end_ms : sl_now_ms()) - start_ms);
}

/* --head SHA: a full commit id (a prefix could name a commit a builder made to match it). */
static int head_arg(const char *name, const char *h)
{
	size_t n = strlen(h);

	if (strspn(h, "0123456789abcdef") != n || (n != 40 && n != 64))
		return cli_usage(name, "--head wants the full commit id the run showed (40 hex "
				 "digits, as 'sluice show RUN' prints it), not '%s'", h);
	return CLI_OK;
}

int cli_run_command(struct cli *cli, int argc, char **argv, const struct cli_run_action *a)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS,
					      { "message", required_argument, NULL, 'm' },
					      { "delete-branch", no_argument, NULL, 'D' },
					      { "head", required_argument, NULL, 'H' },
					      { NULL, 0, NULL, 0 } };
	struct runner_seen seen = RUNNER_SEEN_INIT;
	struct sl_ctx ctx = SL_CTX_INIT;
	struct sl_err err = SL_ERR_INIT;
	const char *message = NULL;
	char where[160], run[128];
	int c, rc, delete_branch = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "m:", opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(a->help);
		else if (c == 'm')
			message = optarg;
		else if (c == 'D' && !strcmp(a->name, "abandon"))
			delete_branch = 1;
		else if (c == 'H')
			seen.head = optarg;
		else if (c == 'D' || !cli_common_opt(cli, c, optarg))
			return cli_usage(a->name, "unknown option");
	}
	if (optind != argc - 1)
		return cli_usage(a->name, "name one run (its id, a unique prefix, its branch's "
				 "suffix or its work order)");
	if (a->needs_message && (!message || !*message))
		return cli_usage(a->name, "this needs a reason: -m TEXT");
	if (seen.head && (rc = head_arg(a->name, seen.head)) != CLI_OK)
		return rc;
	snprintf(where, sizeof(where), "--head named; nothing was done: read the run again "
		 "('sluice show %.80s')", argv[optind]);
	seen.where = where;
	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	/* the run as people name it (store_run_resolve); the full id from here on */
	if (store_run_resolve(ctx.st, argv[optind], run, sizeof(run), &err) != 0 ||
	    a->act(&ctx, run, message, delete_branch, seen.head ? &seen : NULL, &err) != 0)
		rc = cli_report(&err);
	else if (a->done_fmt)
		printf(a->done_fmt, run);
	runner_ctx_release(&ctx);
	return rc;
}

int cli_invalid_work_orders(struct sl_ctx *ctx, FILE *out, const char *header, json_t **json)
{
	struct queue_invalid *v = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0, i;

	if (json)
		*json = json_array();
	if (queue_invalid_list(ctx->st, &v, &n, &err) != 0) {
		cli_error("cannot list the invalid work orders: %s", err.msg);
		return -1;
	}
	if (out && n)
		fprintf(out, "%s%zu invalid work order%s, not run: fix %s (sluice check shows "
			"every problem)\n", header, n, n == 1 ? "" : "s", n == 1 ? "it" : "them");
	for (i = 0; i < n; i++) {
		if (out)
			fprintf(out, "  %s\n", cli_esc(v[i].message));
		if (json)
			json_array_append_new(*json, json_pack("{s:s, s:s}", "path", v[i].path,
							       "message", v[i].message));
	}
	queue_invalid_free(v, n);
	return (int)n;
}
