/*
 * runner_advance(): carry one run as far as it can go now. The process
 * holds the run lock throughout, so no other tick works on the same run.
 */
#include "runner/pipeline.h"
#include "store/workorders.h"
#include "worktree/worktree.h"
#include "core/fs.h"
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

static int vmove(struct step *s, const char *to, struct sl_err *err, const char *fmt, va_list ap)
{
	char reason[1024];
	int error;

	vsnprintf(reason, sizeof(reason), fmt, ap);
	if ((error = store_run_transition(s->ctx->st, s->run.id, s->run.state, to, reason, 0,
					  err)) != 0)
		return error;
	return step__reload(s, err);
}

int step__move(struct step *s, const char *to, struct sl_err *err, const char *fmt, ...)
{
	va_list ap;
	int error;

	va_start(ap, fmt);
	error = vmove(s, to, err, fmt, ap);
	va_end(ap);
	return error ? error : STEP_NEXT;
}

int step__fail(struct step *s, const char *state, struct sl_err *err, const char *fmt, ...)
{
	char reason[1024];
	va_list ap;
	int error;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if ((error = step__finish(s, state, "failed", reason, reason, err)) < 0)
		return error;
	return STEP_STOP;
}

int step__finish(struct step *s, const char *state, const char *wo_state, const char *reason,
		 const char *wo_reason, struct sl_err *err)
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
	char *path = step__path(s, name);
	json_t *j = path ? json_load_file(path, 0, NULL) : NULL;

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
	char *text = json_dumps(json, JSON_INDENT(2) | JSON_SORT_KEYS);
	struct sl_buf b = SL_BUF_INIT;
	char *dir = NULL;
	int error;

	if (!path || !text || sl_buf_puts(&b, text) || sl_buf_puts(&b, "\n") ||
	    !(dir = strndup(path, (size_t)(strrchr(path, '/') - path))))
		error = sl_err_set(err, SL_ERROR, "cannot write '%s': out of memory", name);
	/* attempts/N/ removed by a builder is made again, never through a link */
	else if ((error = sl_mkdir_p(dir, err)) == 0)
		error = sl_write_file_atomic(path, b.ptr, b.len, err);
	free(dir);
	sl_buf_release(&b);
	free(text);
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

static void sanitize_dir(const char *dir, int top, const char *run_id)
{
	struct sl_err e = SL_ERR_INIT;
	struct dirent *de;
	struct stat st;
	DIR *d = NULL;
	int fd = -1;

	/* never through a link: a run folder replaced by one is not cleaned, it is refused */
	if (sl_open_file(dir, O_RDONLY | O_DIRECTORY, 0, &fd, &e) < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		char *p;
		/* worktree/ and a worktree.broken-* set aside are work trees, not artifacts */
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    (top && !strncmp(de->d_name, "worktree", 8)))
			continue;
		if (!(p = sl_path_join(dir, de->d_name)))
			continue;
		if (lstat(p, &st) == 0) {
			if (S_ISDIR(st.st_mode)) {
				sanitize_dir(p, 0, run_id);
			} else if (!S_ISREG(st.st_mode)) {
				sl_log(SL_LOG_WARN, "run %s: removed '%s' from the run folder: "
						    "artifacts are regular files",
				       run_id, p);
				unlink(p);
			}
		}
		free(p);
	}
	closedir(d);
}

void step__sanitize_run_dir(struct step *s)
{
	sanitize_dir(s->run_dir, 1, s->run.id);
}

static int write_work_order(struct step *s, struct sl_err *err)
{
	struct store_wo wo = STORE_WO_INIT;
	struct sl_buf content = SL_BUF_INIT;
	char *path = step__path(s, "work_order.md");
	int error;

	if (!path)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if (sl_path_exists(path)) {
		free(path);
		return 0; /* written when the run started: keep the bytes that were run */
	}
	if ((error = store_wo_get(s->ctx->st, s->run.work_order_id, &wo, err)) == 0 &&
	    (error = store_wo_content(s->ctx->st, s->run.work_order_id, &content, err)) == 0) {
		if (strcmp(wo.content_hash, s->run.wo_content_hash))
			error = sl_err_set(err, SL_ECONFLICT,
					   "work order '%s' changed after the run was claimed",
					   s->run.work_order_id);
		else
			error = sl_write_file_atomic(path, content.ptr, content.len, err);
	}
	store_wo_release(&wo);
	sl_buf_release(&content);
	free(path);
	return error;
}

