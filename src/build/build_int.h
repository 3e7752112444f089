#ifndef SL_BUILD_INT_H
#define SL_BUILD_INT_H
/* Shared by the files of src/build/ only (builder.c and gates.c). */
#include "build/build.h"

/*
 * The environment entries every child that works in a worktree gets
 * (builder and gates): the GIT_CONFIG_* triple that sets core.hooksPath to
 * /dev/null unless cfg->worktree.hooks. A static NULL-terminated array.
 */
const char *const *build_hooks_env(const struct sl_config *cfg);


/* builder.c: the builder's environment entries ("K=V", SLUICE_* and the rest), a new list. */
int build__env(sl_strv env, size_t cap, const struct build_opts *o);
int build__env_list(const struct build_opts *o, sl_strv *out);
/* Append len bytes to a log (created 0644; best effort: the outcome is recorded elsewhere). */
void build__append(const char *log, const char *data, size_t len);
int64_t build__timeout(const struct build_opts *o);

/* exec_build.c: build_run and the gates as a job (executor.kind slurm or kubernetes). */
int build__run_job(const struct build_opts *o, struct sl_proc_result *res, struct sl_err *err);
/* gates.c: the last `max` bytes of a file ("" when unreadable); gates.json; a gate's name. */
char *build__tail_file(const char *path, size_t max);
int build__gates_write(const char *run_dir, const char *sub, const struct build_gate_results *r,
		       struct sl_err *err);
int build__gate_name_ok(const char *name);

/* ---- executors: exec_script.c, exec_job.c, exec_build.c ---- */


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
