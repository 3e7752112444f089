/*
 * The helpers every step shares: moving a run between states with its event,
 * reading and writing its artifacts, the target's tip, the run folder's checks.
 */
#include "runner/runner_int.h"
#include "store/store.h"
#include "artifact/artifact.h"
#include "worktree/worktree.h"
#include "merge/merge.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/fault.h"
#include "core/log.h"
#include "core/proc.h"
#include "core/time.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int step__reload(struct step *s, struct sl_err *err)
{
	struct store_run r;
	int error;

	if ((error = store_run_get(s->ctx->st, s->run.id, &r, err)) != 0)
		return error;
	store_run_release(&s->run);
	s->run = r;
	return 0;
}

static int vmove(struct step *s, enum run_state to, struct sl_err *err, const char *fmt,
		 va_list ap)
{
	char reason[1024];
	int error;

	vsnprintf(reason, sizeof(reason), fmt, ap);
	if ((error = store_run_transition(s->ctx->st, s->run.id, s->run.state, to, reason, 0,
					  err)) != 0)
		return error;
	return step__reload(s, err);
}

int step__move(struct step *s, enum run_state to, struct sl_err *err, const char *fmt, ...)
{
	va_list ap;
	int error;

	va_start(ap, fmt);
	error = vmove(s, to, err, fmt, ap);
	va_end(ap);
	return error ? error : STEP_NEXT;
}

int step__fail(struct step *s, enum run_state state, struct sl_err *err, const char *fmt, ...)
{
	char reason[1024];
	va_list ap;
	int error;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if ((error = step__finish(s, state, WO_FAILED, reason, reason, err)) < 0)
		return error;
	return STEP_STOP;
}

int step__finish(struct step *s, enum run_state state, enum wo_state wo_state,
		 const char *reason, const char *wo_reason, struct sl_err *err)
{
	int error;

	/* one transaction: a crash never leaves the work order running behind a finished run */
	if ((error = store_begin(s->ctx->st, err)) != 0)
		return error;
	if ((error = store_run_transition(s->ctx->st, s->run.id, s->run.state, state, reason, 1,
					  err)) != 0 ||
	    (error = store_wo_set_state_tx(s->ctx->st, s->run.work_order_id, wo_state, wo_reason,
					   err)) != 0 ||
	    (error = store_commit(s->ctx->st, err)) != 0) {
		store_rollback(s->ctx->st);
		return error;
	}
	return step__reload(s, err);
}

int step__set(struct step *s, struct sl_err *err, ...)
{
	const char *fields[32];
	va_list ap;
	int n = 0, error;

	va_start(ap, err);
	while (n < 30 && (fields[n] = va_arg(ap, const char *)) != NULL) {
		fields[n + 1] = va_arg(ap, const char *);
		n += 2;
	}
	va_end(ap);
	fields[n] = NULL;
	if ((error = store_run_update(s->ctx->st, s->run.id, fields, 0, err)) != 0)
		return error;
	return step__reload(s, err);
}

char *step__path(struct step *s, const char *name)
{
	return sl_path_join(s->run_dir, name);
}

char *step__read(struct step *s, const char *name, size_t max)
{
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	char *path = step__path(s, name), *out = NULL;

	if (path && sl_read_file(&b, path, max, &err) == 0)
		out = sl_buf_detach(&b);
	sl_buf_release(&b);
	free(path);
	return out;
}

json_t *step__read_json(struct step *s, const char *name)
{
	struct sl_err err = SL_ERR_INIT;
	char *path = step__path(s, name);
	json_t *j = NULL;

	/* the builder and the gates can write the run folder: bounded, no link */
	if (path && sl_json_read(path, SL_JSON_MAX, &j, &err) != 0 && err.code != SL_ENOTFOUND)
		sl_log(SL_LOG_WARN, "run %s: %s", s->run.id, err.msg);
	free(path);
	return j;
}

int step__write_json(struct step *s, const char *name, json_t *j, struct sl_err *err)
{
	return runner__write_artifact_json(s->ctx, s->run.id, name, j, err);
}

int runner__write_artifact_json(struct sl_ctx *ctx, const char *run_id, const char *name,
				json_t *json, struct sl_err *err)
{
	char *path = sl_repo_run_path(&ctx->repo, run_id, name);
	char *dir = NULL;
	int error;

	if (!path || !(dir = strndup(path, (size_t)(strrchr(path, '/') - path))))
		error = sl_err_set(err, SL_ERROR, "cannot write '%s': out of memory", name);
	/* attempts/N/ removed by a builder is made again, never through a link */
	else if ((error = sl_mkdir_p(dir, err)) == 0)
		error = sl_json_write(path, json, err);
	free(dir);
	free(path);
	return error;
}

