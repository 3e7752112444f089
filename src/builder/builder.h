#ifndef SL_BUILDER_H
#define SL_BUILDER_H
/*
 * The builder process (docs/builders.md, The builder contract): the
 * configured argv (builder.command, a preset, or a retry override) run in
 * the worktree, in its own process group, with a timeout, the SLUICE_*
 * environment and a bounded log appended to <run_dir>/builder.log.
 */
#include "core/config.h"
#include "core/err.h"
#include "core/proc.h"
#include "store/store.h"
#include "executor/executor.h"

/*
 * The file in a run's folder naming the builder's or a gate's process group
 * while it runs: reconciliation ends that group when its sluice died.
 */
#define BUILD_CHILD_OWNER_FILE "child.owner"

struct build_opts {
	const struct sl_config *cfg;
	const char *run_id;
	const char *work_order_id;
	const char *run_dir;       /* absolute: .system/runs/<id> */
	const char *worktree;      /* absolute; the builder's cwd ($SLUICE_WORKTREE) */
	const char *worktree_mode; /* $SLUICE_WORKTREE_MODE; NULL: read-write */
	const char *prompt_file;   /* absolute: <run_dir>/attempts/<n>/prompt.md */
	enum run_mode mode;        /* build (0) or resolve ($SLUICE_MODE) */
	int attempt;               /* 1, 2, ... ($SLUICE_ATTEMPT) */
	const char *const *argv_override; /* a retry rule's builder argv, or NULL */
	const char *agent;         /* a retry rule's agent (builders: or preset), or NULL:
	                              builder.agent, else builder.command/preset */
	const char *session;       /* "new" or "keep" ($SLUICE_SESSION); NULL: "new" */
	int64_t kill_grace_ms;     /* SIGTERM -> SIGKILL; 0: 2 s */
	int64_t timeout_cap_ms;    /* > 0: the attempt ends after this at the latest (the
	                              run's budget.minutes left, docs/budgets.md) */
	const char *budget_usd;    /* $SLUICE_BUDGET_USD: the run's dollars left ("2.5000";
	                              docs/budgets.md), or NULL: no limit (set empty) */
	/*
	 * Called each time the builder, running here, writes $SLUICE_USAGE_FILE
	 * (the watch() of core/proc.h): nonzero stops it (res->stopped). NULL:
	 * not watched. Not for a job on Slurm or Kubernetes.
	 */
	int (*usage_watch)(void *arg, char *why, size_t n);
	void *usage_watch_arg;
	/*
	 * executor.kind slurm or kubernetes (executor/executor.h): the run's job, or
	 * NULL: the builder runs here. job_out says how the job ended (lost,
	 * cancelled); res then describes the builder inside it.
	 */
	const struct exec_run *job;
	struct exec_outcome *job_out;
	const char *branch;        /* the job's worktree is on it */
};

#define BUILD_OPTS_INIT { 0 }

/* 1 when the builder failed: an exit code other than 0, its timeout, or stopped by usage_watch. */
static inline int build_failed(const struct sl_proc_result *res)
{
	return res->exit_code || res->timed_out || res->stopped;
}

/*
 * The argv to run: the override, else cfg->builder.command, else the
 * preset's. *out is the caller's: sl_strv_free(). SL_EINVALID when no
 * builder is configured.
 */
/*
 * The gates as shell commands, one a line ($SLUICE_GATE_COMMANDS): `sh -c S`
 * is S, any other argv its words quoted for a POSIX shell. NULL: no memory.
 */
char *build_gate_commands(const struct sl_config *cfg);

int build_argv(sl_strv *out, const struct sl_config *cfg, const char *const *argv_override,
			struct sl_err *err);

/*
 * The same for an agent name (a name of `builders:` or a preset; NULL:
 * builder.agent, else builder.command or builder.preset). SL_EINVALID for
 * an unknown name.
 */
