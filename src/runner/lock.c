/*
 * The runner's two locks (DESIGN.md section 11): the repository lock
 * (.system/lock) around git mutations of the service, and a run's lock
 * (.system/runs/<id>/lock) held by the one process advancing that run.
 * Both are flocks the kernel drops when the process dies.
 */
#include "runner/runner_int.h"
#include "core/fs.h"

#include <stdlib.h>

int runner__lock_repo(struct sl_ctx *ctx, struct sl_lock *lock, struct sl_err *err)
{
	return sl_lock_acquire(lock, ctx->repo.lock_path, 10 * 60 * 1000, err);
}

int runner__lock_run(struct sl_ctx *ctx, const char *run_id, int64_t timeout_ms,
		     struct sl_lock *lock, struct sl_err *err)
{
	char *dir = sl_repo_run_path(&ctx->repo, run_id, NULL);
	char *path = sl_repo_run_path(&ctx->repo, run_id, "lock");
	int error;

	if (!dir || !path)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if ((error = sl_mkdir_p(dir, err)) == 0)
		error = sl_lock_acquire(lock, path, timeout_ms, err);
	free(dir);
	free(path);
	return error;
}
