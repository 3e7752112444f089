/*
 * Moves of the target branch that sluice did not make: observe the tip,
 * classify what it brings, stop landing on an unreviewed one (target.h).
 */
#include "target/target.h"
#include "artifact/artifact.h"
#include "merge/merge.h"
#include "store/store.h"
#include "core/lock.h"
#include "core/repo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEW_MAX 1000000 /* commits one move may bring that are looked at */

struct watch {
	struct sl_ctx *ctx;
	git_repository *git;
	struct artifact_runset set;
	struct artifact_oids user;     /* the user's commits to record */
	struct artifact_oids excused;  /* second parents of landings: the run commits they merge */
	struct artifact_oids suspect;  /* from a run, unless a landing merges them */
};

/* 1 when `c`'s tree is the one sluice's merge of its two parents makes. */
static int merged_tree_is(struct watch *w, const git_commit *c)
{
	struct merge_result mr = MERGE_RESULT_INIT;
	struct merge_opts mo = MERGE_OPTS_INIT;
	struct sl_err err = SL_ERR_INIT;
	char p1[GIT_OID_HEXSZ + 1], p2[GIT_OID_HEXSZ + 1];
	int yes;

	git_oid_tostr(p1, sizeof(p1), git_commit_parent_id(c, 0));
	git_oid_tostr(p2, sizeof(p2), git_commit_parent_id(c, 1));
	yes = merge_preview(w->ctx->repo.root, p1, p2, &mo, &mr, &err) == 0 && mr.clean &&
	      git_oid_equal(&mr.tree, git_commit_tree_id(c));
	merge_result_release(&mr);
	git_error_clear();
	return yes;
}

/* 1 when the store holds sluice's intent to land exactly `c` as run `id`'s green car. */
static int landing_intended(struct watch *w, const git_commit *c, const char *id)
{
	struct sl_err err = SL_ERR_INIT;
	char *run = NULL;
	int yes;

	yes = store_train_landing_run(w->ctx->st, git_oid_tostr_s(git_commit_id(c)), &run,
				      &err) == 0 &&
	      !strcmp(run, id);
	free(run);
	return yes;
}

/*
 * The merge commit of an approved run whose landing a crash cut short (the
 * store has not heard of it yet): the store holds sluice's intent to land
 * exactly this commit as the run's green car (written before the target's
 * compare-and-swap: a car moved onto the target by anyone else, red, under
 * test or green, has none), its Sluice-Run names an approved run whose
 * recorded head is the second parent, that head's tree was approved, and
 * its own tree is what sluice's merge of its parents makes (a builder can
 * forge the rest: parents, trailers, and a tree of its own).
 */
static int pending_landing(struct watch *w, const git_commit *c)
{
	struct store_run r;
	struct sl_err err = SL_ERR_INIT;
	git_commit *p2 = NULL;
	char *id = NULL;
	int yes = 0;

	memset(&r, 0, sizeof(r));
	if (git_commit_parentcount(c) != 2)
		goto out;
	if (!(id = merge_run_of_message(git_commit_message(c))) ||
	    store_run_get(w->ctx->st, id, &r, &err) ||
	    strcmp(r.id, id) || git_commit_parent(&p2, c, 1))
		goto out;
	yes = (r.state == RUN_APPROVED || r.state == RUN_MERGING || r.state == RUN_MERGED) &&
	      r.head_commit && r.approved_tree &&
	      !strcmp(git_oid_tostr_s(git_commit_id(p2)), r.head_commit) &&
	      !strcmp(git_oid_tostr_s(git_commit_tree_id(p2)), r.approved_tree) &&
	      landing_intended(w, c, id) && merged_tree_is(w, c);
out:
	git_error_clear();
	git_commit_free(p2);
	store_run_release(&r);
	free(id);
	return yes;
}

/*
 * 1 when `c` is a merge that sluice made for a run the store knows (its
 * Sluice-Run trailer; a car of the merge train), with the run's id in
 * run[n]: on the target without being a landing, it is a move by someone
 * else.
 */
