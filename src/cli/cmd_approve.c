/* sluice approve */
#include "cli/cli_runner.h"

#include <getopt.h>
#include <string.h>

static const char help[] =
"usage: sluice approve [-C DIR] RUN [-m TEXT]\n"
	"\n"
	"The manual reviewer (reviewer.mode: manual, the default): approve a run that is\n"
	"awaiting_review. The approval binds to the tree the run has now; the next\n"
	"'sluice tick' merges it. Read the package first: .system/runs/RUN/\n"
	"review-request.json and diff.patch, or 'sluice show RUN'.\n"
	"\n"
	"  -m, --message TEXT   a comment kept in review.json\n";

int cmd_approve(struct cli *cli, int argc, char **argv)
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
			return cli_usage("approve", "unknown option");
	}
	if (optind != argc - 1)
		return cli_usage("approve", "name one run (its id or a unique prefix)");

	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	if (runner_approve(&ctx, argv[optind], message, &err) != 0)
		rc = cli_report(&err);
	else
		printf("approved %s; the next 'sluice tick' merges it\n", argv[optind]);
	runner_ctx_release(&ctx);
	(void)next;
	(void)message;
	(void)delete_branch;
	return rc;
}
