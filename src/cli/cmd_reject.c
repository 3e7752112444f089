/* sluice reject */
#include "cli/cli_runner.h"

static const char help[] =
"usage: sluice reject [-C DIR] RUN -m TEXT [--head SHA]\n"
	"\n"
	"The manual reviewer: reject a run that is awaiting_review. The run ends\n"
	"rejected and its work order failed; the reason is kept in review.json.\n"
	"\n"
	"  -m, --message TEXT   why (required)\n"
	"  --head SHA           only if the run's head commit is still SHA, the full id\n"
	"                       you read ('sluice show RUN'); else refused, nothing done\n";
static int act_reject(struct sl_ctx *ctx, const char *run, const char *message,
		      int delete_branch, const struct runner_seen *seen,
		      struct sl_err *err)
{
	return runner_reject_seen(ctx, run, message, seen, err);
}

int cmd_reject(struct cli *cli, int argc, char **argv)
{
	static const struct cli_run_action a = { "reject", help, 1, act_reject,
						  "rejected %s\n" };

	return cli_run_command(cli, argc, argv, &a);
}
