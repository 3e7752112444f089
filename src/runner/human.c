/* The human commands: approve, reject, request-changes, retry, abandon (docs/design.md, Commands). */
#include "store/store.h"
#include "runner/runner_int.h"
#include "builder/builder.h"
#include "worktree/worktree.h"
#include "builder/builder.h"
#include "reviewer/reviewer.h"
#include "merge/merge.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/fault.h"
#include "core/sha256.h"
#include "core/utf8.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REVIEW_REQUEST_MAX ((size_t)64 << 20)
#define LET_GO_WAIT_MS ((int64_t)30 * 1000) /* a waiting worker lets go within a poll */

/* Open a step on a run named by id or prefix, holding its run lock. */
static int step_open_wait(struct step *s, struct sl_ctx *ctx, const char *run,
			  struct sl_lock *lock, int64_t wait_ms, struct sl_err *err)
{
	int error;

	memset(s, 0, sizeof(*s));
	s->ctx = ctx;
	if ((error = store_run_get(ctx->st, run, &s->run, err)) != 0)
		return error;
	/* a worker waiting in the merge train lets go when asked (runner__lock_run_asking) */
	error = wait_ms || s->run.state != RUN_APPROVED
			? runner__lock_run(ctx, s->run.id, wait_ms, lock, err)
			: runner__lock_run_asking(ctx, s->run.id, LET_GO_WAIT_MS, lock, err);
	if (error) {
		sl_err_clear(err);
		return sl_err_set(err, SL_ELOCKED,
				  "run '%s' is being worked on by another sluice process; try again "
				  "when it is done",
				  s->run.id);
	}
	/* read again under the lock */
	if ((error = step__reload(s, err)) != 0)
		return error;
	s->run_dir = sl_repo_run_path(&ctx->repo, s->run.id, NULL);
	s->wt = runner__worktree_path(ctx, s->run.id);
	return s->run_dir && s->wt ? 0 : sl_err_set(err, SL_ERROR, "out of memory");
}

static int step_open(struct step *s, struct sl_ctx *ctx, const char *run, struct sl_lock *lock,
		     struct sl_err *err)
{
	return step_open_wait(s, ctx, run, lock, 0, err);
}

static void step_close(struct step *s, struct sl_lock *lock);
static int check_seen(const struct store_run *run, const struct runner_seen *seen,
		      struct sl_err *err);

/*
 * Abandon: a run whose job a tick follows is locked by that tick. Its open
 * jobs are cancelled first (recorded as such): the tick sees it within a
 * poll and lets go of the run, which is then waited for. No job is
 * cancelled for a run that is not what the person saw (read without the
 * lock here, and again under it).
 */
static int cancel_and_wait(struct step *s, struct sl_ctx *ctx, const char *run,
			   const struct runner_seen *seen, struct sl_lock *lock, const char *why,
			   struct sl_err *err)
{
	int error, n = 0;

	sl_err_clear(err);
	if ((error = check_seen(&s->run, seen, err)) != 0)
		return error;
	if (exec_jobs_cancel(ctx->cfg, ctx->st, s->run.id, why, &n) != 0 || !n)
		return sl_err_set(err, SL_ELOCKED,
				  "run '%s' is being worked on by another sluice process; try again "
				  "when it is done",
				  s->run.id);
	step_close(s, lock);
	return step_open_wait(s, ctx, run, lock, 2 * ctx->cfg->executor.poll_ms + 60 * 1000, err);
}

static int open_for_abandon(struct step *s, struct sl_ctx *ctx, const char *run,
			    const struct runner_seen *seen, struct sl_lock *lock,
			    struct sl_err *err)
{
	struct runner_seen same = RUNNER_SEEN_INIT;
	char why[256];
	int error = step_open(s, ctx, run, lock, err), n = 0;