static int car_of(struct watch *w, const git_commit *c, char *run, size_t n)
{
	struct store_run r;
	struct sl_err err = SL_ERR_INIT;
	char *id = NULL;
	int yes = 0;

	memset(&r, 0, sizeof(r));
	if (git_commit_parentcount(c) == 2 && (id = merge_run_of_message(git_commit_message(c))) &&
	    !store_run_get(w->ctx->st, id, &r, &err)) {
		yes = 1;
		if (run)
			snprintf(run, n, "%s", r.id);
	}
	git_error_clear();
	store_run_release(&r);
	free(id);
	return yes;
}

/* The run a suspect commit came from (its branch, or the run its car merges), into run[n]. */
static void suspect_run(struct watch *w, const git_oid *id, char *run, size_t n)
{
	const char *owner = artifact_runset_owner(&w->set, id);
	git_commit *c = NULL;

	run[0] = '\0';
	if (owner) {
		snprintf(run, n, "%s", owner);
		return;
	}
	if (git_commit_lookup(&c, w->git, id) == 0)
		car_of(w, c, run, n);
	git_error_clear();
	git_commit_free(c);
}

static int excuse(struct watch *w, const git_commit *c)
{
	unsigned int i;

	for (i = 1; i < git_commit_parentcount(c); i++)
		if (artifact_oids_add(&w->excused, git_commit_parent_id(c, i)))
			return SL_ERROR;
	return 0;
}

/* Sort one new commit into landing, the user's or suspect. */
static int classify(struct watch *w, const git_oid *id, struct sl_err *err)
{
	char hex[GIT_OID_HEXSZ + 1], *run = NULL;
	git_commit *c = NULL;
	int rc, error = 0;

	git_oid_tostr(hex, sizeof(hex), id);
	rc = store_landing_run(w->ctx->st, hex, &run, err);
	free(run);
	if (rc != SL_ENOTFOUND && rc != 0)
		return rc;
	sl_err_clear(err);
	if (git_commit_lookup(&c, w->git, id) != 0) {
		git_error_clear();
		return 0;
	}
	if (rc == 0 || pending_landing(w, c)) {
		error = excuse(w, c);
		goto out;
	}
	if ((rc = store_user_commit_has(w->ctx->st, w->ctx->target_ref, hex, err)) < 0) {
		error = rc;
		goto out;
	}
	if (rc == 0)
		error = artifact_oids_add(artifact_runset_owner(&w->set, id) || car_of(w, c, NULL, 0)
					  ? &w->suspect : &w->user, id);
out:
	git_commit_free(c);
	return error < 0 && !err->msg[0] ? sl_err_set(err, SL_ERROR, "out of memory") : error;
}

static int excused(struct watch *w, const git_oid *id)
{
	size_t i;

	for (i = 0; i < w->excused.n; i++)
		if (git_oid_equal(&w->excused.v[i], id) ||
		    git_graph_descendant_of(w->git, &w->excused.v[i], id) == 1)
			return 1;
	git_error_clear();
	return 0;
}

/*
 * The commits reachable from `from` and not from `hide` (may be NULL), newest
 * first: every commit a move brings, second parents too, so not the
 * first-parent line that merge_line_next reads (docs/ARCHITECTURE.md, "merge").
 */
static int walk_new(git_repository *git, const git_oid *from, const git_oid *hide,
		    struct artifact_oids *out, struct sl_err *err)
{
	git_revwalk *walk = NULL;
	git_oid id;
	int error;

	if ((error = git_revwalk_new(&walk, git)) != 0 ||
	    (error = git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME)) != 0 ||
	    (error = git_revwalk_push(walk, from)) != 0) {
		error = sl_err_git(err, error, "cannot walk the target's history");
		goto out;
	}
	if (hide && git_revwalk_hide(walk, hide) != 0)
		git_error_clear();
	while (out->n < NEW_MAX && !git_revwalk_next(&id, walk))
		if (artifact_oids_add(out, &id)) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			goto out;
		}
	git_error_clear();
