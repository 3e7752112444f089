/* sluice abandon */
#include "cli/cli_runner.h"

static const char help[] =
"usage: sluice abandon [-C DIR] RUN [--delete-branch]\n"
	"\n"
	"Give a run up: its work order becomes failed. Whatever is uncommitted in its\n"
	"worktree is committed to the run branch first and diff.patch is written, so\n"
	"nothing is lost; then the worktree is removed. The branch is kept unless\n"
	"--delete-branch. With an executor (Slurm, Kubernetes: docs/scale-out.md) the\n"
	"run's jobs are cancelled first; a tick waiting for one lets go of the run\n"
	"within a poll, and abandon waits for it.\n";

static int act_abandon(struct sl_ctx *ctx, const char *run, const char *message,
		       int delete_branch, struct sl_err *err)
{
	return runner_abandon(ctx, run, delete_branch, err);
}

int cmd_abandon(struct cli *cli, int argc, char **argv)
{
	static const struct cli_run_action a = { "abandon", help, 0, act_abandon,
						  "abandoned %s\n" };

	return cli_run_command(cli, argc, argv, &a);
}
