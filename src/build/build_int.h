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

/*
 * The names removed from the environment of the builder and the gates:
 * the reviewer's token variable (cfg->reviewer.token_env) and the one list
 * of core/git.h (GIT_DIR & co., GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT,
 * ...) less what builder.c keeps for them on purpose and less the names
 * `add` sets (their own entries, "K=V"). *out is the caller's: sl_strv_free().
 */
int build_env_drop(sl_strv *out, const struct sl_config *cfg, const char *const *add,
		   struct sl_err *err);

#endif
