/*
 * Hidden commands for tests and benchmarks (fossil's test-* commands): not
 * listed by --help, not part of the contract.
 *
 *   sluice test-diff BASE HEAD PATCH FILES_JSON   worktree_diff_write(), as a run does
 *   sluice advance-run RUN [--token-fd=N]          a tick's worker process: advance one run
 *                                                  (the reviewer token read from fd N)
 */
#include "cli/cli.h"
#include "core/repo.h"
#include "worktree/worktree.h"
#include "runner/runner.h"
#include "core/log.h"
#include "reviewer/reviewer.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

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

int cmd_advance_run(struct cli *cli, int argc, char **argv);
int cmd_advance_run(struct cli *cli, int argc, char **argv)
{
	struct sl_ctx ctx = SL_CTX_INIT;
	struct sl_err err = SL_ERR_INIT;
	char *end;
	long fd;
	int rc;

	if (argc == 3 && !strncmp(argv[2], "--token-fd=", 11)) {
		/* the reviewer token from the tick, before anything else (reviewer.h) */
		fd = strtol(argv[2] + 11, &end, 10);
		if (*end || fd < 3 || fd > INT_MAX)
			return cli_usage("advance-run", "bad --token-fd '%s'", argv[2]);
		if (reviewer_token_receive((int)fd, &err) != 0)
			return cli_report(&err);
		argc--;
	}
	if (argc != 2)
		return cli_usage("advance-run", "expected RUN [--token-fd=N]");
	if ((rc = runner_ctx_open(&ctx, cli->dir, &err)) == 0)
		rc = runner_advance(&ctx, argv[1], &err);
	if (rc && rc != SL_ELOCKED)
		sl_log(SL_LOG_ERROR, "run %s: %s", argv[1], err.msg);
	runner_ctx_release(&ctx);
	return rc && rc != SL_ELOCKED ? CLI_FAIL : CLI_OK;
}
