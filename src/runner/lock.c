/*
 * The runner's two locks (DESIGN.md section 11): the repository lock
 * (.system/lock) around git mutations of the service, and a run's lock
 * (.system/runs/<id>/lock) held by the one process advancing that run.
 * Both are flocks the kernel drops when the process dies.
 */
#include "runner/runner_int.h"
#include "artifact/artifact.h"
#include "core/fs.h"
#include "core/lock.h"

#include <stdlib.h>
#include <string.h>

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

/*
 * `sluice audit --write-manifest`: a manifest is written under the
 * repository lock, as a merge writes its own (step_merge.c) and
 * reconciliation seals an interrupted one (reconcile.c): the chain's link
 * to the previous manifest must not be read while another one is written.
 * Checked again under the lock: a tick may have sealed it meanwhile.
 */
int runner_seal(struct sl_ctx *ctx, const char *run_id, int64_t wait_ms, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	struct store_run r;
	char *path = NULL;
	int error;

	memset(&r, 0, sizeof(r));
	if ((error = sl_lock_acquire(&lock, ctx->repo.lock_path, wait_ms, err)) != 0)
		return error;
	if ((error = store_run_get(ctx->st, run_id, &r, err)) != 0)
		goto out;
	if (!(path = sl_repo_run_path(&ctx->repo, r.id, "manifest.json")))
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if (r.state != RUN_MERGED || sl_path_exists(path))
		error = sl_err_set(err, SL_EINVALID, "run '%s' is not merged or has a manifest "
				   "already; nothing to seal", r.id);
	else
		error = artifact_manifest_write(&ctx->repo, ctx->st, r.id, err);
out:
	free(path);
	store_run_release(&r);
	sl_lock_release(&lock);
	return error;
}
