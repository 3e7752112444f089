/* sluice approve */
#include "cli/cli_runner.h"

#include <stdio.h>
#include <string.h>

static const char help[] =
"usage: sluice approve [-C DIR] RUN [-m TEXT] [--head SHA]\n"
	"\n"
	"The manual reviewer (reviewer.mode: manual, the default): approve a run that is\n"
	"awaiting_review. The approval binds to the tree the run has now; the next\n"
	"'sluice tick' merges it (a report run, worktree read-only or none, ends\n"
	"reported at once: nothing is merged). Read the package first: .system/runs/RUN/\n"
	"review-request.json and diff.patch, or 'sluice show RUN'. When either file\n"
	"is not what sluice wrote (rewritten after the review package was made),\n"
	"sluice writes it again from git and approves nothing: read it again.\n"
	"\n"
	"  -m, --message TEXT   a comment kept in review.json\n"
	"  --head SHA           only if the run's head commit is still SHA, the full id\n"
	"                       you read ('sluice show RUN'); else refused, nothing done\n";
static int act_approve(struct sl_ctx *ctx, const char *run, const char *message,
		       int delete_branch, const struct runner_seen *seen,
		       struct sl_err *err)
{
	struct store_run r;
	int error, reported;

	(void)delete_branch;
	if ((error = runner_approve_seen(ctx, run, message, seen, err)) != 0)
		return error;
	memset(&r, 0, sizeof(r));
	if (store_run_get(ctx->st, run, &r, err) == 0) {
		reported = r.state == RUN_REPORTED;
		store_run_release(&r);
	} else {
		reported = 0;
	}
	sl_err_clear(err);
	if (reported)
		printf("approved %s: a report run (worktree read-only or none), now reported; "
		       "nothing is merged (report.md)\n", run);
	else
		printf("approved %s; the next 'sluice tick' merges it\n", run);
	return 0;
}

int cmd_approve(struct cli *cli, int argc, char **argv)
{
	static const struct cli_run_action a = { "approve", help, 0, act_approve, NULL };

	return cli_run_command(cli, argc, argv, &a);
}