int build_argv_agent(sl_strv *out, const struct sl_config *cfg, const char *const *argv_override,
		     const char *agent, struct sl_err *err);

/*
 * Which agent an attempt runs, for attempts.agent, `sluice show` and the
 * event log: the retry rule's agent, "retry.builder" for a rule's builder
 * argv, builder.agent, the preset, or "builder.command". resumes: 1 when
 * it can resume its own session (a preset whose CLI can, or a command of
 * the user's, which $SLUICE_SESSION tells), 0 for a preset that cannot.
 */
struct build_agent {
	const char *name;     /* borrowed from cfg, or static text */
	int resumes;
};
void build_agent_of(const struct sl_config *cfg, const char *const *argv_override,
		    const char *agent, struct build_agent *out);

/*
 * Run the builder to completion. A header line per attempt goes into
 * builder.log before its output, and a footer line with how it ended.
 * Returns 0 when it ran (see res->exit_code, res->timed_out); SL_ENOTFOUND
 * when the program does not exist, SL_EINVALID when nothing is configured.
 */
int build_run(const struct build_opts *o, struct sl_proc_result *res,
		       struct sl_err *err);

/*
 * Gates (docs/builders.md, Gates): each configured gate's
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

/* How much of a gate's log (its end) is kept in `output`. */
#define BUILD_GATE_TAIL ((size_t)16 << 10)

/* The pseudo-gate of an attempt whose builder changed nothing (beside "builder"). */
#define BUILD_NO_CHANGE "no-change"
/* The pseudo-gate of a builder or gates job the engine lost (`not: gate.job`, executor/executor.h). */
#define BUILD_JOB "job"
/* The pseudo-gate of a read-only attempt whose builder wrote (`not: gate.no_write`). */
#define BUILD_NO_WRITE "no_write"

struct build_gate_result {
	char *name;
	sl_strv argv;
	int exit_code;      /* 127 when the program could not be started */
	int passed;         /* exit 0 and not timed out */
	int timed_out;
	int64_t duration_ms;
	char *log;          /* "gates/<name>.log", relative to the run dir */
	char *output;       /* the log's last BUILD_GATE_TAIL bytes */
	char *error;        /* why it could not start, or NULL */
	char *reused;       /* not run: why its green stands ("green on tree ... already"), or NULL */
};

struct build_gate_results {
	struct build_gate_result *v;
	size_t n;
	int all_passed;     /* 1 also when no gate is configured */
};

#define BUILD_GATE_RESULTS_INIT { NULL, 0, 1 }

/*
 * Run every gate of cfg in wt. Returns 0 when all of them ran, whatever
 * their results (see out->all_passed); an error only when the artifacts
 * cannot be written. *out is the caller's: build_gate_results_release().
 */
int build_gates_run(const struct sl_config *cfg, const char *wt, const char *run_dir,
		     struct build_gate_results *out, struct sl_err *err);
/*
 * The same with the logs and gates.json under <run_dir>/<sub>/ (the merge
 * train's "train"); the gates still get SLUICE_RUN_DIR=<run_dir>, and a
 * killed sluice's gate processes are found through the run folder as ever.
 */
int build_gates_run_sub(const struct sl_config *cfg, const char *wt, const char *run_dir,
			const char *sub, struct build_gate_results *out, struct sl_err *err);

/*
 * The same as a job (executor.kind slurm or kubernetes, executor/executor.h): the
 * same results and artifacts, the gates' leftovers put into wt unless
 * job->purpose is "train". job_out->lost or ->cancelled: no gate result
 * (out->n 0, all_passed 0), job_out->why says why.
 */
int build_gates_run_job(const struct sl_config *cfg, const char *wt, const char *run_dir,
			const char *sub, const char *branch, const struct exec_run *job,
			struct exec_outcome *job_out, struct build_gate_results *out,
			struct sl_err *err);

