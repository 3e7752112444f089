/*
 * sluice advance-run: the worker of a tick, an internal command (sluice(1),
 * INTERNAL COMMANDS). `sluice tick` starts one such process per run it moves
 * on (runner/tick.c, through core/proc.h's sl_proc_spawn()): a process of
 * its own, exec'd, because the tick's SQLite connection must not live on in
 * a forked child. It is not listed by `sluice --help`; people never need to
 * run it, but it answers --help.
 */
#include "cli/cli.h"
#include "core/log.h"
#include "reviewer/reviewer.h"
#include "runner/runner.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"usage: sluice [-C DIR] advance-run RUN [--stage=build|train] [--token-fd=N]\n"
	"\n"
	"Internal: the worker process of 'sluice tick'. Advance the run RUN by as\n"
	"many steps as it can take now (prepare, build, gates, review, merge), then\n"
	"exit. The tick starts one per run, up to --jobs at once; a run whose lock\n"
	"another process holds is left alone (exit 0). Its state changes go to the\n"
	"event log, where the tick reads them.\n"
	"\n"
	"options:\n"
	"  --stage=build|train  only the steps of that stage: train is an approved or\n"
	"                merging run's (the merge train), build every other; the\n"
	"                worker stops where the run steps into the other (the tick\n"
	"                starts one for it there; merge.jobs)\n"
	"  --token-fd=N  read the reviewer token (NAME=VALUE) from file descriptor N,\n"
	"                a pipe the tick fills, before anything else: the token is\n"
	"                never in a worker's environment or command line (not a\n"
	"                pipe: refused)\n"
	"  -C DIR        the repository (before the command name)\n"
	"  -h, --help    show this help\n"
	"\n"
	"exit status: 0 when the run was advanced or is busy elsewhere, 1 when it\n"
	"could not be (the message names the run), 2 on a usage error.\n";

/* The reviewer token from the tick, before anything else (reviewer.h). */
static int receive_token(const char *arg)
{
	struct sl_err err = SL_ERR_INIT;
	char *end;
	long fd = strtol(arg, &end, 10);

	if (*end || fd < 3 || fd > INT_MAX)
		return cli_usage("advance-run", "bad --token-fd '--token-fd=%s'", arg);
	if (reviewer_token_receive((int)fd, &err) != 0)
		return cli_report(&err);
	return CLI_OK;
}

int cmd_advance_run(struct cli *cli, int argc, char **argv)
{
	struct sl_ctx ctx = SL_CTX_INIT;
	struct sl_err err = SL_ERR_INIT;
	enum runner_stage stage = RUNNER_STAGE_ANY;
	int rc, i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return cli_help(usage_text);
	if (argc >= 3 && !strncmp(argv[argc - 1], "--token-fd=", 11)) {
		if ((rc = receive_token(argv[argc - 1] + 11)) != CLI_OK)
			return rc;
		argc--;
	}
	if (argc == 3 && !strcmp(argv[2], "--stage=build")) {
		stage = RUNNER_STAGE_BUILD;
		argc--;
	} else if (argc == 3 && !strcmp(argv[2], "--stage=train")) {
		stage = RUNNER_STAGE_TRAIN;
		argc--;
	}
	if (argc != 2)
		return cli_usage("advance-run", "expected RUN [--stage=build|train] [--token-fd=N]");
	if ((rc = runner_ctx_open(&ctx, cli->dir, &err)) == 0)
		rc = runner_advance(&ctx, argv[1], stage, &err);
	if (rc && rc != SL_ELOCKED)
		sl_log(SL_LOG_ERROR, "run %s: %s", argv[1], err.msg);
	runner_ctx_release(&ctx);
	return rc && rc != SL_ELOCKED ? CLI_FAIL : CLI_OK;
}