	snprintf(why, sizeof(why), "the run was abandoned by %s", sl_ctx_who(ctx));
	if (seen)
		same = *seen;
	if (error == SL_ELOCKED && exec_remote(ctx->cfg)) {
		if ((error = cancel_and_wait(s, ctx, run, seen, lock, why, err)) != 0)
			return error;
		same.state = NULL; /* the tick let go of the jobs cancelled here: that state is ours */
	}
	/* read under the lock: the run is still what the person saw */
	if (error || (error = check_seen(&s->run, seen ? &same : NULL, err)) != 0)
		return error;
	/* the jobs of a tick that was killed: nobody follows them */
	if (exec_remote(ctx->cfg))
		exec_jobs_cancel(ctx->cfg, ctx->st, s->run.id, why, &n);
	return 0;
}

static void step_close(struct step *s, struct sl_lock *lock)
{
	store_run_release(&s->run);
	free(s->run_dir);
	free(s->wt);
	step__diff_forget(s);
	sl_lock_release(lock);
}

/*
 * The run, read under its lock, is still what the person saw (struct
 * runner_seen): else nothing is done, and the message says what it is now
 * against what was seen, so that an approval never lands on an attempt
 * nobody was shown.
 */
static int check_seen(const struct store_run *run, const struct runner_seen *seen,
		      struct sl_err *err)
{
	const char *head = run->head_commit ? run->head_commit : "";
	const char *state = run_state_name(run->state);
	char was[160] = "", now[64];
	size_t n = 0;

	if (!seen || ((!seen->head || !strcmp(seen->head, head)) &&
		      (seen->attempt < 0 || seen->attempt == run->attempt) &&
		      (!seen->state || !strcmp(seen->state, state))))
		return 0;
	if (seen->state)
		n += (size_t)snprintf(was + n, sizeof(was) - n, "%s ", seen->state);
	if (seen->attempt >= 0 && n < sizeof(was))
		n += (size_t)snprintf(was + n, sizeof(was) - n, "on attempt %d ", seen->attempt);
	if (seen->head && n < sizeof(was))
		snprintf(was + n, sizeof(was) - n, seen->attempt >= 0 ? "(head %.12s) " : "at head %.12s ",
			 *seen->head ? seen->head : "none");
	snprintf(now, sizeof(now), "%.12s", *head ? head : "none");
	return sl_err_set(err, SL_ECONFLICT, "run '%s' is now %s on attempt %d (head %s), not %sthat %s",
			  run->id, state, run->attempt, now, was,
			  seen->where ? seen->where : "was seen; nothing was done: read it again");
}

/*
 * What a person read before `sluice approve`: review-request.json and
 * diff.patch in the run folder, where a process a builder or gate left
 * behind can rewrite them (a harmless diff read, the real tree approved).
 * Both are written again from git; when they were not what sluice writes,
 * the approval is refused (SL_ECONFLICT) and the person reads them again.
 */
static int check_review_files(struct step *s, const char *tree, struct sl_err *err)
{
	static const char *const keys[] = { "diff", "diff_bytes", "files_changed", "tree", "base",
					    "head", "kind", "report", NULL };
	char before[SL_SHA256_HEX_LEN + 1] = "", after[SL_SHA256_HEX_LEN + 1] = "";
	char *patch = step__path(s, "diff.patch"), *req_path = step__path(s, "review-request.json");
	struct sl_err ignored = SL_ERR_INIT;
	json_t *old = NULL, *req = NULL;
	const char *changed = NULL, *const *k;
	int error;

	step__sanitize_run_dir(s);
	if (!patch || !req_path) {
		free(patch);
		free(req_path);
		return sl_err_set(err, SL_ERROR, "out of memory");
	}
	if (sl_sha256_file(before, patch, &ignored) != 0)
		before[0] = '\0';
	sl_json_read(req_path, REVIEW_REQUEST_MAX, &old, &ignored); /* missing, link, bad: changed */
	free(req_path);
	if ((error = step__review_request(s, tree, &req, err)) != 0)
		goto out;
	if (sl_sha256_file(after, patch, err) != 0) {
		error = err->code ? err->code : SL_ERROR;
		goto out;
	}
	if (strcmp(before, after))
		changed = "diff.patch";
	for (k = keys; !changed && *k; k++)
		if (!json_is_object(old) ||
		    ((json_object_get(old, *k) || json_object_get(req, *k)) && /* a report has no diff */
		     !json_equal(json_object_get(old, *k), json_object_get(req, *k))))
			changed = "review-request.json";
	if (changed)
		error = sl_err_set(err, SL_ECONFLICT,
				   "%s of run '%s' was not what sluice wrote (changed after the "
				   "review package was made: a process the builder or a gate left "
				   "behind?); nothing is approved. sluice wrote it again from git: "
				   "read the run again ('sluice show %s', the run folder's "
				   "review-request.json and diff.patch), then approve",
				   changed, s->run.id, s->run.id);
out:
	json_decref(old);
	json_decref(req);
	free(patch);
	return error;
}

