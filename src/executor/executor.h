#ifndef SL_EXECUTOR_H
#define SL_EXECUTOR_H
/*
 * Executors (docs/scale-out.md): where builders and
 * gate jobs run. `local` is today's process group of the worker
 * (builder/builder.c, builder/gates.c: nothing here). `slurm` and `kubernetes`
 * run a job script (exec_script.c) on an engine people already run, each a
 * thin wrapper over the engine's own CLI:
 *
 *   verb     slurm                           kubernetes
 *   submit   sbatch --parsable               kubectl create -f - (a batch/v1 Job)
 *   poll     scontrol show job -o / squeue   kubectl get job NAME -o json
 *   cancel   scancel                         kubectl delete job NAME
 *   log      the job's output file           kubectl logs job/NAME
 *
 * The workspace moves by git (exec_job.c): what a job needs is pushed
 * under refs/sluice/runs/<id>/a<N>/ to executor.remote, the job fetches it
 * into a clone of its own and pushes its result and its log back there,
 * under refs of that attempt alone (a job the engine gave up may still run
 * and push: nothing it pushes is read for a later attempt).
 *
 * A handle names a job for the engine: "slurm:<jobid>" or
 * "kubernetes:<namespace>/<name>". It is recorded in the store (table
 * jobs) before the poll starts, so a later tick finds the job of a killed
 * one and asks the engine about it.
 *
 * The module sits below the builder (builder/builder.h), which runs its
 * builder and gates here when executor.kind is not local; the engines' back
 * ends are executor/executor_int.h's.
 */
#include <stddef.h>
#include <stdint.h>
#include "core/buf.h"
#include "core/config.h"
#include "core/err.h"

struct store;

#define EXEC_HANDLE_MAX 256

/*
 * One job of a run, from submit to its result (exec_job.c): the inputs
 * pushed, the job submitted and recorded, polled until it ends, its out
 * and result fetched. A job of the same run, attempt and purpose recorded
 * open (a tick killed while it ran) is polled again, never submitted twice.
 */
struct exec_run {
	struct store *st;
	const char *repo_root;    /* sluice's repository: pushes and fetches run there */
	const char *run_id;
	const char *work_order_id;
	int attempt;
	const char *purpose;      /* "build", "gates", "train" */
	const char *base;         /* the commit pushed as <refs>/base (build) or <refs>/head */
	const char *theirs;       /* resolve mode: the target's tip, pushed as <refs>/theirs */
	const char *input_dir;    /* its files become <refs>/input (prompt.md, copy/...) */
	const char *state_name;   /* the run's state, for its events */
	const char *engine_log;   /* a job that never reported: the engine's log appended here */
};

struct exec_outcome {
	int lost;                 /* 1: the engine lost it or it never reported: see why */
	char why[1024];           /* lost: the engine's words; else "" */
	char result[41];          /* the result commit (its tree is the worktree's files) */
	char out[41];             /* the out commit (logs, exit codes) */
	char handle[EXEC_HANDLE_MAX];
	int cancelled;            /* 1: a person cancelled it (sluice abandon): stop */
	int64_t job_id;           /* its row (table jobs): ended once its result is taken */
	char ended[512];          /* how it ended, for that row: "ended: COMPLETED, ...; result X" */
};

/* The kind's name ("local", "slurm", "kubernetes"). */
const char *exec_kind_name(enum sl_executor_kind k);

/* 1 when builders and gates of cfg run as jobs (executor.kind is not local). */
int exec_remote(const struct sl_config *cfg);

/* End the job (a job already ended or unknown is no error). */
int exec_cancel(const struct sl_config *cfg, const char *handle, struct sl_err *err);

/*
 * exec_job_cancel: end the recorded job (its row first, "cancelled: why",
 * then the engine), each failure logged. exec_jobs_cancel: the same for
 * every open job of run `run_id`, *n how many; -1 when they cannot be
 * listed.
 */
struct store_job;
void exec_job_cancel(const struct sl_config *cfg, struct store *st, const struct store_job *job,
		     const char *why);
int exec_jobs_cancel(const struct sl_config *cfg, struct store *st, const char *run_id,
		     const char *why, int *n);

/*
 * The environment of every child that works in a worktree, here or in a
 * job (the builder, the gates, the validators, the job script; exec_env.c).
 *
 * exec_hooks_env: the GIT_CONFIG_* triple that sets core.hooksPath to
 * /dev/null unless cfg->worktree.hooks. A static NULL-terminated array.
 *
 * exec_env_drop: the names removed from their environment: the reviewer's
 * token variable (cfg->reviewer.token_env) and the one list of core/git.h
 * (GIT_DIR & co., GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT, ...) less what
 * exec_env.c keeps for them (builders and notifiers alike) on purpose and
 * less the names `add` sets (their own entries, "K=V"). *out is the
 * caller's: sl_strv_free().
 */
const char *const *exec_hooks_env(const struct sl_config *cfg);
int exec_env_drop(sl_strv *out, const struct sl_config *cfg, const char *const *add,
		  struct sl_err *err);

/* What the job script (exec_script.c) does. */
struct exec_script {
	const struct sl_config *cfg;   /* executor.*, worktree.{share,copy,setup}, gates */
	const char *purpose;           /* "build", "gates" or "train" */
	const char *refs;              /* the job's refs on executor.remote */
	const char *run_id;
	const char *branch;            /* the branch the worktree is on */
	int attempt;
	int merge_theirs;              /* resolve mode: merge <refs>/theirs first */
	const char *const *argv;       /* build: the builder */
	const char *const *env;        /* build: "K=V" entries exported for it */
	int64_t timeout_ms;            /* build: the builder's */
	int64_t grace_ms;              /* SIGTERM -> SIGKILL */
	size_t log_max;                /* each log's bound */
};

int exec_script_write(const struct exec_script *o, struct sl_buf *b, struct sl_err *err);

/* The refs prefix of a run's job: refs/sluice/runs/<id>/a<N>[/gates] or refs/sluice/train/<id>/<k>. */
int exec_refs(char *out, size_t n, const struct exec_run *r);

/*
 * The job of r from submit (or a killed tick's open job) to its end: o says
 * how. A lost job's row is ended here and its refs dropped; one that
 * reported stays open until exec_job_taken(), so that a sluice killed
 * before its result is in the worktree takes it again from the remote.
 */
int exec_job_run(const struct sl_config *cfg, const struct exec_run *r, const char *script,
		 int64_t timeout_ms, struct exec_outcome *o, struct sl_err *err);

/* The result of o is in: its row ended (with an event), its refs dropped here and on the remote. */
int exec_job_taken(const struct sl_config *cfg, const struct exec_run *r,
		   const struct exec_outcome *o, struct sl_err *err);

/* A file of the out commit (a blob), bounded by b's max; SL_ENOTFOUND when absent. */
int exec_out_file(const char *repo_root, const char *out, const char *path, struct sl_buf *b,
		  struct sl_err *err);

/* Put the result's files into the worktree wt (git read-tree -u --reset). */
int exec_apply(const char *wt, const char *result, struct sl_err *err);

#endif
