/*
 * The runner's two locks (docs/design.md, Locks and crash recovery): the repository lock
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
#include <unistd.h>

#define LET_GO_FILE "let-go"
#define LET_GO_MAX 128

int runner__lock_repo(struct sl_ctx *ctx, struct sl_lock *lock, struct sl_err *err)
{
	return sl_repo_lock(&ctx->repo, lock, err);
}

int runner__lock_run(struct sl_ctx *ctx, const char *run_id, int64_t timeout_ms,
		     struct sl_lock *lock, struct sl_err *err)
{
	return sl_repo_lock_run(&ctx->repo, run_id, timeout_ms, lock, err);
}

int runner__lock_run_asking(struct sl_ctx *ctx, const char *run_id, int64_t timeout_ms,
			    struct sl_lock *lock, struct sl_err *err)
{
	char *path = sl_repo_run_path(&ctx->repo, run_id, LET_GO_FILE), owner[64];
	int error;

	if ((error = runner__lock_run(ctx, run_id, 0, lock, err)) != SL_ELOCKED || !path) {
		free(path);
		return error;
	}
	sl_err_clear(err);
	sl_owner_self(owner, sizeof(owner));
	if ((error = sl_write_file_atomic(path, owner, strlen(owner), err)) == 0)
		error = runner__lock_run(ctx, run_id, timeout_ms, lock, err);
	unlink(path);
	free(path);
	return error;
}

int runner__let_go_asked(struct sl_ctx *ctx, const char *run_id)
{
	char *path = sl_repo_run_path(&ctx->repo, run_id, LET_GO_FILE), self[64];
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	int asked = 0;

	sl_owner_self(self, sizeof(self));
	/* a stale request (its process gone) or this process's own is none */
	if (path && sl_read_file(&b, path, LET_GO_MAX, &err) == 0 && b.len)
		asked = strcmp(sl_buf_cstr(&b), self) && sl_owner_alive(sl_buf_cstr(&b));
	sl_buf_release(&b);
	free(path);
	return asked;
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