int step__tree_of(struct step *s, const char *commit_hex, char tree_hex[41], struct sl_err *err)
{
	git_repository *repo = NULL;
	git_commit *c = NULL;
	git_oid oid;
	int rc, error = 0;

	if ((rc = git_repository_open(&repo, s->ctx->repo.root)) < 0 ||
	    (rc = git_oid_fromstr(&oid, commit_hex ? commit_hex : "")) < 0 ||
	    (rc = git_commit_lookup(&c, repo, &oid)) < 0)
		error = sl_err_git(err, rc, "cannot read commit '%s'", commit_hex ? commit_hex : "");
	else
		git_oid_tostr(tree_hex, 41, git_commit_tree_id(c));
	git_commit_free(c);
	git_repository_free(repo);
	return error;
}

int step__target_tip(struct step *s, char tip_hex[41], struct sl_err *err)
{
	git_repository *repo = NULL;
	git_oid oid;
	int rc, error = 0;

	if ((rc = git_repository_open(&repo, s->ctx->repo.root)) < 0)
		error = sl_err_git(err, rc, "cannot open the repository '%s'", s->ctx->repo.root);
	else if ((rc = git_reference_name_to_id(&oid, repo, s->ctx->target_ref)) < 0)
		error = sl_err_git(err, rc,
				   "cannot read the target branch '%s'; check 'target' in "
				   ".system/config.yaml",
				   s->ctx->target_ref);
	else
		git_oid_tostr(tip_hex, 41, &oid);
	git_repository_free(repo);
	return error;
}

const char *const *step__excluded(struct step *s)
{
	return (const char *const *)s->ctx->excluded;
}

int step__commit_resolution(struct step *s, const char *message, char head[41],
			    struct sl_err *err)
{
	struct merge_paths conflicted = MERGE_PATHS_INIT;
	struct store_conflict c = { 0 };
	struct sl_identity who;
	git_oid oid;
	int error;

	sl_repo_identity(&who, s->ctx->repo.root, s->ctx->cfg->commit.name,
			 s->ctx->cfg->commit.email);
	if ((error = store_conflict_get(s->ctx->st, s->run.id, &c, err)) == 0)
		for (size_t i = 0; i < c.npaths; i++)
			merge_paths_add(&conflicted, c.paths[i]);
	if (!error && (error = merge_commit_resolution(s->wt, message, who.name, who.email,
							&conflicted, step__excluded(s), &oid,
							err)) == 0)
		git_oid_tostr(head, 41, &oid);
	store_conflict_release(&c);
	merge_paths_release(&conflicted);
	return error;
}

int step__snapshot(struct step *s, const char *message, unsigned flags, char head[41],
		   int *committed, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	struct sl_identity who;
	int error;

	*committed = 0;
	sl_repo_identity(&who, s->ctx->repo.root, s->ctx->cfg->commit.name,
			 s->ctx->cfg->commit.email);
	if ((flags & STEP_SNAP_LOCK) && (error = runner__lock_repo(s->ctx, &lock, err)) != 0)
		return error;
	if ((flags & STEP_SNAP_QUICK) && s->run.head_commit &&
	    worktree_snapshot_unchanged(s->wt, s->run.branch_name, s->run.head_commit,
					step__excluded(s))) {
		snprintf(head, 41, "%s", s->run.head_commit);
		sl_lock_release(&lock);
		return 0;
	}
	error = worktree_snapshot(s->wt, s->run.branch_name, s->run.base_commit, step__excluded(s),
				  message, &who, head, committed, err);
	sl_lock_release(&lock);
	if (error == SL_ENOTFOUND && (flags & STEP_SNAP_NOTHING_OK)) {
		sl_err_clear(err);
		error = 0;
	}
	return error;
}

void step__sanitize_run_dir(struct step *s)
{
	artifact_sanitize_run_dir(s->run_dir, s->run.id);
}

/*
 * 1 when the run folder (or .system, .system/runs) is a link or no folder:
 * sluice wrote nothing through it and will not; err says so. A permanent
 * error, not one to retry every tick.
 */
int step__run_dir_linked(struct step *s, struct sl_err *err)
{
	struct sl_err e = SL_ERR_INIT;
	int fd = -1;

	if (sl_open_file(s->run_dir, O_RDONLY | O_DIRECTORY, 0, &fd, &e) == SL_EINVALID) {
		sl_err_clear(err);
		sl_err_set(err, SL_EINVALID, "the run folder was tampered with: %s", e.msg);
		return 1;
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

json_t *step__wo_fields(struct step *s, const char *wo_id, char **title)
{
	struct store_wo wo = STORE_WO_INIT;
	struct store_wo_fields f = { 0 };
	struct sl_err err = SL_ERR_INIT;
	json_t *j;

	if (store_wo_get(s->ctx->st, wo_id, &wo, &err) != 0)
		return json_object();
	store_wo_fields_parse(wo.id, wo.fields_json, &f, &err); /* logged there */
	j = f.all ? json_incref(f.all) : json_object();
	if (title)
		*title = wo.title ? strdup(wo.title) : NULL;
	store_wo_fields_release(&f);
	store_wo_release(&wo);
	return j;
}

char *step__review_comments(struct step *s)
{
	json_t *r = step__read_json(s, "review.json");
	const char *c = r ? json_string_value(json_object_get(r, "comments")) : NULL;
	char *out = c ? strdup(c) : NULL;

	json_decref(r);
	return out;
}