/*
 * A person's request for changes follows the retry rules as the reviewer's
 * does (docs/builders.md "Retry rules"), but never ends the work order:
 * when the rules allow no other attempt, nothing is done (SL_EINVALID) and
 * the person approves, rejects, or adds rules. Without any rule, each
 * request gets its attempt: the person decides each time. *d: the decision. A
 * resolution spends one of merge.resolve_attempts instead (d unused).
 */
static int changes_allowed(struct step *s, struct build_retry_decision *d, struct sl_err *err)
{
	static const char *const review_failed[] = { "review", NULL };
	struct build_retry_state rs = BUILD_RETRY_STATE_INIT;
	int error;

	memset(d, 0, sizeof(*d));
	if (s->run.mode == RUN_MODE_RESOLVE)
		return 0;
	if ((error = build_retry_load(s->ctx->st, s->run.id, &rs, err)) != 0 ||
	    (error = build_retry_decide(s->ctx->cfg, &rs, s->run.attempt, review_failed, 0, d,
					err)) != 0)
		return error;
	if (d->retry)
		return 0;
	if (!s->ctx->cfg->nretry) {
		/* no rules: a person in the loop asks for each attempt, so each is granted */
		d->retry = 1;
		d->next_attempt = s->run.attempt + 1;
		snprintf(d->reason, sizeof(d->reason), "attempt %d follows (no retry rules: a "
			 "person's request is granted)", d->next_attempt);
		return 0;
	}
	return sl_err_set(err, SL_EINVALID,
			  "run '%s' is on the last attempt its retry rules allow (%s); nothing was "
			  "done: approve it, reject it, or add a retry rule (docs/builders.md)",
			  s->run.id, d->reason);
}

/*
 * request_changes: the verdict kept with the attempt, the retry rules'
 * state `d` for the next one, then queued: the next tick prepares (the same
 * worktree) and builds attempt+1, as after `sluice retry`. A resolution
 * spends one of merge.resolve_attempts (step__retry_or_fail).
 */
static int manual_changes(struct step *s, json_t *j, const char *reviewer, const char *message,
			  const struct build_retry_decision *d, struct sl_err *err)
{
	static const char *const review_failed[] = { "review", NULL };
	char name[64], why[1200];
	size_t i;
	int error;

	snprintf(name, sizeof(name), "attempts/%d/review.json", s->run.attempt);
	if ((error = step__write_json(s, name, j, err)) != 0)
		return error;
	/* one line in the reason, as the reviewer's comments (step_review.c), cut at a character */
	snprintf(why, sizeof(why), "%s asked for changes: %.900s", reviewer, message);
	sl_utf8_drop_cut(why);
	for (i = 0; why[i]; i++)
		if ((unsigned char)why[i] < 0x20 || why[i] == 0x7f)
			why[i] = ' ';
	if (s->run.mode == RUN_MODE_RESOLVE)
		return step__retry_or_fail(s, review_failed, 0, why, err);
	if ((error = build_retry_save(s->ctx->st, s->run.id, s->run_dir, &d->state, err)) != 0)
		return error;
	return step__move(s, RUN_QUEUED, err, "%s; %s", why, d->reason);
}

