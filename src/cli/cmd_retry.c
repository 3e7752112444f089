/* sluice retry */
#include "cli/cli_runner.h"

#include <getopt.h>
#include <string.h>

static const char help[] =
"usage: sluice retry [-C DIR] RUN\n"
	"\n"
	"Try a run again after a person looked at it:\n"
	"  merge_conflict   after you resolved the conflict in the run's worktree\n"
	"                   (cd .system/runs/RUN/worktree && git merge <target>, fix,\n"
	"                   commit): the resolution is recorded, reviewed again, then\n"
	"                   merged by the next tick\n"
	"  failed, rejected a new attempt of the builder (in the same worktree)\n"
	"  reviewing, approved  try the review or the merge again at the next tick\n";

int cmd_retry(struct cli *cli, int argc, char **argv)
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
			return cli_usage("retry", "unknown option");
	}
	if (optind != argc - 1)
		return cli_usage("retry", "name one run (its id or a unique prefix)");

	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	if (runner_retry(&ctx, argv[optind], next, sizeof(next), &err) != 0)
		rc = cli_report(&err);
	else
		printf("run %s is %s; the next 'sluice tick' carries it on\n", argv[optind], next);
	runner_ctx_release(&ctx);
	(void)next;
	(void)message;
	(void)delete_branch;
	return rc;
}
