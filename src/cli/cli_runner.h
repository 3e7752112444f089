#ifndef SL_CLI_RUNNER_H
#define SL_CLI_RUNNER_H
/* Shared by the commands that work on runs. */
#include <jansson.h>
#include <stdio.h>
#include "cli/cli.h"
#include "runner/runner.h"
#include "store/store.h"

/* Open the runner context for -C DIR; prints the error; CLI_OK or CLI_FAIL. */
int cli_ctx_open(struct cli *cli, struct sl_ctx *ctx);

/* Print a JSON document to stdout with a final newline; CLI_OK. */
int cli_print_json(json_t *j);

/*
 * The commands that act on one run (approve, reject, retry, abandon): parse
 * RUN, -m/--message, --delete-branch, --head SHA, -C, --help; open the
 * context; call act(). `needs_message`: -m is required. `seen` is NULL
 * unless --head named the head the person read (the command is refused
 * when the run's head is another). Returns the exit code.
 */
struct cli_run_action {
	const char *name;       /* the command */
	const char *help;       /* its --help text */
	int needs_message;
	int (*act)(struct sl_ctx *ctx, const char *run, const char *message,
		   int delete_branch, const struct runner_seen *seen, struct sl_err *err);
	const char *done_fmt;   /* printed on success with the run name (NULL: act prints) */
};
int cli_run_command(struct cli *cli, int argc, char **argv, const struct cli_run_action *a);

/*
 * The invalid work orders (queue_invalid_list()), loud where cron users look:
 * with `out`, a header naming how many and what to do, then one line each
 * ("  path:line:col: what; what to do"); always *json (when json is not
 * NULL): an array of {path, message}. Returns how many, or -1 (printed).
 */
int cli_invalid_work_orders(struct sl_ctx *ctx, FILE *out, const char *header, json_t **json);

/* "3m02s" since ms (or between two times when end_ms != 0). */
void cli_elapsed(char *out, size_t n, int64_t start_ms, int64_t end_ms);
/*
 * One watch gate run by `sluice watch` or a tick (watch.every): its report
 * printed, or appended to gates (--json); *red when it is red. 0, or the
 * error it could not run for (said on stderr; SL_ELOCKED: another watch runs).
 */
struct sl_gate;
int cli_watch_one(struct cli *cli, struct sl_ctx *ctx, const struct sl_gate *g, json_t *gates,
		  int *red);
/* The notifications due, delivered now (a failure is a warning on stderr). */
void cli_watch_notify(struct sl_ctx *ctx);

#endif