out:
	git_revwalk_free(walk);
	return error;
}

static const char *short_target(struct sl_ctx *ctx)
{
	return ctx->cfg->target;
}

static int record_alert(struct watch *w, const struct target_alert *a, const char *tip,
			struct sl_err *err)
{
	char reason[1024];
	int error;

	if ((error = store_begin(w->ctx->st, err)) != 0)
		return error;
	if ((error = store_alert_open(w->ctx->st, w->ctx->target_ref, a->commit,
				      a->run[0] ? a->run : NULL, err)) == 1) {
		snprintf(reason, sizeof(reason),
			 "unreviewed landing: the target '%s' moved to %.12s and carries commit "
			 "%.12s from run %s that sluice did not land; no run lands until '%s' is "
			 "reset to before it or 'sluice accept-target %s' accepts it",
			 short_target(w->ctx), tip, a->commit, a->run[0] ? a->run : "(unknown)",
			 short_target(w->ctx), a->commit);
		error = store_event_add(w->ctx->st, NULL, NULL, NULL, NULL, reason, err);
	}
	if (error >= 0 && (error = store_commit(w->ctx->st, err)) == 0)
		return 0;
	store_rollback(w->ctx->st);
	return error;
}

/* Nothing unreviewed: the new commits are the user's, the tip is observed, alerts clear. */
static int record_clean(struct watch *w, const char *tip, struct sl_err *err)
{
	struct store_alert *al = NULL;
	char hex[GIT_OID_HEXSZ + 1], reason[512];
	size_t n = 0, i;
	int error;

	if ((error = store_begin(w->ctx->st, err)) != 0)
		return error;
	for (i = 0; i < w->user.n && !error; i++)
		error = store_user_commit_add(w->ctx->st, w->ctx->target_ref,
					      git_oid_tostr(hex, sizeof(hex), &w->user.v[i]),
					      "observed", err);
	if (!error)
		error = store_target_set(w->ctx->st, w->ctx->target_ref, NULL, tip, err);
	if (!error)
		error = store_alerts_list(w->ctx->st, w->ctx->target_ref, &al, &n, err);
	for (i = 0; i < n && !error; i++) {
		snprintf(reason, sizeof(reason), "the target '%s' no longer carries the unreviewed "
			 "commit %.12s of run %s (reset or accepted); landing goes on",
			 short_target(w->ctx), al[i].commit, al[i].run_id ? al[i].run_id : "(unknown)");
		if (!(error = store_alert_clear(w->ctx->st, w->ctx->target_ref, al[i].commit, err)))
			error = store_event_add(w->ctx->st, NULL, NULL, NULL, NULL, reason, err);
	}
	store_alerts_free(al, n);
	if (!error && (error = store_commit(w->ctx->st, err)) == 0)
		return 0;
	store_rollback(w->ctx->st);
	return error;
}

static int observe(struct watch *w, const git_oid *tip, int record,
		   struct target_alert *alert, struct sl_err *err)
{
	struct artifact_oids fresh = { NULL, 0, 0 };
	char *root = NULL, *last = NULL, thex[GIT_OID_HEXSZ + 1];
	git_oid lid;
	int error, have_last;
	size_t i;

