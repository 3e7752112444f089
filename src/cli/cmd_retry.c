/* sluice retry */
#include "cli/cli_runner.h"

static const char help[] =
"usage: sluice retry [-C DIR] RUN [--head SHA]\n"
	"\n"
	"Try a run again after a person looked at it:\n"
	"  merge_conflict   after you resolved the conflict in the run's worktree, as\n"
	"                   'sluice show RUN' says: cd .system/runs/RUN/worktree &&\n"
	"                   git merge <target>; fix the conflicted files; git commit\n"
	"                   -a --no-edit (or leave the merge uncommitted). Refused\n"
	"                   while a conflicted file holds a conflict marker (its file\n"
	"                   and line are named). The resolution is recorded as an\n"
	"                   attempt of a person, goes through the run's gates and\n"
	"                   review, then is merged by a tick; if it fails, the run\n"
	"                   comes back to you\n"
	"  failed, rejected a new attempt of the builder in the same worktree; what\n"
	"                   you changed there is committed first, and the retry\n"
	"                   rules start over (no sticky override resets your work).\n"
	"                   Refused when the work order changed since or has another\n"
	"                   run: the newer work wins\n"
	"  reviewing, approved  try the review or the merge again at the next tick\n"
	"\n"
	"  --head SHA           only if the run's head commit is still SHA, the full id\n"
	"                       you read ('sluice show RUN'); else refused, nothing done\n";
static int act_retry(struct sl_ctx *ctx, const char *run, const char *message,
		     int delete_branch, const struct runner_seen *seen,
		     struct sl_err *err)
{
	char next[64];

	return runner_retry_seen(ctx, run, next, sizeof(next), seen, err);
}

int cmd_retry(struct cli *cli, int argc, char **argv)
{
	static const struct cli_run_action a = { "retry", help, 0, act_retry,
						  "%s: retried; the next 'sluice tick' carries it on\n" };

	return cli_run_command(cli, argc, argv, &a);
}
