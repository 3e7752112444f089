#ifndef SL_BUILDER_INT_H
#define SL_BUILDER_INT_H
/* Shared by the files of src/builder/ only (and their unit tests). */
#include "builder/builder.h"

/* builder.c: the builder's environment entries ("K=V", SLUICE_* and the rest), a new list. */
int build__env(sl_strv env, size_t cap, const struct build_opts *o);
int build__env_list(const struct build_opts *o, sl_strv *out);
int64_t build__timeout(const struct build_opts *o);

/* exec_build.c: build_run and the gates as a job (executor.kind slurm or kubernetes). */
int build__run_job(const struct build_opts *o, struct sl_proc_result *res, struct sl_err *err);
/* gates.c: gates.json; a gate's name. */
int build__gates_write(const char *run_dir, const char *sub, const struct build_gate_results *r,
		       struct sl_err *err);
int build__gate_name_ok(const char *name);

#endif
