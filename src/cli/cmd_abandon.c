/* sluice abandon */
#include "cli/cli_runner.h"

static const char help[] =
"usage: sluice abandon [-C DIR] RUN [--head SHA] [--delete-branch]\n"
	"\n"
	"Give a run up: its work order becomes failed. Whatever is uncommitted in its\n"
	"worktree is committed to the run branch first and diff.patch is written, so\n"
	"nothing is lost; then the worktree is removed. The branch is kept unless\n"
	"--delete-branch. With an executor (Slurm, Kubernetes: docs/scale-out.md) the\n"
	"run's jobs are cancelled first; a tick waiting for one lets go of the run\n"
	"within a poll, and abandon waits for it.\n"
	"\n"
	"  --head SHA           only if the run's head commit is still SHA, the full id\n"
	"                       you read ('sluice show RUN'); else refused, nothing done\n";
static int act_abandon(struct sl_ctx *ctx, const char *run, const char *message,
		       int delete_branch, const struct runner_seen *seen,
		       struct sl_err *err)
{
	return runner_abandon_seen(ctx, run, delete_branch, seen, err);
}

int cmd_abandon(struct cli *cli, int argc, char **argv)
{
	static const struct cli_run_action a = { "abandon", help, 0, act_abandon,
						  "abandoned %s\n" };

	return cli_run_command(cli, argc, argv, &a);
}