static int manual_verdict(struct sl_ctx *ctx, const char *run, const char *verdict,
			  const char *message, const struct runner_seen *seen, struct sl_err *err)
{
	struct reviewer_verdict v = REVIEWER_VERDICT_INIT;
	struct build_retry_decision d;
	struct sl_lock lock = SL_LOCK_INIT;
	struct step s;
	json_t *j = NULL;
	char tree[41], reviewer[256];
	int error;

	if ((error = step_open(&s, ctx, run, &lock, err)) != 0 ||
	    (error = check_seen(&s.run, seen, err)) != 0)
		goto out;
	if (s.run.state != RUN_AWAITING_REVIEW) {
		error = sl_err_set(err, SL_EINVALID,
				   "run '%s' is %s, not %s; only a run waiting for a person can be "
				   "approved, rejected or sent back for changes",
				   s.run.id, run_state_name(s.run.state),
				   run_state_name(RUN_AWAITING_REVIEW));
		goto out;
	}
	if ((error = step__tree_of(&s, s.run.head_commit, tree, err)) != 0)
		goto out;
	if (!strcmp(verdict, "approve") && (error = check_review_files(&s, tree, err)) != 0)
		goto out;
	if (!strcmp(verdict, "request_changes") && (error = changes_allowed(&s, &d, err)) != 0)
		goto out;
	snprintf(reviewer, sizeof(reviewer), "%s (manual)", sl_ctx_who(ctx));
	j = json_pack("{s:s, s:s, s:s}", "verdict", verdict, "comments", message ? message : "",
		      "reviewer", reviewer);
	if ((error = reviewer_verdict_from_json(&v, j, tree, err)) != 0)
		goto out;
	error = step__write_json(&s, "review.json", j, err);
	if (!error && !strcmp(verdict, "request_changes")) {
		error = manual_changes(&s, j, reviewer, message, &d, err);
	} else if (!error && step__worktree_mode(&s) != SL_WORKTREE_READ_WRITE) {
		/* a read-only or none run: its report, never a merge */
		error = step__report_verdict(&s, &v, tree, message ? message : "", err);
		error = error == STEP_STOP ? 0 : error;
	} else if (!error && !strcmp(verdict, "approve")) {
		if ((error = step__set(&s, err, "approved_tree", tree, "reviewer", reviewer,
				       "merge_status", run_merge_status_name(RUN_MERGE_STATUS_PENDING),
				       NULL)) == 0)
			error = step__move(&s, RUN_APPROVED, err,
					   "approved by %s (tree %.12s); the next tick merges it",
					   reviewer, tree);
	} else if (!error) {
		error = step__fail(&s, RUN_REJECTED, err, "rejected by %s: %s", reviewer, message);
	}
	if (error > 0)
		error = 0;
out:
	reviewer_verdict_release(&v);
	json_decref(j);
	step_close(&s, &lock);
	return error;
}

int runner_approve_seen(struct sl_ctx *ctx, const char *run, const char *message,
			const struct runner_seen *seen, struct sl_err *err)
{
	return manual_verdict(ctx, run, "approve", message, seen, err);
}

int runner_approve(struct sl_ctx *ctx, const char *run, const char *message,
		   struct sl_err *err)
{
	return runner_approve_seen(ctx, run, message, NULL, err);
}

int runner_reject_seen(struct sl_ctx *ctx, const char *run, const char *message,
		       const struct runner_seen *seen, struct sl_err *err)
{
	if (!message || !*message)
		return sl_err_set(err, SL_EINVALID, "a rejection needs a reason: -m TEXT");
	return manual_verdict(ctx, run, "reject", message, seen, err);
}

int runner_reject(struct sl_ctx *ctx, const char *run, const char *message,
		  struct sl_err *err)
{
	return runner_reject_seen(ctx, run, message, NULL, err);
}

int runner_request_changes_seen(struct sl_ctx *ctx, const char *run, const char *message,
				const struct runner_seen *seen, struct sl_err *err)
{
	if (!message || !*message)
		return sl_err_set(err, SL_EINVALID, "a request for changes needs a reason: -m TEXT");
	return manual_verdict(ctx, run, "request_changes", message, seen, err);
}

