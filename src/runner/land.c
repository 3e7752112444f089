/*
 * What a landing checks and writes, for the merge and the train alike: the
 * approval still holds (nothing changed since the review), the merge
 * commit's message, trailers and identity, whether a head holds a tip;
 * before it, the newest merged run sealed (a killed merge's manifest), and
 * after it, a merged run's branch deleted.
 */
#include "runner/runner_int.h"
#include "store/store.h"
#include "worktree/worktree.h"
#include "artifact/artifact.h"
#include "merge/merge.h"
#include "core/fs.h"
#include "core/fault.h"
#include "core/log.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int unchanged_since_review(struct step *s, struct sl_err *err)
{
	char head[41];
	int error, committed = 0;

	if (!sl_path_exists(s->wt))
		return 0;
	error = step__snapshot(s, "sluice snapshot: changes after the review",
			       STEP_SNAP_LOCK | STEP_SNAP_QUICK, head, &committed, err);
	if (error == SL_ECONFLICT || error == SL_EINVALID)
		return step__fail(s, RUN_FAILED, err, "before the merge: %s", err->msg);
	if (error) /* locked, busy: the run stays approved and the next tick tries again */
		return error;
	if (!strcmp(head, s->run.head_commit))
		return 0;
	if ((error = step__set(s, err, "head_commit", head, "approved_tree", NULL, NULL)) != 0 ||
	    (error = step__record_diff(s, head, err)) != 0)
		return error;
	error = step__move(s, RUN_GATING, err,
			   "the run branch changed after the review (now %.12s); gating and "
			   "reviewing again",
			   head);
	return error ? error : STEP_SENT_BACK;
}

/* The options of this run's merge commit; the strings stay the caller's. */
static void fill_merge_opts(struct step *s, struct merge_commit_opts *o,
			    struct step_merge_msg *mm)
{
	const struct sl_buf *subject = &mm->subject;
	const char *title = mm->title;

	memset(o, 0, sizeof(*o));
	sl_repo_identity(&mm->who, s->ctx->repo.root, s->ctx->cfg->commit.name,
			 s->ctx->cfg->commit.email);
	o->name = mm->who.name;
	o->email = mm->who.email;
	o->subject = subject->len ? subject->ptr : NULL;
	o->target = s->ctx->cfg->target;
	o->head = s->run.head_commit;
	o->work_order_id = s->run.work_order_id;
	o->title = title ? title : s->run.work_order_id;
	o->run_id = s->run.id;
	o->reviewer = s->run.reviewer ? s->run.reviewer : "unknown";
	o->resolved_with = s->run.mode == RUN_MODE_RESOLVE ? s->run.conflict_with_run_id : NULL;
	o->journal = mm->journal;
}

int step__merge_msg(struct step *s, struct step_merge_msg *mm, struct merge_commit_opts *o,
		    struct sl_err *err)
{
	json_t *fields = step__wo_fields(s, s->run.work_order_id, &mm->title);
	struct merge_subject_vars vars = { s->run.id, s->run.branch_name, s->run.reviewer, fields };
	int error;

	sl_buf_init(&mm->subject, 0);
	mm->journal = sl_path_join(s->ctx->repo.sysdir, RUNNER_MERGE_JOURNAL);
	error = merge_subject_render(&mm->subject, s->ctx->cfg->merge.message, &vars, err);
	json_decref(fields);
	if (!error && !mm->journal)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	if (!error)
		fill_merge_opts(s, o, mm);
	return error;
}

void step__merge_msg_release(struct step_merge_msg *mm)
{
	sl_buf_release(&mm->subject);
	free(mm->title);
	free(mm->journal);
	memset(mm, 0, sizeof(*mm));
}

