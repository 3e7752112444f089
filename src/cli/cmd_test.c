/*
 * Hidden commands for tests and benchmarks (fossil's test-* commands): not
 * listed by --help, not part of the contract. (The tick's worker,
 * `advance-run`, is an internal command of production: cmd_advance_run.c.)
 *
 *   sluice test-diff BASE HEAD PATCH FILES_JSON   worktree_diff_write(), as a run does
 */
#include "cli/cli.h"
#include "core/repo.h"
#include "worktree/worktree.h"

int cmd_test_diff(struct cli *cli, int argc, char **argv);
int cmd_test_diff(struct cli *cli, int argc, char **argv)
{
	struct worktree_file_changes fc = WORKTREE_FILE_CHANGES_INIT;
	struct sl_repo repo = SL_REPO_INIT;
	struct sl_err err = SL_ERR_INIT;
	int rc = CLI_OK;

	if (argc != 5)
		return cli_usage("test-diff", "expected BASE HEAD PATCH FILES_JSON (full commit ids)");
	if (sl_repo_find(&repo, cli->dir, &err) != 0 ||
	    worktree_diff_write(repo.root, argv[1], argv[2], argv[3], argv[4], &fc, &err) != 0)
		rc = cli_report(&err);
	else
		printf("%zu files changed\n", fc.n);
	worktree_file_changes_release(&fc);
	sl_repo_release(&repo);
	return rc;
}
