#ifndef SL_BUILD_EXEC_H
#define SL_BUILD_EXEC_H
/*
 * Executors (DESIGN.md section 14, docs/scale-out.md): where builders and
 * gate jobs run. `local` is today's process group of the worker
 * (build/builder.c, build/gates.c: nothing here). `slurm` and `kubernetes`
 * run a job script (exec_script.c) on an engine people already run, each a
 * thin wrapper over the engine's own CLI:
 *
 *   verb     slurm                           kubernetes
 *   submit   sbatch --parsable               kubectl create -f - (a batch/v1 Job)
 *   poll     scontrol show job -o / squeue   kubectl get job NAME -o json
 *   cancel   scancel                         kubectl delete job NAME
 *   log      the job's output file           kubectl logs job/NAME
 *
 * The workspace moves by git (exec_remote.c): what a job needs is pushed
 * under refs/sluice/runs/<id>/a<N>/ to executor.remote, the job fetches it
 * into a clone of its own and pushes its result and its log back there,
 * under refs of that attempt alone (a job the engine gave up may still run
 * and push: nothing it pushes is read for a later attempt).
 *
 * A handle names a job for the engine: "slurm:<jobid>" or
 * "kubernetes:<namespace>/<name>". It is recorded in the store (table
 * jobs) before the poll starts, so a later tick finds the job of a killed
 * one and asks the engine about it.
 */
#include <stddef.h>
#include <stdint.h>
#include "core/buf.h"
#include "core/config.h"
#include "core/err.h"

#define EXEC_HANDLE_MAX 256

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

/* The kind's name ("local", "slurm", "kubernetes"). */
const char *exec_kind_name(enum sl_executor_kind k);

/* 1 when builders and gates of cfg run as jobs (executor.kind is not local). */
int exec_remote(const struct sl_config *cfg);

/* Submit: *handle (n bytes) names the job. SL_ENOTFOUND when the engine's CLI is missing. */
int exec_submit(const struct sl_config *cfg, const struct exec_job *job, char *handle, size_t n,
		struct sl_err *err);

/* Ask the engine: an error only when it cannot be asked (st says nothing then). */
int exec_poll(const struct sl_config *cfg, const char *handle, struct exec_status *st,
	      struct sl_err *err);

/* End the job (a job already ended or unknown is no error). */
int exec_cancel(const struct sl_config *cfg, const char *handle, struct sl_err *err);

/* The engine's own log of the job (its output), bounded by out's max. */
int exec_log(const struct sl_config *cfg, const char *handle, struct sl_buf *out,
	     struct sl_err *err);

/* ---- back ends (one file each); handle without its "kind:" prefix ---- */
int exec_slurm_submit(const struct sl_config *cfg, const struct exec_job *job, char *id,
		      size_t n, struct sl_err *err);
int exec_slurm_poll(const struct sl_config *cfg, const char *id, struct exec_status *st,
		    struct sl_err *err);
int exec_slurm_cancel(const struct sl_config *cfg, const char *id, struct sl_err *err);
int exec_slurm_log(const struct sl_config *cfg, const char *id, struct sl_buf *out,
		   struct sl_err *err);

int exec_k8s_submit(const struct sl_config *cfg, const struct exec_job *job, char *id, size_t n,
		    struct sl_err *err);
int exec_k8s_poll(const struct sl_config *cfg, const char *id, struct exec_status *st,
		  struct sl_err *err);
int exec_k8s_cancel(const struct sl_config *cfg, const char *id, struct sl_err *err);
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
