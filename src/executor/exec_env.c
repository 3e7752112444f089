/* The environment of a child that works in a worktree (executor.h). */
#include "executor/executor_int.h"
#include "core/git.h"

#include <stdlib.h>
#include <string.h>

static const char *const hooks_off[] = {
	"GIT_CONFIG_COUNT=1",
	"GIT_CONFIG_KEY_0=core.hooksPath",
	"GIT_CONFIG_VALUE_0=/dev/null",
	NULL,
};

static const char *const hooks_on[] = { NULL };

/*
 * What the builder and the gates keep of the one list of variables dropped
 * for git (core/git.h): they are the user's agent and checks, not a git of
 * sluice's. Their own git may page, diff with the user's tool, reach a
 * remote the user's way (dependencies over ssh), and read the user's
 * configuration files where the user keeps them (GIT_CONFIG_GLOBAL: the
 * identity of the agent's commits). What they lose with sluice's git:
 * where the repository is (GIT_DIR & co.: the main checkout, when sluice
 * runs from a git hook or alias) and configuration from the environment
 * (GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT and its keys: a `git -c` above
 * sluice, which would beat the hooks triple below).
 */
static const char *const builder_keeps[] = {
	"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM",
	"GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS", "GIT_PAGER", "PAGER",
	"GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS",
	"GIT_ATTR_SOURCE", "GIT_REPLACE_REF_BASE", NULL,
};

#define DROP_MAX 48

const char *const *exec_hooks_env(const struct sl_config *cfg)
{
	return cfg->worktree.hooks ? hooks_on : hooks_off;
}

int exec_env_drop(sl_strv *out, const struct sl_config *cfg, const char *const *add,
		   struct sl_err *err)
{
	const char *drop[DROP_MAX];
	size_t n = 0, len = sl_git_env_drop_but(drop, DROP_MAX, builder_keeps, add);

	if (!(*out = calloc(len + 2, sizeof(char *))))
		return sl_err_set(err, SL_ERROR, "out of memory");
	for (size_t i = 0; i < len; i++)
		if (!((*out)[n++] = strdup(drop[i])))
			goto oom;
	if (cfg->reviewer.token_env && cfg->reviewer.token_env[0])
		if (!((*out)[n++] = strdup(cfg->reviewer.token_env)))
			goto oom;
	return 0;
oom:
	sl_strv_free(*out);
	*out = NULL;
	return sl_err_set(err, SL_ERROR, "out of memory");
}
