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


#endif
