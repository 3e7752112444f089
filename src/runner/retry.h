#ifndef SL_RUNNER_RETRY_H
#define SL_RUNNER_RETRY_H
/*
 * Retry rules (seeds/002, DESIGN.md section 6.5, docs/builders.md).
 *
 * A failed attempt is fatal unless cfg->retry says otherwise. Failures are
 * named like gates: every failed gate by its name, plus two pseudo-gates:
 * "builder" (the builder exited non-zero or timed out) and "review" (the
 * reviewer asked for changes). Each rule has one condition:
 *   attempt: N      activates when attempt N starts (and stays: sticky)
 *   not: gate.X     activates for the next attempt whenever X failed
 *   exit: N         when attempt N (or later) fails, stop: fatal
 * and overrides (builder argv, prompt template, worktree: reset) that, once
 * activated, stay for every later attempt until a rule activated later (or,
 * at the same attempt, listed later) overrides the same keyword.
 *
 * The active overrides are the state carried from attempt to attempt: one
 * rule index per keyword. runner_retry_save/load keep it in the store
 * (table run_retry) so that the next tick (another process) sees it; the
 * run folder, which builders and gates can write, only gets a copy for
 * people (retry.json) that sluice never reads back.
 */
#include "core/config.h"
#include "core/err.h"

struct store;

struct runner_retry_state {
	int builder_rule;  /* index into cfg->retry of the active builder override, or -1 */
	int prompt_rule;   /* ... prompt override, or -1 */
	int reset_rule;    /* ... worktree: reset, or -1 */
};

#define RUNNER_RETRY_STATE_INIT { -1, -1, -1 }

/* The overrides a state means, borrowed from cfg. */
struct runner_retry_overrides {
	const char *const *builder; /* NULL: the configured builder */
	const char *prompt;         /* NULL: the automatic retry context */
	int worktree_reset;         /* 1: reset the worktree to the base before building */
};

struct runner_retry_decision {
	int retry;                        /* 1: run next_attempt; 0: fatal */
	int next_attempt;
	struct runner_retry_state state;  /* the overrides active for next_attempt */
	struct runner_retry_overrides overrides;
	char reason[512];                 /* "gate 'test' failed on attempt 3; retry exit at 3" */
};

/*
 * Decide what follows a failed attempt. prev: the state the failed attempt
 * ran with (RUNNER_RETRY_STATE_INIT for attempt 1). failed: the names of the
 * failed gates and pseudo-gates (NULL-terminated; may be NULL); a
 * builder_exit other than 0 counts as "builder" failing. prev may point at
 * d->state. d->reason is a whole sentence ("gate 'test' failed on attempt
 * 3; retry exit at 3"). Returns 0 (the rules were validated at load).
 */
int runner_retry_decide(const struct sl_config *cfg, const struct runner_retry_state *prev,
			int attempt_failed, const char *const *failed, int builder_exit,
			struct runner_retry_decision *d, struct sl_err *err);

/* The overrides of a state (borrowed from cfg). */
void runner_retry_overrides(const struct sl_config *cfg, const struct runner_retry_state *st,
			    struct runner_retry_overrides *out);

/*
 * Keep/read the state of run `run_id` in the store; a run with none loads
 * as INIT. save also writes <run_dir>/retry.json (run_dir may be NULL), a
 * copy for people: a failure to write it is not an error.
 */
int runner_retry_save(struct store *st, const char *run_id, const char *run_dir,
		      const struct runner_retry_state *rs, struct sl_err *err);
int runner_retry_load(struct store *st, const char *run_id, struct runner_retry_state *rs,
		      struct sl_err *err);

/* Forget the state: the next attempt starts the rules over (a person's retry). */
int runner_retry_forget(struct store *st, const char *run_id, const char *run_dir,
			struct sl_err *err);

#endif