int runner_request_changes(struct sl_ctx *ctx, const char *run, const char *message,
			   struct sl_err *err)
{
	return runner_request_changes_seen(ctx, run, message, NULL, err);
}

/* The merge base of `head` and the target's tip, hex. */
static int merge_base_with_target(struct step *s, const char *head, char out[41],
				  struct sl_err *err)
{
	git_repository *repo = NULL;
	git_oid h, tip, mb;
	char tip_hex[41];
	int rc, error;

	if ((error = step__target_tip(s, tip_hex, err)) != 0)
		return error;
	if ((rc = git_repository_open(&repo, s->ctx->repo.root)) < 0 ||
	    (rc = git_oid_fromstr(&h, head)) < 0 || (rc = git_oid_fromstr(&tip, tip_hex)) < 0 ||
	    (rc = git_merge_base(&mb, repo, &h, &tip)) < 0)
		error = sl_err_git(err, rc, "cannot find where run '%s' meets '%s'", s->run.id,
				   s->ctx->cfg->target);
	else
		git_oid_tostr(out, 41, &mb);
	git_repository_free(repo);
	return error;
}

/* 1 when the run's worktree is in the middle of a merge (MERGE_HEAD exists). */
static int merge_in_progress(struct step *s)
{
	char *path = worktree_entry_path(s->ctx->repo.gitdir, s->run.id, "MERGE_HEAD");
	int yes = path && sl_path_exists(path);

	free(path);
	return yes;
}

/*
 * A person's resolution is checked as a builder's is (merge_verify_resolved:
 * nothing unmerged, no conflict marker in the paths the store recorded as
 * conflicted), in the worktree's files, before anything is committed.
 */
static int verify_person(struct step *s, struct sl_err *err)
{
	struct merge_paths conflicted = MERGE_PATHS_INIT;
	struct store_conflict c = { 0 };
	int error;

	if ((error = store_conflict_get(s->ctx->st, s->run.id, &c, err)) == SL_ENOTFOUND) {
		sl_err_clear(err);
		error = 0;
	}
	for (size_t i = 0; !error && i < c.npaths; i++)
		if (merge_paths_add(&conflicted, c.paths[i]) != 0)
			error = sl_err_set(err, SL_ERROR, "out of memory");
	if (!error)
		error = merge_verify_resolved(s->wt, &conflicted, err);
	store_conflict_release(&c);
	merge_paths_release(&conflicted);
	return error;
}

/* Commit what the person left (finishing their merge), under the repository lock. */
static int commit_person(struct step *s, char head[41], struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	int committed = 0, error;

	if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
		return error;
	if (merge_in_progress(s))
		/* the person merged the target and fixed the files: finish that merge */
		error = step__commit_resolution(s, NULL, head, err);
	else if ((error = verify_person(s, err)) == 0)
		/* nothing new is fine: the person committed already */
		error = step__snapshot(s, "sluice: resolution by a person", STEP_SNAP_NOTHING_OK,
				       head, &committed, err);
	sl_lock_release(&lock);
	return error;
}

/*
 * The person merged the target the conflict was found on: else the
 * resolution was not made (what they changed is committed on the run
 * branch all the same, and stays).
 */
static int check_merged(struct step *s, const char *head, struct sl_err *err)
{
	struct store_conflict c = { 0 };
	int error;

	if ((error = store_conflict_get(s->ctx->st, s->run.id, &c, err)) == SL_ENOTFOUND) {
		sl_err_clear(err);
		return 0;
	}
	if (!error && !step__holds(s, head, c.target_tip))
		error = sl_err_set(err, SL_EINVALID, "the conflict of run '%s' is not resolved: "
				   "its worktree has not merged '%s' (%.12s) yet; follow the steps "
				   "'sluice show %s' prints (git merge %s, fix, commit), then retry",
				   s->run.id, s->ctx->cfg->target, c.target_tip, s->run.id,
				   s->ctx->cfg->target);
	store_conflict_release(&c);
	return error;
}

