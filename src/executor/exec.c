/* Executors (executor.h): the dispatch on a handle's kind. */
#include "executor/executor_int.h"
#include "core/fs.h"

#include <stdio.h>
#include <string.h>

const char *exec_kind_name(enum sl_executor_kind k)
{
	return k == SL_EXEC_SLURM ? "slurm" : k == SL_EXEC_KUBERNETES ? "kubernetes" : "local";
}

int exec_remote(const struct sl_config *cfg)
{
	return cfg->executor.kind != SL_EXEC_LOCAL;
}

int exec_submit(const struct sl_config *cfg, const struct exec_job *job, char *handle, size_t n,
		struct sl_err *err)
{
	const char *kind = exec_kind_name(cfg->executor.kind);
	size_t k = strlen(kind) + 1;
	int error;

	if (n <= k + 1)
		return sl_err_set(err, SL_ERROR, "no room for a job handle");
	snprintf(handle, n, "%s:", kind);
	if (cfg->executor.kind == SL_EXEC_SLURM)
		error = exec_slurm_submit(cfg, job, handle + k, n - k, err);
	else if (cfg->executor.kind == SL_EXEC_KUBERNETES)
		error = exec_k8s_submit(cfg, job, handle + k, n - k, err);
	else
		error = sl_err_set(err, SL_EINVALID, "executor.kind is local: builders and gates "
				   "run here, not as jobs");
	if (error)
		handle[0] = '\0';
	return error;
}

/* The back end of a handle ("slurm:12"): its id in *id, its kind returned (-1: unknown). */
static int kind_of(const char *handle, const char **id)
{
	if (!strncmp(handle, "slurm:", 6)) {
		*id = handle + 6;
		return SL_EXEC_SLURM;
	}
	if (!strncmp(handle, "kubernetes:", 11)) {
		*id = handle + 11;
		return SL_EXEC_KUBERNETES;
	}
	*id = NULL;
	return -1;
}

int exec_pending(const struct sl_config *cfg, const char *name, char *handle, size_t n)
{
	return sl_fmt_fixed(handle, n, "%s:?%s", exec_kind_name(cfg->executor.kind), name);
}

const char *exec_pending_name(const char *handle)
{
	const char *id;

	return kind_of(handle, &id) >= 0 && id[0] == '?' ? id + 1 : NULL;
}

int exec_find(const struct sl_config *cfg, const char *name, char *handle, size_t n,
	      struct sl_err *err)
{
	const char *kind = exec_kind_name(cfg->executor.kind);
	size_t k = strlen(kind) + 1;
	int found;

	if (n <= k + 1)
		return sl_err_set(err, SL_ERROR, "no room for a job handle");
	snprintf(handle, n, "%s:", kind);
	if (cfg->executor.kind == SL_EXEC_SLURM)
		found = exec_slurm_find(cfg, name, handle + k, n - k, err);
	else if (cfg->executor.kind == SL_EXEC_KUBERNETES)
		found = exec_k8s_find(cfg, name, handle + k, n - k, err);
	else
		found = 0;
	if (found <= 0)
		handle[0] = '\0';
	return found;
}

int exec_poll(const struct sl_config *cfg, const char *handle, struct exec_status *st,
	      struct sl_err *err)
{
	const char *id;
	int k = kind_of(handle, &id);

	memset(st, 0, sizeof(*st));
	if (exec_pending_name(handle))
		return sl_err_set(err, SL_EINVALID, "job '%.100s' has no id of its engine yet",
				  handle);
	if (k == SL_EXEC_SLURM)
		return exec_slurm_poll(cfg, id, st, err);
	if (k == SL_EXEC_KUBERNETES)
		return exec_k8s_poll(cfg, id, st, err);
	return sl_err_set(err, SL_EINVALID, "'%.100s' names no job of a known engine", handle);
}

int exec_cancel(const struct sl_config *cfg, const char *handle, struct sl_err *err)
{
	const char *id;
	int k = kind_of(handle, &id);

	if (k == SL_EXEC_SLURM)
		return exec_slurm_cancel(cfg, id, err);
	if (k == SL_EXEC_KUBERNETES)
		return exec_k8s_cancel(cfg, id, err);
	return sl_err_set(err, SL_EINVALID, "'%.100s' names no job of a known engine", handle);
}

int exec_log(const struct sl_config *cfg, const char *handle, struct sl_buf *out,
	     struct sl_err *err)
{
	const char *id;
	int k = kind_of(handle, &id);

	if (exec_pending_name(handle))
		return sl_err_set(err, SL_ENOTFOUND, "job '%.100s' has no id of its engine yet",
				  handle);
	if (k == SL_EXEC_SLURM)
		return exec_slurm_log(cfg, id, out, err);
	if (k == SL_EXEC_KUBERNETES)
		return exec_k8s_log(cfg, id, out, err);
	return sl_err_set(err, SL_EINVALID, "'%.100s' names no job of a known engine", handle);
}
