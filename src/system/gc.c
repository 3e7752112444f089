/* sluice gc: remove the worktrees, branches and folders of old finished runs. */
#include "system/system.h"
#include "artifact/artifact.h"
#include "worktree/worktree.h"
#include "store/store.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/lock.h"
#include "core/log.h"
#include "core/fault.h"
#include "core/time.h"

#include <ftw.h>
#include <git2.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int64_t du_total;

static int du_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (type == FTW_F || type == FTW_SL)
		du_total += (int64_t)st->st_size;
	return 0;
}

/* The apparent size of a tree (files and symlinks, not followed). */
static int64_t du(const char *path)
{
	du_total = 0;
	nftw(path, du_one, 16, FTW_PHYS); /* what it walked before an error counts */
	return du_total;
}

/* The state of one system_disk_usage() walk (nftw passes no data). */
static struct {
	struct system_disk *out;
	size_t root_len;
} disk;

/* runs/<id>/worktree* (a run's checkout, the merge train's) or pool/: a worktree. */
static int is_worktree_path(const char *rel)
{
	const char *id_end;

	if (!strncmp(rel, "pool/", 5) || !strcmp(rel, "pool"))
		return 1;
	if (strncmp(rel, "runs/", 5) || !(id_end = strchr(rel + 5, '/')))
		return 0;
	return !strncmp(id_end + 1, "worktree", 8);
}

static int disk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	int64_t b = (int64_t)st->st_blocks * 512;

	(void)ftw;
	if (type == FTW_NS || type == FTW_DNR)
		return 0;
	if (st->st_nlink > 1 && type == FTW_F)
		b /= (int64_t)st->st_nlink; /* a hard-linked file: its share (no table to remember it) */
	disk.out->bytes += b;
	if (strlen(path) > disk.root_len && is_worktree_path(path + disk.root_len + 1))
		disk.out->worktree_bytes += b;
	if (++disk.out->entries >= SYSTEM_DISK_MAX_ENTRIES) {
		disk.out->complete = 0;
		return 1;
	}
	return 0;
}

void system_disk_usage(const struct sl_ctx *ctx, struct system_disk *out)
{
	memset(out, 0, sizeof(*out));
	out->complete = 1;
	if (!ctx->repo.sysdir || !sl_is_dir(ctx->repo.sysdir))
		return;
	disk.out = out;
	disk.root_len = strlen(ctx->repo.sysdir);
	nftw(ctx->repo.sysdir, disk_one, 32, FTW_PHYS | FTW_MOUNT);
	disk.out = NULL;
}

static int branch_exists(git_repository *git, const char *branch)
{
	git_reference *ref = NULL;
	int found = branch && git_branch_lookup(&ref, git, branch, GIT_BRANCH_LOCAL) == 0;

	git_reference_free(ref);
	return found;
}

static int worktree_entry_exists(struct sl_ctx *ctx, const char *run_id)
{
	char *path = worktree_entry_path(ctx->repo.gitdir, run_id, NULL);
	int exists = path && sl_path_exists(path);

	free(path);
	return exists;
}

static int fill_item(struct sl_ctx *ctx, git_repository *git, const struct store_run *r,
		     struct system_gc_item *it)
{
	char *dir = sl_repo_run_path(&ctx->repo, r->id, NULL);
	char *wt = sl_repo_run_path(&ctx->repo, r->id, "worktree");

	memset(it, 0, sizeof(*it));
	it->run = strdup(r->id);
	it->work_order = strdup(r->work_order_id);
	it->state = strdup(run_state_name(r->state));
	it->merged = r->state == RUN_MERGED;
	if (dir && sl_is_dir(dir)) {
		it->folder = dir;
		it->bytes = du(dir);
		dir = NULL;
	}
	if (branch_exists(git, r->branch_name))
		it->branch = strdup(r->branch_name);
	it->has_worktree = worktree_entry_exists(ctx, r->id) || (wt && sl_path_exists(wt));
	free(dir);
	free(wt);
	return it->run && it->work_order && it->state ? 0 : SL_ERROR;
}

static void item_release(struct system_gc_item *it)
{
	free(it->run);
	free(it->work_order);
	free(it->state);
	free(it->folder);
	free(it->branch);
	free(it->error);
}

static int plan_add(struct system_gc_plan *plan, const struct system_gc_item *it)
{
	struct system_gc_item *v = realloc(plan->v, (plan->n + 1) * sizeof(*v));

	if (!v)
		return SL_ERROR;
	plan->v = v;
	plan->v[plan->n++] = *it;
	return 0;
}

/* Runs come newest first: the plan lists the old ones oldest first. */
static void plan_reverse(struct system_gc_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->n / 2; i++) {
		struct system_gc_item t = plan->v[i];
		plan->v[i] = plan->v[plan->n - 1 - i];
		plan->v[plan->n - 1 - i] = t;
	}
}