/*
 * Read <run_dir>/gates.json back, with each log's tail (for a later tick
 * that renders the retry prompt or the review request). SL_ENOTFOUND if
 * the gates never ran. *out is the caller's: build_gate_results_release().
 */
int build_gates_load(const char *run_dir, struct build_gate_results *out, struct sl_err *err);

/*
 * The names of the failed gates, a NULL-terminated array of strings
 * borrowed from r (free() the array only). NULL on out-of-memory.
 */
const char **build_gates_failed(const struct build_gate_results *r);

/*
 * Keep attempt `attempt`'s gate output: each result's log (gates/<name>.log,
 * rewritten by the next attempt) is copied to attempts/<attempt>/gates/
 * <name>.log under run_dir (a new file, never written through a link), and
 * r->v[i].log then names the copy, so build_gates_json(r) is that attempt's
 * record. A result whose log is missing keeps its name. Returns 0, or the
 * first error (the copies before it are made).
 */
int build_gates_keep_attempt(const char *run_dir, int attempt, struct build_gate_results *r,
			     struct sl_err *err);

/* The results as gates.json's array (a new reference, the caller's). */
struct json_t;
struct json_t *build_gates_json(const struct build_gate_results *r);

void build_gate_results_release(struct build_gate_results *r);

/*
 * The builder's prompt (docs/builders.md, The prompt), written
 * to <run_dir>/attempts/<n>/prompt.md and named by $SLUICE_PROMPT_FILE.
 *
 * build mode: a short preamble (what the builder must do) and the whole
 * work order file, byte for byte. On a retry (attempt > 1) a retry section
 * follows: the attempt number, the error, the failed gates' output (tails),
 * the reviewer's comments and the previous diff, each bounded. A retry rule's
 * `prompt` template replaces that retry section (not the work order: every
 * attempt is a new process with no memory of the previous one).
 *
 * resolve mode: the seed's conflict-resolution prompt filled from the
 * conflict context (conflict.json: currentRun, conflictingRun,
 * conflictFiles, gitConflictOutput) and the instructions for markers.
 *
 * Template variables: {work_order.<field>} (front matter), {error}, {diff},
 * {attempt}, {review.comments}, {gate.<name>.output}, {gate.<name>.exit}.
 */
#include "core/buf.h"

/* Bounds of what goes into a prompt. */
#define BUILD_PROMPT_DIFF_MAX ((size_t)64 << 10)
#define BUILD_PROMPT_GATE_MAX ((size_t)8 << 10)
#define BUILD_PROMPT_TEXT_MAX ((size_t)16 << 10)
#define BUILD_PROMPT_MAX ((size_t)4 << 20)

struct json_t;

struct build_prompt_ctx {
	enum run_mode mode;            /* build (0) or resolve */
	const char *work_order_text;   /* the work order file's exact text */
	struct json_t *work_order;     /* its front matter fields (object), borrowed; may be NULL */
	int attempt;                   /* 1, 2, ... */
	/* retry context, for attempt > 1 (each may be NULL) */
	const char *error;             /* why the previous attempt failed */
	const char *diff;              /* the previous attempt's diff (base..head) */
	const char *review_comments;   /* the reviewer's comments */
	const struct build_gate_results *gates; /* the previous attempt's gates */
	const char *prompt_override;   /* a retry rule's template, or NULL */
	/* resolve mode */
	struct json_t *conflict;       /* the conflict context (object), borrowed */
};

#define BUILD_PROMPT_CTX_INIT { 0 }

/* Render the prompt into out (bounded at BUILD_PROMPT_MAX unless out's max is set). */
int build_prompt_render(struct sl_buf *out, const struct build_prompt_ctx *c, struct sl_err *err);

/*
 * Render one template with the prompt variables of c (a retry rule's
 * `with:` input): an unknown variable is SL_EINVALID naming it.
 */
int build_prompt_render_template(struct sl_buf *out, const struct build_prompt_ctx *c,
				 const char *tmpl, struct sl_err *err);

