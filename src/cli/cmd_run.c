/* sluice run WO-ID: run one work order now, in the foreground. */
#include "cli/cli_runner.h"

#include <getopt.h>
#include <stdio.h>

int cli_tick_run(struct cli *cli, const char *only_wo, int jobs, int max_runs);

static const char run_help[] =
	"usage: sluice run [-C DIR] [--json] [--again] WO-ID\n"
	"\n"
	"Run one work order now, in the foreground: the same pipeline as 'sluice tick'\n"
	"(worktree, builder, gates, review, merge) for just this work order. It must be\n"
	"ready: its dependencies merged and no overlapping work order running (see\n"
	"'sluice queue --explain'). Runs of the same work order already under way are\n"
	"carried on instead of starting a new one.\n"
	"\n"
	"  --again   run a failed work order again (its last run failed, was rejected\n"
	"            or abandoned) without editing its file: a new run of the same\n"
	"            revision. Refused for a work order that is running, done, or not\n"
	"            failed (see 'sluice queue')\n";

/* --again: claim a new run of the failed work order, which the run below carries on. */
static int claim_again(struct cli *cli, const char *wo)
{
	struct sl_ctx ctx = SL_CTX_INIT;
	struct sl_err err = SL_ERR_INIT;
	char run[64];
	int rc;

	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	if (runner_run_again(&ctx, wo, run, sizeof(run), &err) != 0)
		rc = cli_report(&err);
	else if (!cli->json)
		printf("work order %s: run %s, again\n", cli_esc(wo), run);
	runner_ctx_release(&ctx);
	return rc;
}

int cmd_run(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS,
					      { "again", no_argument, NULL, 'a' },
					      { NULL, 0, NULL, 0 } };
	int c, again = 0, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(run_help);
		if (c == 'a')
			again = 1;
		else if (!cli_common_opt(cli, c, optarg))
			return cli_usage("run", "unknown option");
	}
	if (optind != argc - 1)
		return cli_usage("run", "name one work order: sluice run WO-ID");
	if (again && (rc = claim_again(cli, argv[optind])) != CLI_OK)
		return rc;
	return cli_tick_run(cli, argv[optind], 1, 1);
}