/* The worktree pool: gc empties it (what it holds can always be made again). */
static int plan_pool(struct sl_ctx *ctx, struct system_gc_plan *plan, struct sl_err *err)
{
	struct worktree_pool_slot *v = NULL;
	size_t n = 0, i;
	int error;

	if ((error = worktree_pool_list(ctx->repo.root, &v, &n, err)) != 0)
		return error;
	for (i = 0; i < n; i++) {
		plan->pool_slots++;
		plan->pool_bytes += du(v[i].path);
	}
	worktree_pool_list_release(v, n);
	return 0;
}

int system_gc_plan(struct sl_ctx *ctx, int keep_last, struct system_gc_plan *plan,
		   struct sl_err *err)
{
	struct store_run *runs = NULL;
	struct system_gc_item it;
	git_repository *git = NULL;
	size_t n = 0, i;
	int error;

	memset(plan, 0, sizeof(*plan));
	if ((error = git_repository_open(&git, ctx->repo.root)) != 0) {
		error = sl_err_git(err, error, "cannot open the repository '%s'", ctx->repo.root);
		goto out;
	}
	if ((error = store_runs_list(ctx->st, RUN_STATES_ALL, NULL, &runs, &n, err)) != 0)
		goto out;
	for (i = 0; i < n && !error; i++) {
		if (!run_state_is_final(runs[i].state)) {
			plan->kept_active++;
			continue;
		}
		if (plan->kept_finished < (size_t)(keep_last > 0 ? keep_last : 0)) {
			plan->kept_finished++;
			continue;
		}
		if ((error = fill_item(ctx, git, &runs[i], &it)) == 0 &&
		    (it.folder || it.branch || it.has_worktree) && (error = plan_add(plan, &it)) == 0)
			continue;
		item_release(&it);
		if (error)
			error = sl_err_set(err, SL_ERROR, "out of memory");
	}
	plan_reverse(plan);
	if (!error)
		error = plan_pool(ctx, plan, err);
out:
	store_runs_free(runs, n);
	git_repository_free(git);
	if (error)
		system_gc_plan_release(plan);
	return error;
}

size_t system_gc_drop_unmerged(struct system_gc_plan *plan)
{
	size_t i, kept = 0, dropped = 0;

	for (i = 0; i < plan->n; i++) {
		if (plan->v[i].merged) {
			plan->v[kept++] = plan->v[i];
		} else {
			item_release(&plan->v[i]);
			dropped++;
		}
	}
	plan->n = kept;
	return dropped;
}

void system_gc_plan_release(struct system_gc_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->n; i++)
		item_release(&plan->v[i]);
	free(plan->v);
	free(plan->pool_error);
	memset(plan, 0, sizeof(*plan));
}

static json_t *load_json(const char *dir, const char *name, char sha[65])
{
	struct sl_err err = SL_ERR_INIT;
	char *path = sl_path_join(dir, name);
	json_t *j = NULL;

	if (path)
		sl_json_read_sha(path, SL_JSON_MAX, &j, sha, &err);
	free(path);
	return j;
}

/* .system/runs/<id>.gc: what was there, so show and audit know. */
static int write_tombstone(struct sl_ctx *ctx, const struct system_gc_item *it,
			   struct sl_err *err)
{
	char sha[65] = "", when[40], *path = artifact_tombstone_path(&ctx->repo, it->run);
	json_t *m = it->folder ? load_json(it->folder, "manifest.json", sha) : NULL;
	json_t *mj = it->folder ? load_json(it->folder, "merge.json", NULL) : NULL, *t;
	int error;

	sl_time_iso(when, sizeof(when), sl_now_ms());
	t = json_pack("{s:s, s:s, s:s, s:s, s:s?, s:s?, s:s?, s:s?, s:s?, s:I}", "run", it->run,
		      "work_order", it->work_order, "state", it->state, "removed_at", when,
		      "merged_at", json_string_value(json_object_get(mj, "merged_at")),
		      "merge_commit", json_string_value(json_object_get(mj, "merge_commit")),
		      "manifest_sha256", m ? sha : NULL, "previous_manifest",
		      json_string_value(json_object_get(m, "previous_manifest")), "previous_run",
		      json_string_value(json_object_get(m, "previous_run")), "bytes",
		      (json_int_t)it->bytes);
	if (!path || !t)
		error = sl_err_set(err, SL_ERROR, "cannot write the gc tombstone of run '%s'", it->run);
	else
		error = sl_json_write(path, t, err);
	sl_fault(error ? NULL : "gc.after_tombstone");
	free(path);
	json_decref(t);
	json_decref(m);
	json_decref(mj);
	return error;
}

static int delete_branch(git_repository *git, const char *branch, struct sl_err *err)
{
	git_reference *ref = NULL;
	int error = git_branch_lookup(&ref, git, branch, GIT_BRANCH_LOCAL);

	if (error == GIT_ENOTFOUND)
		return 0;
	if (error == 0) /* not git_branch_delete: it leaks in libgit2 1.5 (worktree.c) */
		error = git_reference_delete(ref);
	git_reference_free(ref);
	return error ? sl_err_git(err, error, "cannot delete branch '%s'", branch) : 0;
}