/*
 * Render and write <run_dir>/attempts/<attempt>/prompt.md (creating the
 * folders). *path_out (may be NULL) gets the file's path, the caller's
 * (free()).
 */
int build_prompt_write(const char *run_dir, const struct build_prompt_ctx *c, char **path_out,
			struct sl_err *err);

/*
 * Retry rules (seeds/002, docs/builders.md, Retry rules).
 *
 * A failed attempt is fatal unless cfg->retry says otherwise. Failures are
 * named like gates: every failed gate by its name, plus two pseudo-gates:
 * "builder" (the builder exited non-zero or timed out) and "review" (the
 * reviewer asked for changes). Each rule has one condition:
 *   attempt: N      activates when attempt N starts (and stays: sticky)
 *   not: gate.X     activates for the next attempt whenever X failed
 *   exit: N         when attempt N (or later) fails, stop: fatal
 * and overrides (builder argv or agent name: one keyword, prompt template,
 * worktree: reset, session: new | keep) that, once
 * activated, stay for every later attempt until a rule activated later (or,
 * at the same attempt, listed later) overrides the same keyword.
 *
 * The active overrides are the state carried from attempt to attempt: one
 * rule index per keyword. build_retry_save/load keep it in the store
 * (table run_retry) so that the next tick (another process) sees it; the
 * run folder, which builders and gates can write, only gets a copy for
 * people (retry.json) that sluice never reads back.
 */

struct store;

struct build_retry_state {
	int builder_rule;  /* index into cfg->retry of the active builder or agent override, or -1 */
	int prompt_rule;   /* ... prompt override, or -1 */
	int reset_rule;    /* ... worktree: reset, or -1 */
	int session_rule;  /* ... session: new | keep, or -1 */
	int from;          /* the rules count the attempts after this one (a person's retry) */
};

#define BUILD_RETRY_STATE_INIT { -1, -1, -1, -1, 0 }

/* The overrides a state means, borrowed from cfg. */
struct build_retry_overrides {
	const char *const *builder; /* NULL: the configured builder */
	const char *agent;          /* a rule's agent: (a name of builders: or a preset), or NULL */
	int session;                /* SL_SESSION_KEEP, SL_SESSION_NEW, or 0: new */
	const char *prompt;         /* NULL: the automatic retry context */
	int worktree_reset;         /* 1: reset the worktree to the base before building */
};

#define BUILD_VERDICTS_MAX 2048

struct build_retry_decision {
	int retry;                        /* 1: run next_attempt; 0: fatal */
	int next_attempt;
	struct build_retry_state state;  /* the overrides active for next_attempt */
	struct build_retry_overrides overrides;
	char reason[768];                 /* "gate 'test' failed on attempt 3; retry exit at 3" */
	char verdicts[BUILD_VERDICTS_MAX]; /* the validators' verdicts, one a line, or "" */
};

/*
 * Decide what follows a failed attempt. prev: the state the failed attempt
 * ran with (BUILD_RETRY_STATE_INIT for attempt 1). failed: the names of the
 * failed gates and pseudo-gates (NULL-terminated; may be NULL); a
 * builder_exit other than 0 counts as "builder" failing. prev may point at
 * d->state. d->reason is a whole sentence ("gate 'test' failed on attempt
 * 3; retry exit at 3"). Returns 0 (the rules were validated at load).
 */
int build_retry_decide(const struct sl_config *cfg, const struct build_retry_state *prev,
			int attempt_failed, const char *const *failed, int builder_exit,
			struct build_retry_decision *d, struct sl_err *err);

/*
 * The words of d->reason after what failed ("no retry rules", "retrying as
 * attempt 2 of 3"): what failed on which attempt is said by the caller's
 * own reason already. All of d->reason when it has no " on attempt N; ".
 */
const char *build_retry_decision_words(const struct build_retry_decision *d, int attempt);

