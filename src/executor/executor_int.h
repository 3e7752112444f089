#ifndef SL_EXECUTOR_INT_H
#define SL_EXECUTOR_INT_H
/*
 * Shared by the files of src/executor/ only (and their unit tests): the
 * engine's verbs behind a handle (exec.c) and the back ends, one file each.
 */
#include "executor/executor.h"

/* What to run: a POSIX sh script, the same for every engine. */
struct exec_job {
	const char *name;     /* the engine's job name: "sluice-<run>-a<N>-build" ([a-z0-9-]) */
	const char *run_id;   /* labels */
	const char *work_order_id;
	const char *script;   /* the job (exec_script.c) */
	int64_t timeout_ms;   /* the engine's time limit; 0: none */
	const char *const *env_drop; /* names kept from the engine CLI's environment (slurm's
	                                --export=ALL would pass them on): the reviewer token's */
};

enum exec_state {
	EXEC_PENDING = 0, /* waiting for a node */
	EXEC_RUNNING,
	EXEC_DONE,        /* ended by itself: see exit_code (0: success) */
	EXEC_LOST,        /* ended by the engine or a person: node failure, cancelled, deadline,
	                     deleted, preempted, or unknown to the engine: see detail */
};

struct exec_status {
	enum exec_state state;
	int exit_code;      /* EXEC_DONE: the script's exit status */
	char detail[256];   /* the engine's words: "NODE_FAIL (NodeDown)", "CANCELLED" */
};

/* Submit: *handle (n bytes) names the job. SL_ENOTFOUND when the engine's CLI is missing. */
int exec_submit(const struct sl_config *cfg, const struct exec_job *job, char *handle, size_t n,
		struct sl_err *err);

/* Ask the engine: an error only when it cannot be asked (st says nothing then). */
int exec_poll(const struct sl_config *cfg, const char *handle, struct exec_status *st,
	      struct sl_err *err);

/* The engine's own log of the job (its output), bounded by out's max. */
int exec_log(const struct sl_config *cfg, const char *handle, struct sl_buf *out,
	     struct sl_err *err);

/*
 * A job is recorded before it is submitted, under the handle "<kind>:?<name>"
 * (exec_pending()): a sluice killed between the engine's answer and the
 * record of its id leaves that, and exec_find() finds the job by its name.
 * exec_cancel() of a pending handle cancels by the name; exec_poll() and
 * exec_log() refuse it.
 */
int exec_pending(const struct sl_config *cfg, const char *name, char *handle, size_t n);
/* The name of a pending handle, or NULL for a handle the engine gave. */
const char *exec_pending_name(const char *handle);
/*
 * The job the engine knows under `name` (any state it still keeps): 1 and
 * *handle, 0 when none. More than one (never expected): the newest, the
 * others cancelled.
 */
int exec_find(const struct sl_config *cfg, const char *name, char *handle, size_t n,
	      struct sl_err *err);

/* ---- back ends (one file each); handle without its "kind:" prefix ---- */
int exec_slurm_submit(const struct sl_config *cfg, const struct exec_job *job, char *id,
		      size_t n, struct sl_err *err);
int exec_slurm_poll(const struct sl_config *cfg, const char *id, struct exec_status *st,
		    struct sl_err *err);
int exec_slurm_cancel(const struct sl_config *cfg, const char *id, struct sl_err *err);
int exec_slurm_find(const struct sl_config *cfg, const char *name, char *id, size_t n,
		    struct sl_err *err);
int exec_slurm_log(const struct sl_config *cfg, const char *id, struct sl_buf *out,
		   struct sl_err *err);

int exec_k8s_submit(const struct sl_config *cfg, const struct exec_job *job, char *id, size_t n,
		    struct sl_err *err);
int exec_k8s_poll(const struct sl_config *cfg, const char *id, struct exec_status *st,
		  struct sl_err *err);
int exec_k8s_cancel(const struct sl_config *cfg, const char *id, struct sl_err *err);
int exec_k8s_find(const struct sl_config *cfg, const char *name, char *id, size_t n,
		  struct sl_err *err);
int exec_k8s_log(const struct sl_config *cfg, const char *id, struct sl_buf *out,
		 struct sl_err *err);

/*
 * The pure halves of the kubernetes back end, for its tests: the Job
 * manifest of `job` (a new JSON object, the caller's), and the state of a
 * Job from `kubectl get job -o json` output (len bytes).
 */
struct json_t;
struct json_t *exec_k8s_manifest(const struct sl_config *cfg, const struct exec_job *job);
int exec_k8s_parse(const char *json, size_t len, struct exec_status *st, struct sl_err *err);

/* The state of a Slurm job from `scontrol show job -o ID` output (one line). */
int exec_slurm_parse(const char *line, struct exec_status *st, struct sl_err *err);

#endif