/* The person's resolution as an attempt of its own, with the agent "person (name)". */
static int record_person_attempt(struct step *s, const char *head, struct sl_err *err)
{
	char agent[300], n[16];
	int attempt = s->run.attempt + 1, error;

	snprintf(agent, sizeof(agent), "%s (%s)", STEP_PERSON_AGENT, sl_ctx_who(s->ctx));
	snprintf(n, sizeof(n), "%d", attempt);
	if ((error = store_attempt_start(s->ctx->st, s->run.id, attempt, RUN_MODE_RESOLVE, err)) ||
	    (error = store_attempt_set_agent(s->ctx->st, s->run.id, attempt, agent, "new", err)) ||
	    (error = store_attempt_finish(s->ctx->st, s->run.id, attempt, 0, "resolved by a person",
					  head, err)))
		return error;
	return step__set(s, err, "attempt", n, NULL);
}

/*
 * A person worked in the worktree of a merge_conflict run: their
 * resolution is checked, committed and recorded as an attempt, then goes
 * through the run's gates and review like a builder's.
 */
static int retry_conflict(struct step *s, struct sl_err *err)
{
	char head[41], base[41];
	int error;

	if (!sl_path_exists(s->wt))
		return sl_err_set(err, SL_ENOTFOUND, "the worktree of run '%s' is gone", s->run.id);
	if ((error = commit_person(s, head, err)) != 0 || (error = check_merged(s, head, err)) != 0)
		return error;
	sl_fault("retry.after_resolution");
	/* the new base: where the person's branch meets the target now */
	if ((error = merge_base_with_target(s, head, base, err)) != 0 ||
	    (error = step__set(s, err, "base_commit", base, "mode", run_mode_name(RUN_MODE_RESOLVE),
			       NULL)) != 0 ||
	    (error = step__set(s, err, "head_commit", head, NULL)) != 0 ||
	    (error = record_person_attempt(s, head, err)) != 0 ||
	    /* no worker owns it now: not an interrupted resolution (runner/reconcile.c) */
	    (error = step__set(s, err, "owner_pid", "0", "owner_start", NULL, NULL)) != 0 ||
	    (error = step__record_diff(s, head, err)) != 0)
		return error;
	/* resolving: a worker of the next tick runs the run's gates on it (step_resolve()) */
	return step__move(s, RUN_RESOLVING, err, "attempt %d: %s resolved the conflict (%.12s); "
			  "the next tick runs the gates on it", s->run.attempt, sl_ctx_who(s->ctx), head);
}

/*
 * A failed or rejected run may be retried only while it is still the
 * work order's current work: same revision, no other run under way or
 * merged for it.
 */
static int still_current(struct step *s, struct sl_err *err)
{
	struct store_wo wo = STORE_WO_INIT;
	struct store_run *runs = NULL;
	size_t n = 0, i;
	int error;

	if ((error = store_wo_get(s->ctx->st, s->run.work_order_id, &wo, err)) != 0)
		return error;
	if (strcmp(wo.content_hash, s->run.wo_content_hash))
		error = sl_err_set(err, SL_EINVALID,
				   "work order '%s' changed since run '%s'; the new revision is new "
				   "work and the next tick runs it",
				   wo.id, s->run.id);
	else if ((error = store_runs_list(s->ctx->st, RUN_STATES_ALL, wo.id, &runs, &n, err)) == 0)
		for (i = 0; i < n && !error; i++)
			if (strcmp(runs[i].id, s->run.id) &&
			    (!run_state_is_final(runs[i].state) || runs[i].state == RUN_MERGED))
				error = sl_err_set(err, SL_EINVALID,
						   "work order '%s' has run '%s' (%s); retry that one "
						   "instead, or abandon it first",
						   wo.id, runs[i].id, run_state_name(runs[i].state));
	store_runs_free(runs, n);
	store_wo_release(&wo);
	return error;
}

/*
 * Save what a person left in the worktree before anything can reset it.
 * *touched: 1 when a person changed the worktree or the run branch since
 * the run stopped (something was committed now, or the branch moved).
 */
