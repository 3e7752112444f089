#ifndef SL_RUNNER_BUILDER_H
#define SL_RUNNER_BUILDER_H
/*
 * The builder process (DESIGN.md section 6.2, docs/builders.md): the
 * configured argv (builder.command, a preset, or a retry override) run in
 * the worktree, in its own process group, with a timeout, the SLUICE_*
 * environment and a bounded log appended to <run_dir>/builder.log.
 */
#include "core/config.h"
#include "core/err.h"
#include "core/proc.h"

/*
 * The file in a run's folder naming the builder's or a gate's process group
 * while it runs: reconciliation ends that group when its sluice died.
 */
#define RUNNER_CHILD_OWNER_FILE "child.owner"

struct runner_builder_opts {
	const struct sl_config *cfg;
	const char *run_id;
	const char *work_order_id;
	const char *run_dir;       /* absolute: .system/runs/<id> */
	const char *worktree;      /* absolute; the builder's cwd */
	const char *prompt_file;   /* absolute: <run_dir>/attempts/<n>/prompt.md */
	const char *mode;          /* "build" or "resolve"; NULL: "build" */
	int attempt;               /* 1, 2, ... ($SLUICE_ATTEMPT) */
	const char *const *argv_override; /* a retry rule's builder argv, or NULL */
	int64_t kill_grace_ms;     /* SIGTERM -> SIGKILL; 0: 2 s */
};

#define RUNNER_BUILDER_OPTS_INIT { 0 }

/*
 * The argv to run: the override, else cfg->builder.command, else the
 * preset's. *out is the caller's: sl_strv_free(). SL_EINVALID when no
 * builder is configured.
 */
int runner_builder_argv(sl_strv *out, const struct sl_config *cfg, const char *const *argv_override,
			struct sl_err *err);

/*
 * The environment entries every child that works in a worktree gets
 * (builder and gates): the GIT_CONFIG_* triple that sets core.hooksPath to
 * /dev/null unless cfg->worktree.hooks. A static NULL-terminated array.
 */
const char *const *runner_builder_hooks_env(const struct sl_config *cfg);

/*
 * The names removed from the environment of the builder and the gates:
 * the reviewer's token variable (cfg->reviewer.token_env) and the GIT_*
 * variables that would point git elsewhere (GIT_DIR, GIT_WORK_TREE,
 * GIT_INDEX_FILE, ...). *out is the caller's: sl_strv_free().
 */
int runner_builder_env_drop(sl_strv *out, const struct sl_config *cfg, struct sl_err *err);

/*
 * Run the builder to completion. A header line per attempt goes into
 * builder.log before its output, and a footer line with how it ended.
 * Returns 0 when it ran (see res->exit_code, res->timed_out); SL_ENOTFOUND
 * when the program does not exist, SL_EINVALID when nothing is configured.
 */
int runner_builder_run(const struct runner_builder_opts *o, struct sl_proc_result *res,
		       struct sl_err *err);

#endif