/* Is anything of the run still there? */
static int verify_gone(struct sl_ctx *ctx, git_repository *git, struct system_gc_item *it)
{
	char what[256] = "";
	char *dir = sl_repo_run_path(&ctx->repo, it->run, NULL);

	if (dir && sl_path_exists(dir))
		snprintf(what + strlen(what), sizeof(what) - strlen(what), " its folder");
	if (it->branch && branch_exists(git, it->branch))
		snprintf(what + strlen(what), sizeof(what) - strlen(what), " its branch");
	if (worktree_entry_exists(ctx, it->run))
		snprintf(what + strlen(what), sizeof(what) - strlen(what), " its worktree entry");
	free(dir);
	if (!what[0])
		return 0;
	if (asprintf(&it->error, "still there after gc:%s", what) < 0)
		it->error = NULL;
	return -1;
}

/* The shared and copied paths, which do not make a worktree dirty. */
/* Still final, and nobody works on it (a `sluice retry` may have come in). */
static int claim(struct sl_ctx *ctx, struct system_gc_item *it, struct sl_lock *lock,
		 struct sl_err *err)
{
	struct store_run r;
	int error;

	if (it->folder && (error = sl_repo_lock_run(&ctx->repo, it->run, 0, lock, err)) != 0) {
		sl_err_clear(err); /* sl_err_set keeps a message already there */
		return sl_err_set(err, SL_ELOCKED, "run '%s' is in use by another sluice process; "
				  "try gc again later", it->run);
	}
	if ((error = store_run_get(ctx->st, it->run, &r, err)) != 0)
		return error;
	if (!run_state_is_final(r.state))
		error = sl_err_set(err, SL_ECONFLICT, "run '%s' is %s now, not finished; left alone",
				   it->run, run_state_name(r.state));
	store_run_release(&r);
	return error;
}

static int remove_item(struct sl_ctx *ctx, git_repository *git, struct system_gc_item *it,
		       struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	char *patch = it->folder ? sl_path_join(it->folder, "diff.patch") : NULL;
	const char *const *skip = (const char *const *)ctx->excluded;
	int force = patch && sl_path_exists(patch), error;

	free(patch);
	if ((error = claim(ctx, it, &lock, err)) != 0)
		goto out;
	if (it->has_worktree) {
		/* forced only because the run is final and its diff was saved */
		error = worktree_remove(ctx->repo.root, it->run, skip, force, 1, NULL, err);
		/* git no longer knows it (a builder replaced its .git): its work is saved */
		if (error && error != SL_ENOTFOUND && force) {
			sl_err_clear(err);
			error = worktree_discard(ctx->repo.root, ctx->repo.gitdir, it->run, err);
		}
		if (error == SL_ENOTFOUND) {
			sl_err_clear(err);
			error = 0;
		}
	}
	sl_fault(error ? NULL : "gc.after_worktree");
	if (!error && it->branch)
		error = delete_branch(git, it->branch, err);
	sl_fault(error ? NULL : "gc.after_branch");
	if (!error && it->folder && (error = write_tombstone(ctx, it, err)) == 0)
		error = sl_rm_rf(it->folder, err);
out:
	sl_lock_release(&lock);
	return error;
}

static void empty_pool(struct sl_ctx *ctx, struct system_gc_plan *plan, int64_t *freed)
{
	struct sl_err e = SL_ERR_INIT;

	if (worktree_pool_trim(ctx->repo.root, 0, &plan->pool_removed, &plan->pool_locked, &e) != 0)
		plan->pool_error = strdup(e.msg);
	else if (plan->pool_removed && !plan->pool_locked)
		*freed += plan->pool_bytes;
}

int system_gc_apply(struct sl_ctx *ctx, struct system_gc_plan *plan, int64_t *freed,
		    struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	git_repository *git = NULL;
	size_t i;
	int error;

	*freed = 0;
	if ((error = git_repository_open(&git, ctx->repo.root)) != 0) {
		error = sl_err_git(err, error, "cannot open the repository '%s'", ctx->repo.root);
		goto out;
	}
	if ((error = sl_repo_lock(&ctx->repo, &lock, err)) != 0)
		goto out;
	for (i = 0; i < plan->n; i++) {
		struct system_gc_item *it = &plan->v[i];
		struct sl_err e = SL_ERR_INIT;
		if (remove_item(ctx, git, it, &e) != 0) {
			it->error = strdup(e.msg);
			continue;
		}
		if (verify_gone(ctx, git, it) == 0) {
			it->removed = 1;
			*freed += it->bytes;
		}
	}
	empty_pool(ctx, plan, freed);
	sl_lock_release(&lock);
out:
	git_repository_free(git);
	return error;
}
