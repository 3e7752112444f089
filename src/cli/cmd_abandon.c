/* sluice abandon */
#include "cli/cli_runner.h"

#include <getopt.h>
#include <string.h>

static const char help[] =
"usage: sluice abandon [-C DIR] RUN [--delete-branch]\n"
	"\n"
	"Give a run up: its work order becomes failed. Whatever is uncommitted in its\n"
	"worktree is committed to the run branch first and diff.patch is written, so\n"
	"nothing is lost; then the worktree is removed. The branch is kept unless\n"
	"--delete-branch.\n";

int cmd_abandon(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS,
					      { "message", required_argument, NULL, 'm' },
					      { "delete-branch", no_argument, NULL, 'D' },
					      { NULL, 0, NULL, 0 } };
	struct runner_ctx ctx = RUNNER_CTX_INIT;
	struct sl_err err = SL_ERR_INIT;
	const char *message = NULL;
	int c, rc, delete_branch = 0;
	char next[64] = "";

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "m:", opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(help);
		else if (c == 'm')
			message = optarg;
		else if (c == 'D')
			delete_branch = 1;
		else if (!cli_common_opt(cli, c, optarg))
			return cli_usage("abandon", "unknown option");
	}
	if (optind != argc - 1)
		return cli_usage("abandon", "name one run (its id or a unique prefix)");

	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	if (runner_abandon(&ctx, argv[optind], delete_branch, &err) != 0)
		rc = cli_report(&err);
	else
		printf("abandoned %s\n", argv[optind]);
	runner_ctx_release(&ctx);
	(void)next;
	(void)message;
	(void)delete_branch;
	return rc;
}
