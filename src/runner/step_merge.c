/* The merging and resolving states: the merge, the conflict context, the resolution. */
#include "runner/runner_int.h"
#include "store/store.h"
#include "worktree/worktree.h"
#include "artifact/artifact.h"
#include "runner/runner.h"
#include "merge/merge.h"
#include "core/fs.h"
#include "core/fault.h"
#include "core/id.h"
#include "core/template.h"
#include "core/log.h"
#include "core/time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int write_merge_json(struct step *s, const struct merge_commit_result *mr,
			    struct sl_err *err)
{
	char commit[41], tip[41], tree[41], when[40];
	json_t *j;
	int error;

	git_oid_tostr(commit, sizeof(commit), &mr->commit);
	git_oid_tostr(tip, sizeof(tip), &mr->tip);
	git_oid_tostr(tree, sizeof(tree), &mr->tree);
	sl_time_iso(when, sizeof(when), sl_now_ms());
	j = json_pack("{s:s, s:[s,s], s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:b, s:s?, s:b, s:s}",
		      "merge_commit",
		      commit, "parents", tip, s->run.head_commit, "target", s->ctx->target_ref,
		      "base", s->run.base_commit, "head", s->run.head_commit, "tree", tree,
		      "approved_tree", s->run.approved_tree, "merged_at", when, "attempts",
		      mr->attempts, "checkout_updated", mr->checkout_updated, "resolved_with",
		      s->run.mode == RUN_MODE_RESOLVE ? s->run.conflict_with_run_id : NULL, "tested",
		      1, "train", "train.json");
	if (!j)
		return sl_err_set(err, SL_ERROR, "cannot build merge.json");
	error = step__write_json(s, "merge.json", j, err);
	sl_fault(error ? NULL : "merge.after_merge_json");
	json_decref(j);
	return error;
}

static void cleanup_after_merge(struct step *s)
{
	struct sl_err err = SL_ERR_INIT;
	int deleted = 0;

	if (sl_path_exists(s->wt) &&
	    runner__retire_worktree(s->ctx, s->run.id, step__excluded(s), 0, 1, &deleted,
				    &err) != 0)
		sl_log(SL_LOG_WARN, "run %s merged, but its worktree stays: %s", s->run.id, err.msg);
	/* the worktree gone before, or on a detached HEAD: the store names the branch */
	if (!deleted)
		runner__delete_merged_branch(s->ctx, NULL, &s->run);
}

static int merged(struct step *s, const struct merge_commit_result *mr, struct sl_err *err)
{
	char commit[41], why[256], reason[512];
	int error;

	git_oid_tostr(commit, sizeof(commit), &mr->commit);
	if (mr->attempts && target_landed(s->ctx, commit, err) != 0) {
		/* the next observation finds this landing in the store (or pending) */
		sl_log(SL_LOG_WARN, "run %s: cannot record the landing as the target's tip: %s",
		       s->run.id, err->msg);
		sl_err_clear(err);
	}
	if ((error = step__train_landed(s, mr, err)) != 0 ||
	    (error = write_merge_json(s, mr, err)) != 0 ||
	    (error = step__set(s, err, "merge_commit", commit, "merge_status",
			       run_merge_status_name(RUN_MERGE_STATUS_MERGED), NULL)) != 0)
		return error;
	snprintf(reason, sizeof(reason), "merged into %s as %.12s%s", s->ctx->cfg->target, commit,
		 mr->checkout_updated ? " (checkout updated)" : "");
	snprintf(why, sizeof(why), "merged by run %s as %.12s", s->run.id, commit);
	if ((error = step__finish(s, RUN_MERGED, WO_DONE, reason, why, err)) != 0)
		return error;
	sl_fault("merge.after_store");
	if (artifact_manifest_write(&s->ctx->repo, s->ctx->st, s->run.id, err) != 0) {
		/* the next tick's reconciliation seals it */
		sl_log(SL_LOG_ERROR, "run %s merged, but its manifest.json could not be written: %s",
		       s->run.id, err->msg);
		sl_err_clear(err);
	}
	sl_fault("merge.after_manifest");
	return STEP_STOP;
}

/* mr->commit is a merge made earlier: take its first parent and tree from it. */
static int found_merge(struct step *s, struct merge_commit_result *mr, struct sl_err *err)
{
	git_repository *repo = NULL;
	git_commit *c = NULL;
	int rc, error = 0;

	if ((rc = git_repository_open(&repo, s->ctx->repo.root)) < 0 ||
	    (rc = git_commit_lookup(&c, repo, &mr->commit)) < 0 || git_commit_parentcount(c) != 2)
		error = sl_err_git(err, rc < 0 ? rc : GIT_ERROR, "cannot read the earlier merge of "
				   "run '%s'", s->run.id);
	else {
		git_oid_cpy(&mr->tip, git_commit_parent_id(c, 0));
		git_oid_cpy(&mr->tree, git_commit_tree_id(c));
		mr->attempts = 0;
	}
	git_commit_free(c);
	git_repository_free(repo);
	return error;
}