	git_oid_tostr(thex, sizeof(thex), tip);
	error = store_target_get(w->ctx->st, w->ctx->target_ref, &root, &last, err);
	if (error == SL_ENOTFOUND) {
		sl_err_clear(err);
		error = 0;
		if (record) {
			/* the first observation: the root (what came before is taken as it is) */
			if (!(error = store_begin(w->ctx->st, err)) &&
			    !(error = store_target_set(w->ctx->st, w->ctx->target_ref, thex, thex,
						       err)))
				error = store_commit(w->ctx->st, err);
			if (error)
				store_rollback(w->ctx->st);
		}
		goto out;
	}
	if (error)
		goto out;
	have_last = git_oid_fromstr(&lid, last) == 0;
	if (!have_last || !git_oid_equal(&lid, tip)) {
		if ((error = walk_new(w->git, tip, have_last ? &lid : NULL, &fresh, err)) != 0)
			goto out;
		if (fresh.n && (error = artifact_runset_load(w->ctx, w->git, have_last ? &lid : NULL,
							    &w->set, err)) != 0)
			goto out;
	}
	for (i = 0; i < fresh.n && !error; i++)
		error = classify(w, &fresh.v[i], err);
	if (error)
		goto out;
	for (i = 0; i < w->suspect.n && !error; i++) {
		if (excused(w, &w->suspect.v[i]))
			continue;
		if (!alert->count++) {
			git_oid_tostr(alert->commit, sizeof(alert->commit), &w->suspect.v[i]);
			suspect_run(w, &w->suspect.v[i], alert->run, sizeof(alert->run));
		}
	}
	if (error)
		goto out;
	if (alert->count)
		error = record ? record_alert(w, alert, thex, err) : 0;
	else if (record)
		error = record_clean(w, thex, err);
	if (!error && alert->count)
		error = 1;
out:
	free(fresh.v);
	free(root);
	free(last);
	return error;
}

int target_watch(struct sl_ctx *ctx, const git_oid *tip, int record,
			struct target_alert *alert, struct sl_err *err)
{
	struct watch w;
	git_oid now;
	int error;

	memset(&w, 0, sizeof(w));
	memset(alert, 0, sizeof(*alert));
	w.ctx = ctx;
	if ((error = git_repository_open(&w.git, ctx->repo.root)) != 0) {
		error = sl_err_git(err, error, "cannot open the repository '%s'", ctx->repo.root);
		goto out;
	}
	if (!tip) {
		if ((error = git_reference_name_to_id(&now, w.git, ctx->target_ref)) == GIT_ENOTFOUND) {
			git_error_clear();
			error = 0; /* no target yet: nothing to watch */
			goto out;
		}
		if (error) {
			error = sl_err_git(err, error, "cannot read the target '%s'", ctx->target_ref);
			goto out;
		}
		tip = &now;
	}
	error = observe(&w, tip, record, alert, err);
out:
	artifact_runset_release(&w.set);
	free(w.user.v);
	free(w.excused.v);
	free(w.suspect.v);
	git_repository_free(w.git);
	return error;
}

int target_watch_locked(struct sl_ctx *ctx, struct target_alert *alert,
			       struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	int error;

	memset(alert, 0, sizeof(*alert));
	if ((error = sl_repo_lock(&ctx->repo, &lock, err)) != 0)
		return error;
	error = target_watch(ctx, NULL, 1, alert, err);
	sl_lock_release(&lock);
	return error;
}

int target_landed(struct sl_ctx *ctx, const char *commit, struct sl_err *err)
{
	int error;

	if ((error = store_begin(ctx->st, err)) != 0)
		return error;
	if ((error = store_target_set(ctx->st, ctx->target_ref, NULL, commit, err)) == 0 &&
	    (error = store_commit(ctx->st, err)) == 0)
		return 0;
	store_rollback(ctx->st);
	return error;
}

static int record_accepted(struct sl_ctx *ctx, const struct artifact_oids *all, const char *commit,
			   struct sl_err *err)
{
	char hex[GIT_OID_HEXSZ + 1], reason[512];
	size_t i;
	int error;

	if ((error = store_begin(ctx->st, err)) != 0)
		return error;
	for (i = 0; i < all->n && !error; i++)
		error = store_user_commit_add(ctx->st, ctx->target_ref,
					      git_oid_tostr(hex, sizeof(hex), &all->v[i]),
					      "accepted", err);
	snprintf(reason, sizeof(reason), "accepted %zu commit%s up to %.12s on the target '%s' "
		 "as the user's (sluice accept-target)", all->n, all->n == 1 ? "" : "s", commit,
		 ctx->cfg->target);
	if (!error)
		error = store_event_add(ctx->st, NULL, NULL, NULL, NULL, reason, err);
	if (!error && (error = store_commit(ctx->st, err)) == 0)
		return 0;
	store_rollback(ctx->st);
	return error;
}