/* 1 when a rule of cfg->retry asks a validator (the decision then needs its context). */
int build_retry_validates(const struct sl_config *cfg);

/* The overrides of a state (borrowed from cfg). */
void build_retry_overrides(const struct sl_config *cfg, const struct build_retry_state *st,
			    struct build_retry_overrides *out);

/*
 * Keep/read the state of run `run_id` in the store; a run with none loads
 * as INIT. save also writes <run_dir>/retry.json (run_dir may be NULL), a
 * copy for people: a failure to write it is not an error.
 */
int build_retry_save(struct store *st, const char *run_id, const char *run_dir,
		      const struct build_retry_state *rs, struct sl_err *err);
int build_retry_load(struct store *st, const char *run_id, struct build_retry_state *rs,
		      struct sl_err *err);

/* Forget the state: the next attempt starts the rules over (a person's retry). */
int build_retry_forget(struct store *st, const char *run_id, const char *run_dir,
			struct sl_err *err);
/*
 * A person's retry after attempt `last`: no override is active and the
 * rules count the attempts after `last` as 1, 2, ... (`attempt: N`,
 * `exit: N`), so the run gets as many attempts as a new one.
 */
int build_retry_restart(struct store *st, const char *run_id, const char *run_dir, int last,
			struct sl_err *err);

/*
 * Validator conditions (validate.c, docs/config.md "Retry rules"): a retry
 * entry `validate: [argv]` holds when its command exits 0 and prints `true`
 * (its standard output, trimmed); `false`, another output, a non-zero exit,
 * a timeout or a program that cannot start: it does not hold. It runs at
 * each retry decision, in the worktree, in its own process group, with the
 * builder's environment (no reviewer token) and its `with:` inputs rendered
 * from the prompt variables, as one JSON object on standard input and in
 * the file $SLUICE_VALIDATE_INPUT. Its output and verdict go to
 * <run_dir>/validate/<rule>-attempt<N>.log (rule counted from 1).
 *
 * A verdict takes effect through the decision's state alone, saved by
 * build_retry_save (one row): the caller then records the verdicts as
 * events (build_validate_record). A process killed before the save loses
 * the decision whole (the run is requeued as a new attempt with the state
 * saved before), never half of it; one killed after it keeps it whole.
 */
struct build_validate_ctx {
	const char *run_id;
	const char *work_order_id;
	const char *run_dir;         /* absolute */
	const char *worktree;        /* absolute: the validator's cwd */
	const struct build_prompt_ctx *vars; /* what the `with:` templates render from */
	int64_t kill_grace_ms;       /* SIGTERM -> SIGKILL; 0: 2 s */
};

/*
 * Evaluate the validator of retry rule cfg->retry[idx] after attempt
 * `attempt` failed: *held 1 or 0, and `said` the verdict as a sentence
 * ("retry rule 2 (validate: assess) held on attempt 2"). A validator that
 * cannot run is a verdict (0, said in its log and in `said`), not an error.
 */
int build_validate_rule(const struct sl_config *cfg, int idx, int attempt,
			const struct build_validate_ctx *vc, int *held, char *said, size_t n,
			struct sl_err *err);

/* The verdicts of a decision (d->verdicts, one a line) as events of the run, in one transaction. */
int build_validate_record(struct store *st, const char *run_id, const char *work_order_id,
			  const char *state, const char *verdicts, struct sl_err *err);

/*
 * build_retry_decide with the validators: every `validate:` entry is
 * evaluated (in order) when the failed attempt can be retried, its verdict
 * a line of d->verdicts. vc NULL: no validator runs or holds.
 */
int build_retry_decide_validated(const struct sl_config *cfg, const struct build_retry_state *prev,
				 int attempt_failed, const char *const *failed, int builder_exit,
				 const struct build_validate_ctx *vc,
				 struct build_retry_decision *d, struct sl_err *err);

#endif
