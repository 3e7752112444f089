/* sluice run WO-ID: run one work order now, in the foreground. */
#include "cli/cli_runner.h"

#include <getopt.h>

int cli_tick_run(struct cli *cli, const char *only_wo, int jobs, int max_runs);

static const char run_help[] =
	"usage: sluice run [-C DIR] [--json] WO-ID\n"
	"\n"
	"Run one work order now, in the foreground: the same pipeline as 'sluice tick'\n"
	"(worktree, builder, gates, review, merge) for just this work order. It must be\n"
	"ready: its dependencies merged and no overlapping work order running (see\n"
	"'sluice queue --explain'). Runs of the same work order already under way are\n"
	"carried on instead of starting a new one.\n";

int cmd_run(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(run_help);
		if (!cli_common_opt(cli, c, optarg))
			return cli_usage("run", "unknown option");
	}
	if (optind != argc - 1)
		return cli_usage("run", "name one work order: sluice run WO-ID");
	return cli_tick_run(cli, argv[optind], 1, 1);
}
