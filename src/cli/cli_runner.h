#ifndef SL_CLI_RUNNER_H
#define SL_CLI_RUNNER_H
/* Shared by the commands that work on runs. */
#include <jansson.h>
#include "cli/cli.h"
#include "runner/runner.h"
#include "store/runs.h"

/* Open the runner context for -C DIR; prints the error; CLI_OK or CLI_FAIL. */
int cli_ctx_open(struct cli *cli, struct runner_ctx *ctx);

/* A run as JSON (a new reference). */
json_t *cli_run_json(const struct store_run *r);

/* Print a JSON document to stdout with a final newline; CLI_OK. */
int cli_print_json(json_t *j);

/* "3m02s" since ms (or between two times when end_ms != 0). */
void cli_elapsed(char *out, size_t n, int64_t start_ms, int64_t end_ms);
#endif