int step__approval_holds(struct step *s, struct sl_err *err)
{
	char tree[41];
	int error;

	if ((error = unchanged_since_review(s, err)) != 0)
		return error;
	if ((error = step__tree_of(s, s->run.head_commit, tree, err)) != 0)
		return error;
	if (!s->run.approved_tree || strcmp(tree, s->run.approved_tree)) {
		error = step__move(s, RUN_REVIEWING, err,
				   "the tree changed after the approval (%.12s); reviewing again",
				   tree);
		return error ? error : STEP_SENT_BACK;
	}
	return 0;
}

int step__holds(struct step *s, const char *head, const char *tip)
{
	git_repository *repo = NULL;
	git_oid h, t;
	int yes = 0;

	if (head && tip && git_oid_fromstr(&h, head) == 0 && git_oid_fromstr(&t, tip) == 0 &&
	    git_repository_open(&repo, s->ctx->repo.root) == 0)
		yes = git_oid_equal(&h, &t) || git_graph_descendant_of(repo, &h, &t) == 1;
	git_repository_free(repo);
	return yes;
}

/*
 * A run merged by a process killed before it wrote manifest.json: seal it
 * now, under the repository lock, before anything else merges (so the
 * chain stays in merge order). Only the newest merged run can be in that
 * window, as every merge seals it first (runner__seal_newest); an older
 * run without a manifest is a finding for `sluice audit`, never something
 * to paper over.
 */
int runner__seal(struct sl_ctx *ctx, const struct store_run *runs, size_t n,
		 struct sl_lock *lock, struct sl_err *err)
{
	const char *id = artifact_unsealed_newest(&ctx->repo, runs, n);
	int error = 0;

	if (id && (!lock || (error = runner__lock_repo(ctx, lock, err)) == 0) &&
	    (error = artifact_manifest_write(&ctx->repo, ctx->st, id, err)) == 0)
		sl_log(SL_LOG_WARN, "run %s merged without a manifest (interrupted); sealed it now",
		       id);
	return error;
}

void runner__seal_newest(struct sl_ctx *ctx)
{
	struct sl_err err = SL_ERR_INIT;
	struct store_run *runs = NULL;
	size_t n = 0;

	if (store_chain_newest_merged(ctx->st, &runs, &n, &err) != 0 ||
	    runner__seal(ctx, runs, n, NULL, &err) != 0)
		sl_log(SL_LOG_WARN, "cannot seal the run merged before: %s", err.msg);
	store_runs_free(runs, n);
}

/*
 * The branch of a merged run, left behind by a crash after its worktree
 * went, or by a worktree whose HEAD was detached: see runner_int.h.
 */
void runner__delete_merged_branch(struct sl_ctx *ctx, git_repository *repo,
				  const struct store_run *run)
{
	git_repository *own = NULL;
	git_reference *ref = NULL;
	git_oid target;
	char *name, *lock;

	if (!repo && git_repository_open(&own, ctx->repo.root) == 0)
		repo = own;
	if (!run->branch_name || !repo ||
	    !(name = sl_path_fmt("refs/heads/%s", run->branch_name))) {
		git_repository_free(own);
		return;
	}
	/* a lock on a merged run's branch is one a killed sluice left (we hold the repo lock) */
	if ((lock = sl_path_fmt("%s/%s.lock", ctx->repo.gitdir, name)))
		unlink(lock);
	free(lock);
	if (git_reference_lookup(&ref, repo, name) == 0 &&
	    git_reference_name_to_id(&target, repo, ctx->target_ref) == 0 &&
	    git_reference_target(ref) &&
	    (git_oid_equal(&target, git_reference_target(ref)) ||
	     git_graph_descendant_of(repo, &target, git_reference_target(ref)) == 1) &&
	    !worktree_branch_checked_out(git_repository_commondir(repo), name) &&
	    git_reference_delete(ref) == 0)
		sl_log(SL_LOG_INFO, "deleted the branch '%s' of merged run %s", run->branch_name,
		       run->id);
	git_reference_free(ref);
	git_repository_free(own);
	free(name);
}
