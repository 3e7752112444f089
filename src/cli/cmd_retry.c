/* sluice retry */
#include "cli/cli_runner.h"

#include <string.h>

static const char help[] =
"usage: sluice retry [-C DIR] RUN [--head SHA] [--same-base]\n"
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
	"  failed, rejected the retry rules start over (as many attempts as a new\n"
	"                   run, no sticky override) on the target as it is now: the\n"
	"                   worktree and branch go to the target's tip. If you changed\n"
	"                   the worktree or branch since the run stopped, your work\n"
	"                   is committed and built on instead, on the old base.\n"
	"                   Refused when the work order changed since or has another\n"
	"                   run: the newer work wins\n"
	"  reviewing, approved  try the review or the merge again at the next tick\n"
	"\n"
	"  --head SHA           only if the run's head commit is still SHA, the full id\n"
	"                       you read ('sluice show RUN'); else refused, nothing done\n"
	"  --same-base          a failed or rejected run: keep its base and worktree\n"
	"                       (with your changes) and build on them\n";

static int act_retry(struct sl_ctx *ctx, const char *run, const char *message,
		     int delete_branch, const struct runner_seen *seen,
		     struct sl_err *err)
{
	char next[64];

	return runner_retry_seen(ctx, run, next, sizeof(next), seen, err);
}

static int act_retry_same_base(struct sl_ctx *ctx, const char *run, const char *message,
			       int delete_branch, const struct runner_seen *seen,
			       struct sl_err *err)
{
	char next[64];

	return runner_retry_flags(ctx, run, RUNNER_RETRY_SAME_BASE, next, sizeof(next), seen,
				  err);
}

int cmd_retry(struct cli *cli, int argc, char **argv)
{
	static const struct cli_run_action a = { "retry", help, 0, act_retry,
						  "%s: retried; the next 'sluice tick' carries it on\n" },
					   same = { "retry", help, 0, act_retry_same_base,
						    "%s: retried on its base; the next 'sluice tick' "
						    "carries it on\n" };
	int i, k, same_base = 0;

	/* --same-base is retry's own: taken out before the options all run commands share */
	for (i = k = 0; i < argc; i++) {
		if (i && !strcmp(argv[i], "--")) {
			while (i < argc)
				argv[k++] = argv[i++];
			break;
		}
		if (i && !strcmp(argv[i], "--same-base"))
			same_base = 1;
		else
			argv[k++] = argv[i];
	}
	argv[k] = NULL;
	return cli_run_command(cli, k, argv, same_base ? &same : &a);
}