/*
 * The approval is of the recorded head. If the run branch moved on, or its
 * worktree holds new changes (someone worked there after the review), they
 * are committed and recorded, and the run goes through gates and review
 * again: nothing unreviewed is merged, and nothing is lost by deleting the
 * branch after the merge. Returns 0 when nothing changed, STEP_SENT_BACK when it
 * sent the run back, STEP_STOP when the run failed, or an error.
 */
/* What the guard of a landing needs: the run, and the car's commit it lands (or NULL). */
struct landing_guard {
	struct step *s;
	const char *commit;
};

/*
 * Right before each landing, under the repository lock, with the tip the
 * target moves from: no landing while the target carries a commit from a
 * run that sluice did not land (target/target.h). Then the intent: the
 * store names the car's commit as the one sluice lands now, before the
 * compare-and-swap, so that a crash right after it is told from a move by
 * someone else onto the same car (docs/RELIABILITY.md).
 */
static int target_guard(void *data, const git_oid *tip, char *why, size_t n)
{
	struct landing_guard *g = data;
	struct step *s = g->s;
	struct target_alert a;
	struct sl_err err = SL_ERR_INIT;
	int rc = target_watch(s->ctx, tip, 1, &a, &err);

	if (rc == 0 && g->commit &&
	    (rc = store_train_landing_set(s->ctx->st, s->run.id, g->commit, &err)) != 0) {
		snprintf(why, n, "cannot record the landing of %.12s: %s", g->commit, err.msg);
		return rc;
	}

	if (rc == 1)
		snprintf(why, n, "merge held: the target '%s' carries commit %.12s from run %s that "
			 "sluice did not land (unreviewed); reset '%s' to before it or run "
			 "'sluice accept-target %s'", s->ctx->cfg->target, a.commit,
			 a.run[0] ? a.run : "(unknown)", s->ctx->cfg->target, a.commit);
	else if (rc < 0)
		snprintf(why, n, "cannot check the target's tip before landing: %s", err.msg);
	return rc;
}

/*
 * The merge, under the repository lock; *rc is merge_commit()'s. When it
 * landed (*rc 0) it is recorded (merged()) still under the lock: the
 * manifest chain follows merge order.
 */
static int merge_locked(struct step *s, const struct merge_commit_opts *o,
			struct merge_commit_result *mr, int *rc, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	int error = 0;

	if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
		return error;
	runner__seal_newest(s->ctx); /* a merge killed before its manifest: the chain first */
	*rc = merge_commit(s->ctx->repo.root, o, mr, err);
	if (*rc == SL_EEXISTS && !git_oid_is_zero(&mr->commit)) {
		/* merged before a crash, the store did not hear of it: record that merge */
		sl_err_clear(err);
		*rc = found_merge(s, mr, err);
	}
	if (*rc == 0) {
		sl_fault("merge.before_store");
		error = merged(s, mr, err);
		if (error >= 0)
			cleanup_after_merge(s);
	}
	sl_lock_release(&lock);
	return error;
}

/* The merge did not land (rc): nothing to merge, a conflict, or wait for the next tick. */
static int not_landed(struct step *s, int rc, const struct merge_commit_result *mr,
		      struct sl_err *err)
{
	char why[SL_ERR_MSG_MAX];
	int error;

	if (rc == SL_EEXISTS)
		return step__fail(s, RUN_FAILED, err, "nothing to merge: %s", err->msg);
	if (rc == SL_ECONFLICT && mr->status == MERGE_CONFLICT) {
		char tip[41];
		sl_err_clear(err);
		git_oid_tostr(tip, sizeof(tip), &mr->tip);
		return step__on_conflict(s, tip, mr->reason, err);
	}
	if (rc == SL_ETRANSIENT && mr->status == MERGE_MOVED) {
		/* not on the base it was tested on: the train builds and tests it again */
		sl_err_clear(err);
		return step__move(s, RUN_APPROVED, err, "in the train: '%s' moved before the landing; "
				  "the car is built and tested again", s->ctx->cfg->target);
	}
	/* deferred (the user's checkout), locked, target missing: wait, retry next tick */
	snprintf(why, sizeof(why), "%s", mr->reason[0] ? mr->reason : err->msg);
	sl_err_clear(err);
	error = step__move(s, RUN_APPROVED, err, "merge deferred: %s; retried next tick", why);
	return error ? error : STEP_STOP;
}