/* The commit a person named, on the target. */
static int resolve_on_target(struct sl_ctx *ctx, git_repository *git, const char *name,
			     git_oid *out, struct sl_err *err)
{
	git_object *obj = NULL, *c = NULL;
	git_oid tip;
	int error;

	if (!name || !*name || name[0] == '-')
		return sl_err_set(err, SL_EINVALID, "'%s' is not a commit", name ? name : "");
	if (git_revparse_single(&obj, git, name) != 0 ||
	    git_object_peel(&c, obj, GIT_OBJECT_COMMIT) != 0) {
		git_object_free(obj);
		git_error_clear();
		return sl_err_set(err, SL_ENOTFOUND, "no commit '%s' in this repository", name);
	}
	git_oid_cpy(out, git_object_id(c));
	git_object_free(c);
	git_object_free(obj);
	if ((error = git_reference_name_to_id(&tip, git, ctx->target_ref)) != 0)
		return sl_err_git(err, error, "cannot read the target '%s'", ctx->cfg->target);
	if (!git_oid_equal(&tip, out) && git_graph_descendant_of(git, &tip, out) != 1)
		return sl_err_set(err, SL_ECONFLICT, "commit %.12s is not on the target '%s'; "
				  "nothing to accept", git_oid_tostr_s(out), ctx->cfg->target);
	return 0;
}

int target_accept(struct sl_ctx *ctx, const char *commit, size_t *n,
			 struct target_alert *alert, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	struct artifact_oids all = { NULL, 0, 0 };
	git_repository *git = NULL;
	char *root = NULL, *last = NULL;
	git_oid id, lid;
	int error, have_last = 0;

	*n = 0;
	memset(alert, 0, sizeof(*alert));
	if ((error = sl_repo_lock(&ctx->repo, &lock, err)) != 0)
		return error;
	if ((error = git_repository_open(&git, ctx->repo.root)) != 0) {
		error = sl_err_git(err, error, "cannot open the repository '%s'", ctx->repo.root);
		goto out;
	}
	if ((error = resolve_on_target(ctx, git, commit, &id, err)) != 0)
		goto out;
	if ((error = store_target_get(ctx->st, ctx->target_ref, &root, &last, err)) == 0)
		have_last = git_oid_fromstr(&lid, last) == 0;
	else if (error != SL_ENOTFOUND)
		goto out;
	sl_err_clear(err);
	/* nothing observed yet: just that commit (the first observation takes the rest) */
	if (!have_last && artifact_oids_add(&all, &id)) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((have_last && (error = walk_new(git, &id, &lid, &all, err)) != 0) ||
	    (all.n && (error = record_accepted(ctx, &all, git_oid_tostr_s(&id), err)) != 0))
		goto out;
	*n = all.n;
	error = target_watch(ctx, NULL, 1, alert, err);
out:
	free(all.v);
	free(root);
	free(last);
	git_repository_free(git);
	sl_lock_release(&lock);
	return error;
}

int target_exists(struct sl_ctx *ctx, struct sl_err *err)
{
	git_repository *repo = NULL;
	git_reference *ref = NULL;
	int rc, error = 0;

	if ((rc = git_repository_open(&repo, ctx->repo.root)) < 0)
		return sl_err_git(err, rc, "cannot open the repository '%s'", ctx->repo.root);
	rc = git_reference_lookup(&ref, repo, ctx->target_ref);
	if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC)
		error = sl_err_set(err, SL_EINVALID,
				   "the target branch '%s' does not exist in '%s'; create it or "
				   "fix 'target' in .system/config.yaml (nothing was started)",
				   ctx->cfg->target, ctx->repo.root);
	else if (rc < 0)
		error = sl_err_git(err, rc, "cannot read the target branch '%s'", ctx->target_ref);
	git_reference_free(ref);
	git_repository_free(repo);
	return error;
}