static int save_worktree(struct step *s, const char *message, int *touched,
			 struct sl_err *err)
{
	char head[41], before[41];
	int error, committed = 0;

	*touched = 0;
	if (!sl_path_exists(s->wt) || !s->run.base_commit)
		return 0;
	snprintf(before, sizeof(before), "%s", s->run.head_commit ? s->run.head_commit : "");
	error = step__snapshot(s, message, STEP_SNAP_LOCK | STEP_SNAP_NOTHING_OK, head,
			       &committed, err);
	if (!error && committed)
		error = step__set(s, err, "head_commit", head, NULL);
	*touched = !error && (committed || strcmp(head, before));
	return error;
}

/*
 * A fresh start on the target's tip (`tip`): the worktree and the run
 * branch go there (what was saved stays in the branch's reflog and the
 * attempts), the base is the tip, the mode build. No worktree: the next
 * prepare makes one at the base.
 */
static int onto_target(struct step *s, char tip[41], struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	int error;

	if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
		return error;
	if ((error = step__target_tip(s, tip, err)) == 0 && sl_path_exists(s->wt) &&
	    step__worktree_mode(s) == SL_WORKTREE_READ_WRITE)
		error = worktree_reset(s->wt, tip, step__excluded(s), err);
	sl_lock_release(&lock);
	if (error)
		return error;
	return step__set(s, err, "base_commit", tip, "head_commit", tip, "mode",
			 run_mode_name(RUN_MODE_BUILD), NULL);
}

static int retry_failed(struct step *s, unsigned flags, struct sl_err *err)
{
	char reason[256], tip[41], spent[600];
	struct step_budget_left held;
	int error, touched = 0;

	if ((error = still_current(s, err)) != 0)
		return error;
	/* a run stopped by its budget starts nothing until a limit is raised (docs/budgets.md) */
	if ((error = step__run_budget(s, spent, sizeof(spent), &held, err)) < 0)
		return error;
	/* the remedy of the limit that held: the config's is raised in place */
	if (error && held.by_work_order)
		return sl_err_set(err, SL_EINVALID, "run '%s': %s; nothing was done: a higher "
				  "budget.%s in the work order's file is a new revision, which the "
				  "next tick starts as a new run", s->run.id, spent, held.key);
	if (error)
		return sl_err_set(err, SL_EINVALID, "run '%s': %s; nothing was done: raise "
				  "budget.run.%s in .system/config.yaml, then 'sluice retry %s'",
				  s->run.id, spent, held.key, s->run.id);
	if ((error = save_worktree(s, "sluice: saved before a retry", &touched, err)) != 0)
		return error;
	/* a person's work in the worktree (a merge of the target, a fix) is built on, never reset */
	if (touched)
		flags |= RUNNER_RETRY_SAME_BASE;
	/*
	 * A person's retry starts the retry rules over, counted from here: no
	 * sticky override (a `worktree: reset` above all) undoes what the person
	 * left in the worktree, and the run gets as many attempts as a new one.
	 */
	sl_fault("retry.after_save");
	if ((error = build_retry_restart(s->ctx->st, s->run.id, s->run_dir, s->run.attempt,
					 err)) != 0)
		return error;
	if (!(flags & RUNNER_RETRY_SAME_BASE) && (error = onto_target(s, tip, err)) != 0)
		return error;
	/* queued: the next tick prepares (reusing the worktree) and builds a new attempt */
	if (flags & RUNNER_RETRY_SAME_BASE)
		snprintf(reason, sizeof(reason), "retried by %s on its base %.12s%s; the retry rules "
			 "start over", sl_ctx_who(s->ctx), s->run.base_commit ? s->run.base_commit : "-",
			 touched ? " with the changes a person made in its worktree" : "");
	else
		snprintf(reason, sizeof(reason), "retried by %s on %s as it is now (%.12s); the "
			 "retry rules start over", sl_ctx_who(s->ctx), s->ctx->cfg->target, tip);
	if ((error = store_begin(s->ctx->st, err)) != 0)
		return error;
	if ((error = store_run_transition(s->ctx->st, s->run.id, s->run.state, RUN_QUEUED, reason,
					  1, err)) != 0 ||
	    (error = store_wo_set_state_tx(s->ctx->st, s->run.work_order_id, WO_RUNNING, reason,
					   err)) != 0 ||
	    (error = store_commit(s->ctx->st, err)) != 0) {
		store_rollback(s->ctx->st);
		return error;
	}
	return step__reload(s, err);
}