/* merging: land the run's tested car of the merge train (runner/step_train.c). */
int step_merge(struct step *s, struct sl_err *err)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result mr = MERGE_COMMIT_RESULT_INIT;
	struct step_merge_msg mm = STEP_MERGE_MSG_INIT;
	struct store_car car;
	struct landing_guard guard = { s, NULL };
	int error, rc = 0;

	if ((error = step__landing_car(s, &car, err)) != 0)
		return error == STEP_SENT_BACK ? STEP_NEXT : error;
	guard.commit = car.commit;
	if ((error = step__merge_msg(s, &mm, &o, err)) != 0)
		goto out;
	o.commit = car.commit;
	o.find_only = car.commit == NULL; /* a landing cut short: record it, merge nothing */
	o.guard = target_guard;
	o.guard_data = &guard;
	sl_fault("train.before_land");
	if ((error = merge_locked(s, &o, &mr, &rc, err)) == 0 && rc != 0)
		error = not_landed(s, rc, &mr, err);
out:
	merge_commit_result_release(&mr);
	step__merge_msg_release(&mm);
	store_car_release(&car);
	return error;
}

/*
 * A person's resolution of this conflict (`sluice retry`, human.c): the
 * run's head holds the conflicted tip. Its gates run, as on a builder's;
 * so also when a tick was interrupted while they ran.
 */
static int resolved_by_person(struct step *s, const struct store_conflict *c, int *moved,
			      struct sl_err *err)
{
	*moved = step__person_resolved(s) && step__holds(s, s->run.head_commit, c->target_tip);
	if (!*moved)
		return 0;
	return step__move(s, RUN_GATING, err, "attempt %d: the resolution a person made "
			  "(%.12s); running the gates on it", s->run.attempt, s->run.head_commit);
}

int step_resolve(struct step *s, struct sl_err *err)
{
	struct merge_paths conflicted = MERGE_PATHS_INIT;
	struct sl_lock lock = SL_LOCK_INIT;
	/* the tip and head recorded when the merge conflicted (store), not conflict.json */
	struct store_conflict c = { 0 };
	const char *tip, *run_head;
	char n[16], why[600], msg[800];
	int error, moved = 0;

	if ((error = store_conflict_get(s->ctx->st, s->run.id, &c, err)) != 0) {
		if (error != SL_ENOTFOUND)
			goto out;
		sl_err_clear(err);
		error = step__move(s, RUN_MERGE_CONFLICT, err,
				   "no merge conflict is recorded for this run; a person must decide");
		goto out;
	}
	tip = c.target_tip;
	run_head = c.run_head;
	if ((error = resolved_by_person(s, &c, &moved, err)) != 0 || moved)
		goto out;
	/*
	 * The run's budget spent: no builder resolves, a person may
	 * (docs/budgets.md), from a clean worktree: a failed resolution's half
	 * merge is not the person's to commit.
	 */
	if ((error = step__run_budget(s, why, sizeof(why), NULL, err)) != 0) {
		if (error > 0) {
			snprintf(msg, sizeof(msg), "%s; the conflict waits for a person: see "
				 "'sluice show %s'", why, s->run.id);
			error = step__to_person(s, 1, msg, err);
		}
		goto out;
	}
	if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
		goto out;
	/* start from the run's own head again (a failed resolution may have left a half merge) */
	if ((error = worktree_reset(s->wt, run_head, step__excluded(s), err)) == 0)
		error = merge_into_worktree(s->wt, tip, &conflicted, err);
	sl_lock_release(&lock);
	if (error)
		goto out;
	sl_fault("resolve.after_markers");
	snprintf(n, sizeof(n), "%d", s->run.attempt + 1);
	if ((error = step__set(s, err, "mode", run_mode_name(RUN_MODE_RESOLVE), "base_commit", tip,
			       "head_commit", run_head, "attempt", n, NULL)) != 0)
		goto out;
	if (c.kind == CONFLICT_SEMANTIC)
		error = step__move(s, RUN_BUILDING, err, "attempt %d: resolving the semantic "
				   "conflict with the builder (the merge gates failed)",
				   s->run.attempt);
	else
		error = step__move(s, RUN_BUILDING, err,
				   "attempt %d: resolving %zu conflicted file%s with the builder",
				   s->run.attempt, conflicted.n, conflicted.n == 1 ? "" : "s");
out:
	merge_paths_release(&conflicted);
	store_conflict_release(&c);
	return error;
}