static int run_setup(struct step *s, struct sl_err *err)
{
	struct sl_proc_opts po = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	char *log = step__path(s, "setup.log"), how[128];
	int error;

	po.argv = (const char *const *)s->ctx->cfg->worktree.setup;
	po.cwd = s->wt;
	po.log_path = log;
	po.log_max = s->ctx->cfg->builder.log_max;
	po.timeout_ms = s->ctx->cfg->worktree.setup_timeout_ms;
	if ((error = sl_proc_run(&po, &res, err)) == 0 && (res.exit_code || res.timed_out)) {
		sl_proc_describe(how, sizeof(how), &res);
		error = sl_err_set(err, SL_ERROR, "worktree.setup failed (%s); see %s", how, log);
	}
	free(log);
	return error;
}

/* <gitdir>/worktrees/<run id>: the run worktree's entry (new string). */
static char *entry_path(struct step *s)
{
	char *p;

	if (asprintf(&p, "%s/worktrees/%s", s->ctx->repo.gitdir, s->run.id) < 0)
		return NULL;
	return p;
}

/* 1 when a folder holds nothing, or nothing but a .git file: no work in it. */
static int only_git_file(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int empty = d != NULL;

	while (d && (de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, ".git"))
			empty = 0;
	if (d)
		closedir(d);
	return empty;
}

/*
 * The worktree folder exists but is no worktree of this run: a creation
 * killed half way (libgit2 wrote the entry and the .git file, the checkout
 * did not finish). Called with the repository lock held. A folder with
 * nothing but its .git file goes; anything else is kept beside the run as
 * worktree.broken-<time> (not an artifact), and said so: never lose a file.
 */
static int set_aside_half_made(struct step *s, struct sl_err *err)
{
	char aside[4200];
	int error = 0;

	char *entry = entry_path(s);

	if (sl_path_exists(s->wt)) {
		snprintf(aside, sizeof(aside), "%s/worktree.broken-%lld", s->run_dir,
			 (long long)sl_now_ms());
		if (rename(s->wt, aside) < 0) {
			free(entry);
			return sl_err_sys(err, errno, "cannot move the broken worktree '%s' aside",
					  s->wt);
		}
		if (only_git_file(aside))
			error = sl_rm_rf(aside, err);
		else /* it may hold a builder's files: keep them, beside the run */
			sl_log(SL_LOG_WARN, "run %s: a broken worktree was kept as '%s'", s->run.id,
			       aside);
	}
	/* the .git/worktrees entry is named after this run: nobody else's */
	if (!error && entry)
		error = sl_rm_rf(entry, err);
	free(entry);
	return error;
}

/* A worktree of this run that is there in part: its folder or its entry in .git/worktrees. */
static int half_made(struct step *s)
{
	char *entry = entry_path(s);
	int some = sl_path_exists(s->wt) || (entry && sl_path_exists(entry));

	free(entry);
	return some;
}

