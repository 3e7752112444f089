/*
 * Commands whose module has not landed yet. Each is a weak symbol: the real
 * cmd_<name>() in src/cli/cmd_<name>.c replaces it at link time. What is
 * left here says so plainly and fails; the issue notes list them.
 */
#include "cli/cli.h"

#include <string.h>

#define PENDING(fn, name)                                                                          \
	__attribute__((weak)) int fn(struct cli *cli, int argc, char **argv)                       \
	{                                                                                          \
		if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {         \
			printf("usage: sluice %s (not available in this build yet)\n", name);     \
			return CLI_OK;                                                             \
		}                                                                                  \
		cli_error("'%s' is not available in this build of sluice yet", name);             \
		return CLI_FAIL;                                                                   \
	}

PENDING(cmd_init, "init")
PENDING(cmd_check, "check")
PENDING(cmd_queue, "queue")
PENDING(cmd_tick, "tick")
PENDING(cmd_run, "run")
PENDING(cmd_runs, "runs")
PENDING(cmd_show, "show")
PENDING(cmd_status, "status")
PENDING(cmd_log, "log")
PENDING(cmd_approve, "approve")
PENDING(cmd_reject, "reject")
PENDING(cmd_retry, "retry")
PENDING(cmd_abandon, "abandon")
PENDING(cmd_audit, "audit")
PENDING(cmd_gc, "gc")
PENDING(cmd_merge_preview, "merge-preview")
PENDING(cmd_report, "report")
PENDING(cmd_worktree, "worktree")
