#ifndef SL_RUNNER_GATES_H
#define SL_RUNNER_GATES_H
/*
 * Gates (DESIGN.md section 6.4, docs/builders.md): each configured gate's
 * argv runs in the worktree, in config order, each in its own process group
 * with its own timeout and the builder's git environment (no hooks, no
 * reviewer token). Every gate runs even when an earlier one failed, so the
 * builder's next attempt and the reviewer see every failure at once.
 *
 * Output: <run_dir>/gates/<name>.log (stdout+stderr, bounded by
 * builder.log_max, rewritten at each run) and <run_dir>/gates.json:
 * [{name, argv, exit_code, passed, duration_ms, timed_out, log, error?}].
 */
#include <stdint.h>
#include "core/config.h"
#include "core/err.h"

/* How much of a gate's log (its end) is kept in `output`. */
#define RUNNER_GATE_TAIL ((size_t)16 << 10)

struct runner_gate_result {
	char *name;
	sl_strv argv;
	int exit_code;      /* 127 when the program could not be started */
	int passed;         /* exit 0 and not timed out */
	int timed_out;
	int64_t duration_ms;
	char *log;          /* "gates/<name>.log", relative to the run dir */
	char *output;       /* the log's last RUNNER_GATE_TAIL bytes */
	char *error;        /* why it could not start, or NULL */
};

struct runner_gate_results {
	struct runner_gate_result *v;
	size_t n;
	int all_passed;     /* 1 also when no gate is configured */
};

#define RUNNER_GATE_RESULTS_INIT { NULL, 0, 1 }

/*
 * Run every gate of cfg in wt. Returns 0 when all of them ran, whatever
 * their results (see out->all_passed); an error only when the artifacts
 * cannot be written. *out is the caller's: runner_gate_results_release().
 */
int runner_gates_run(const struct sl_config *cfg, const char *wt, const char *run_dir,
		     struct runner_gate_results *out, struct sl_err *err);

/*
 * Read <run_dir>/gates.json back, with each log's tail (for a later tick
 * that renders the retry prompt or the review request). SL_ENOTFOUND if
 * the gates never ran. *out is the caller's: runner_gate_results_release().
 */
int runner_gates_load(const char *run_dir, struct runner_gate_results *out, struct sl_err *err);

/*
 * The names of the failed gates, a NULL-terminated array of strings
 * borrowed from r (free() the array only). NULL on out-of-memory.
 */
const char **runner_gates_failed(const struct runner_gate_results *r);

/* The results as gates.json's array (a new reference, the caller's). */
struct json_t;
struct json_t *runner_gates_json(const struct runner_gate_results *r);

void runner_gate_results_release(struct runner_gate_results *r);

#endif