int step_prepare(struct step *s, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	struct sl_buf notes = SL_BUF_INIT;
	char tip[41], n[16], *done = NULL, *marker = NULL;
	int error, reused = 0;

	if ((error = write_work_order(s, err)) != 0) {
		if (error == SL_ECONFLICT)
			return step__fail(s, "failed", err, "%s", err->msg);
		return error;
	}
	if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
		return error;
	if (!s->run.base_commit) {
		/* a target that is gone stays gone: the run ends, with the reason */
		if ((error = step__target_tip(s, tip, err)) == SL_ENOTFOUND)
			error = SL_EINVALID;
		if (error || (error = step__set(s, err, "base_commit", tip, NULL)) != 0)
			goto out;
	}
	sl_fault("prepare.before_worktree_add");
	error = worktree_create(s->ctx->repo.root, s->run.id, s->run.branch_name,
				       s->run.base_commit, NULL, &reused, err);
	if ((error == SL_EEXISTS || error == SL_ERROR) && half_made(s)) {
		/* a creation cut off by a crash: set it aside and make it again */
		sl_err_clear(err);
		if ((error = set_aside_half_made(s, err)) == 0)
			error = worktree_create(s->ctx->repo.root, s->run.id,
						       s->run.branch_name, s->run.base_commit,
						       NULL, &reused, err);
	}
	if (error)
		goto out;
	sl_fault("prepare.after_worktree_add");
	if ((error = worktree_share(s->ctx->repo.root, s->wt,
					   (const char *const *)s->ctx->cfg->worktree.share,
					   &notes, err)) != 0 ||
	    (error = worktree_copy(s->ctx->repo.root, s->wt,
					  (const char *const *)s->ctx->cfg->worktree.copy, &notes,
					  err)) != 0) {
		if (error == SL_EEXISTS) /* tracked in the worktree: so on every tick */
			error = SL_EINVALID;
		goto out;
	}
	if (notes.len)
		sl_log(SL_LOG_INFO, "run %s: %s", s->run.id, sl_buf_cstr(&notes));
	sl_fault("prepare.after_environment");
out:
	sl_lock_release(&lock);
	sl_buf_release(&notes);
	/*
	 * A bad share/copy path or a missing target branch is final. Anything
	 * else (a worktree left half made by a crash that could not be set aside
	 * this time, a lock) is tried again by the next tick: the run stays,
	 * with the reason.
	 */
	if (error == SL_EINVALID)
		return step__fail(s, "failed", err, "cannot prepare the worktree: %s", err->msg);
	if (error)
		return error;
	/* setup runs until it once succeeded in this worktree (setup.done marks it) */
	if (s->ctx->cfg->worktree.setup && !(done = step__read(s, "setup.done", 64))) {
		if ((error = run_setup(s, err)) != 0)
			return step__fail(s, "failed", err, "%s", err->msg);
		sl_fault("prepare.after_setup");
		if ((marker = step__path(s, "setup.done")) != NULL)
			sl_write_file(marker, "ok\n", 3, err);
		free(marker);
		sl_err_clear(err);
	}
	free(done);
	snprintf(n, sizeof(n), "%d", s->run.attempt + 1);
	if ((error = step__set(s, err, "attempt", n, NULL)) != 0)
		return error;
	return step__move(s, "building", err, "attempt %d: worktree %s at %.12s", s->run.attempt,
			  reused ? "reused" : "ready", s->run.base_commit);
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

static int dispatch(struct step *s, struct sl_err *err)
{
	const char *st = s->run.state;
	char owner[64];

	if (!strcmp(st, "queued")) {
		sl_owner_self(owner, sizeof(owner));
		if (step__set(s, err, "owner_start", owner, NULL) != 0)
			return SL_ERROR;
		return step__move(s, "preparing", err, "preparing the worktree");
	}
	if (!strcmp(st, "preparing"))
		return step_prepare(s, err);
	if (!strcmp(st, "building"))
		return step_build(s, err);
	if (!strcmp(st, "gating"))
		return step_gate(s, err);
	if (!strcmp(st, "reviewing"))
		return step_review(s, err);
	if (!strcmp(st, "approved"))
		return step__move(s, "merging", err, "merging into %s", s->ctx->cfg->target);
	if (!strcmp(st, "merging"))
		return step_merge(s, err);
	if (!strcmp(st, "resolving"))
		return step_resolve(s, err);
	return STEP_STOP; /* awaiting_review, merge_conflict, final states */
}

int runner_advance(struct sl_ctx *ctx, const char *run_id, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	struct step s;
	int error, steps;

	memset(&s, 0, sizeof(s));
	s.ctx = ctx;
	if ((error = runner__lock_run(ctx, run_id, 0, &lock, err)) != 0)
		return error;
	if ((error = store_run_get(ctx->st, run_id, &s.run, err)) != 0)
		goto out;
	s.run_dir = sl_repo_run_path(&ctx->repo, s.run.id, NULL);
	s.wt = runner__worktree_path(ctx, s.run.id);
	if (!s.run_dir || !s.wt) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	for (steps = 0; steps < 200; steps++) {
		error = dispatch(&s, err);
		if (error)
			break;
	}
	if (error < 0 && step__run_dir_linked(&s, err))
		error = step__fail(&s, "failed", err, "%s", err->msg);
	if (error == STEP_STOP)
		error = 0;
	else if (error < 0) {
		/* the run keeps its state; say why on the run, try again next tick */
		struct sl_err e2 = SL_ERR_INIT;
		char why[SL_ERR_MSG_MAX + 64];
		snprintf(why, sizeof(why), "%s (retried next tick)", err->msg);
		store_run_set_reason(ctx->st, s.run.id, why, &e2);
	}
out:
	store_run_release(&s.run);
	free(s.run_dir);
	free(s.wt);
	sl_lock_release(&lock);
	return error;
}