int runner_retry_seen(struct sl_ctx *ctx, const char *run, char *next_state, size_t n,
		      const struct runner_seen *seen, struct sl_err *err)
{
	return runner_retry_flags(ctx, run, 0, next_state, n, seen, err);
}

int runner_retry_flags(struct sl_ctx *ctx, const char *run, unsigned flags, char *next_state,
		       size_t n, const struct runner_seen *seen, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	struct step s;
	int error;

	if ((error = step_open(&s, ctx, run, &lock, err)) != 0 ||
	    (error = check_seen(&s.run, seen, err)) != 0)
		goto out;
	switch (s.run.state) {
	case RUN_MERGE_CONFLICT:
		error = retry_conflict(&s, err);
		break;
	case RUN_FAILED:
	case RUN_REJECTED:
		error = retry_failed(&s, flags, err);
		break;
	case RUN_REVIEWING:
	case RUN_APPROVED:
		error = step__move(&s, s.run.state, err, "retry asked by %s", sl_ctx_who(ctx));
		break;
	default:
		error = sl_err_set(err, SL_EINVALID,
				   "run '%s' is %s; retry applies to merge_conflict, failed, rejected, "
				   "reviewing and approved runs",
				   s.run.id, run_state_name(s.run.state));
	}
	if (!error)
		snprintf(next_state, n, "%s", run_state_name(s.run.state));
out:
	step_close(&s, &lock);
	return error > 0 ? 0 : error;
}

int runner_retry(struct sl_ctx *ctx, const char *run, char *next_state, size_t n,
		 struct sl_err *err)
{
	return runner_retry_seen(ctx, run, next_state, n, NULL, err);
}

int runner_abandon_seen(struct sl_ctx *ctx, const char *run, int delete_branch,
			const struct runner_seen *seen, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT, repo_lock = SL_LOCK_INIT;
	struct step s;
	char head[41];
	int error, committed = 0, deleted = 0;

	if ((error = open_for_abandon(&s, ctx, run, seen, &lock, err)) != 0)
		goto out;
	if (run_state_is_final(s.run.state)) {
		error = sl_err_set(err, SL_EINVALID, "run '%s' is already %s", s.run.id,
				   run_state_name(s.run.state));
		goto out;
	}
	if ((error = runner__lock_repo(ctx, &repo_lock, err)) != 0)
		goto out;
	if (sl_path_exists(s.wt) && s.run.base_commit) {
		/* save everything first: commit what is uncommitted, write the diff */
		/* nothing ever changed is fine: an empty diff */
		error = step__snapshot(&s, "sluice: saved before abandoning", STEP_SNAP_NOTHING_OK,
				       head, &committed, err);
		if (error || (error = step__set(&s, err, "head_commit", head, NULL)) != 0 ||
		    (error = step__record_diff(&s, head, err)) != 0)
			goto out;
		sl_fault("abandon.after_save");
		if ((error = runner__retire_worktree(ctx, s.run.id, step__excluded(&s), 1,
						     delete_branch, &deleted, err)) != 0)
			goto out;
	}
	sl_fault("abandon.after_remove");
	error = step__fail(&s, RUN_ABANDONED, err, "abandoned by %s%s", sl_ctx_who(ctx),
			   deleted ? "; branch deleted" : "");
	if (error > 0)
		error = 0;
out:
	sl_lock_release(&repo_lock);
	step_close(&s, &lock);
	return error;
}

int runner_abandon(struct sl_ctx *ctx, const char *run, int delete_branch,
		   struct sl_err *err)
{
	return runner_abandon_seen(ctx, run, delete_branch, NULL, err);
}
