/* The building and gating states: prompt, builder, snapshot, diff, gates, retry rules. */
#include "runner/runner_int.h"
#include "store/store.h"
#include "builder/builder.h"
#include "train/train.h"
#include "worktree/worktree.h"
#include "merge/merge.h"
#include "core/fs.h"
#include "core/fault.h"
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARTIFACT_READ_MAX ((size_t)64 << 20)

/* Render attempts/<n>/prompt.md for the attempt about to run. */
static int write_prompt(struct step *s, const struct build_retry_overrides *ov, char **path,
			struct sl_err *err)
{
	struct build_prompt_ctx pc = BUILD_PROMPT_CTX_INIT;
	struct build_gate_results gates = BUILD_GATE_RESULTS_INIT;
	struct sl_err ignored = SL_ERR_INIT;
	struct store_wo wo = STORE_WO_INIT;
	struct store_wo_fields fields = { 0 };
	char *wo_text = step__read(s, "work_order.md", ARTIFACT_READ_MAX);
	char *diff = NULL, *comments = NULL;
	json_t *conflict = NULL;
	int error;

	if (!wo_text) {
		error = sl_err_set(err, SL_ENOTFOUND, "work_order.md of run '%s' is missing",
				   s->run.id);
		goto out;
	}
	if ((error = store_wo_get(s->ctx->st, s->run.work_order_id, &wo, err)) != 0)
		goto out;
	store_wo_fields_parse(wo.id, wo.fields_json, &fields, &ignored); /* logged there */
	sl_err_clear(&ignored);
	pc.mode = s->run.mode;
	pc.work_order_text = wo_text;
	pc.work_order = fields.all;
	pc.attempt = s->run.attempt;
	if (s->run.mode == RUN_MODE_RESOLVE) {
		/* from the store and git: conflict.json is the resolver's to rewrite */
		if ((error = step__conflict_context(s, &conflict, err)) != 0)
			goto out;
		pc.conflict = conflict;
	} else if (s->run.attempt > 1) {
		diff = step__read(s, "diff.patch", ARTIFACT_READ_MAX);
		comments = step__review_comments(s);
		if (build_gates_load(s->run_dir, &gates, &ignored) == 0)
			pc.gates = &gates;
		else if (ignored.code != SL_ENOTFOUND) /* too big, a link, not JSON */
			sl_log(SL_LOG_WARN, "run %s: %s", s->run.id, ignored.msg);
		pc.error = s->run.reason;
		pc.diff = diff;
		pc.review_comments = comments;
		pc.prompt_override = ov->prompt;
	}
	error = build_prompt_write(s->run_dir, &pc, path, err);
out:
	build_gate_results_release(&gates);
	store_wo_release(&wo);
	store_wo_fields_release(&fields);
	json_decref(conflict);
	free(wo_text);
	free(diff);
	free(comments);
	return error;
}

static int run_builder(struct step *s, const struct build_retry_overrides *ov,
		       const char *prompt, const char *session, struct sl_proc_result *res,
		       struct exec_outcome *oc, struct sl_err *err)
{
	struct build_opts bo = BUILD_OPTS_INIT;
	enum sl_worktree_mode m = step__worktree_mode(s);
	struct step_budget_left left;
	struct step_usage_watch watch;
	struct exec_run r;
	char *cwd = NULL, base[41], theirs[41], usd[32];
	int error;

	/* executor.kind slurm or kubernetes: the builder runs as a job (runner/jobs.c) */
	if (step__remote(s)) {
		if ((error = step__job_init(s, "build", &r, base, theirs, err)) != 0)
			return error;
		bo.job = &r;
		bo.job_out = oc;
		bo.branch = s->run.branch_name;
	}

	/* read-only and none runs: the worktree put back, or an empty folder (runner/report.c) */
	if (m != SL_WORKTREE_READ_WRITE && (error = step__report_before(s, m, prompt, &cwd, err)))
		return error;
	bo.worktree_mode = sl_worktree_mode_name(m);

	bo.cfg = s->ctx->cfg;
	bo.run_id = s->run.id;
	bo.work_order_id = s->run.work_order_id;
	bo.run_dir = s->run_dir;
	bo.worktree = cwd ? cwd : s->wt;
	bo.prompt_file = prompt;
	bo.mode = s->run.mode;
	bo.attempt = s->run.attempt;
	bo.argv_override = ov->builder;
	bo.agent = ov->agent;
	bo.session = session;
	/* the run's minutes left bound the attempt; its dollars left go to the builder */
	if ((error = step__run_budget(s, NULL, 0, &left, err)) < 0) {
		free(cwd);
		return error;
	}
	bo.timeout_cap_ms = left.ms;
	if (left.usd >= 0) {
		snprintf(usd, sizeof(usd), "%.4f", left.usd > 0.0001 ? left.usd : 0.0001);
		bo.budget_usd = usd;
		/* and each usage report it writes meanwhile is held against them */
		watch.s = s;
		watch.left_usd = left.usd;
		watch.from = left.usd_from;
		bo.usage_watch = step__usage_watch;
		bo.usage_watch_arg = &watch;
	}
	error = build_run(&bo, res, err);
	free(cwd);
	return error;
}

/* Commit what the builder left; for a resolution, finish the merge. */
static int snapshot(struct step *s, char head[41], struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	char msg[256];
	int error, committed = 0;

	if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
		return error;
	if (s->run.mode == RUN_MODE_RESOLVE) {
		snprintf(msg, sizeof(msg), "Merge %s into %s (resolution, run %s)",
			 s->ctx->cfg->target, s->run.branch_name, s->run.id);
		error = step__commit_resolution(s, msg, head, err);
	} else {
		snprintf(msg, sizeof(msg), "sluice snapshot: run %s attempt %d", s->run.id,
			 s->run.attempt);
		error = step__snapshot(s, msg, 0, head, &committed, err);
	}
	sl_lock_release(&lock);
	return error;
}

static const char *const builder_failed[] = { "builder", NULL };
static const char *const builder_no_change[] = { "builder", BUILD_NO_CHANGE, NULL };

/*
 * Whether the attempt resumes the agent's own session (session: keep): not
 * on the first attempt, nor when the agent changed or cannot resume (a
 * warning in note, Gump's rule); with worktree: reset it does, and warns.
 */
static const char *session_of(struct step *s, const struct build_retry_overrides *ov,
			      const struct build_agent *ag, char *note, size_t n)
{
	char *prev;
	const char *session = "new";

	note[0] = '\0';
	if (ov->session != SL_SESSION_KEEP || s->run.attempt < 2 || s->run.mode == RUN_MODE_RESOLVE)
		return session;
	prev = store_attempt_agent(s->ctx->st, s->run.id, s->run.attempt - 1);
	if (step__remote(s)) {
		/* each job is a new clone on some node: the agent's session store is not there */
		snprintf(note, n, "; warning: session: keep, but builders run as %s jobs, each in a "
			 "new clone: a new session", exec_kind_name(s->ctx->cfg->executor.kind));
	} else if (prev && strcmp(prev, ag->name)) {
		snprintf(note, n, "; warning: session: keep, but the agent changed from "
			 "%.64s: a new agent cannot resume another's session, so a new one", prev);
	} else if (!ag->resumes) {
		snprintf(note, n, "; warning: session: keep, but %s cannot resume a session: a new "
			 "one", ag->name);
	} else {
		session = "keep";
		if (ov->worktree_reset)
			snprintf(note, n, "; warning: worktree: reset with a kept session: the agent "
				 "remembers changes the reset took away");
	}
	free(prev);
	return session;
}

/* The agent and session of the attempt: recorded, and said in the event log. */
static int choose_agent(struct step *s, const struct build_retry_state *rs,
			const struct build_retry_overrides *ov, const char **session,
			struct sl_err *err)
{
	struct build_agent ag;
	char note[256], rule[48] = "", msg[512];
	int error;

	build_agent_of(s->ctx->cfg, ov->builder, ov->agent, &ag);
	*session = session_of(s, ov, &ag, note, sizeof(note));
	if (rs->builder_rule >= 0 && (ov->agent || ov->builder))
		snprintf(rule, sizeof(rule), " (retry rule %d)", rs->builder_rule + 1);
	snprintf(msg, sizeof(msg), "attempt %d: agent %s%s, session %s%s", s->run.attempt,
		 ag.name, rule, *session, note);
	if (note[0])
		sl_log(SL_LOG_WARN, "run %s: %s", s->run.id, msg);
	if ((error = store_attempt_set_agent(s->ctx->st, s->run.id, s->run.attempt, ag.name,
					     *session, err)) != 0 ||
	    (error = store_begin(s->ctx->st, err)) != 0)
		return error;
	/* in the run's state, from and to: not a move, but `log` and the report read it as one */
	if ((error = store_event_add(s->ctx->st, s->run.id, s->run.work_order_id,
				     run_state_name(s->run.state), run_state_name(s->run.state),
				     msg, err)) != 0 ||
	    (error = store_commit(s->ctx->st, err)) != 0)
		store_rollback(s->ctx->st);
	return error;
}

/*
 * The prompt and the builder of attempt s->run.attempt: 0 once the builder
 * ran (res), an error, or what step__fail() returned.
 */
static int run_attempt(struct step *s, struct sl_proc_result *res, struct exec_outcome *oc,
		       struct sl_err *err)
{
	struct build_retry_state rs = BUILD_RETRY_STATE_INIT;
	struct build_retry_overrides ov;
	struct step_revert rv;
	const char *session = "new";
	char *prompt = NULL;
	int error;

	if ((error = build_retry_load(s->ctx->st, s->run.id, &rs, err)) != 0)
		return error;
	build_retry_overrides(s->ctx->cfg, &rs, &ov);
	if (s->run.attempt > 1 && ov.worktree_reset && s->run.mode != RUN_MODE_RESOLVE &&
	    step__worktree_mode(s) == SL_WORKTREE_READ_WRITE && (error = worktree_reset(s->wt, s->run.base_commit, step__excluded(s), err)) != 0)
		return error;
	if ((error = write_prompt(s, &ov, &prompt, err)) != 0)
		goto out;
	if ((error = store_attempt_start(s->ctx->st, s->run.id, s->run.attempt, s->run.mode,
					 err)) != 0)
		goto out;
	if (s->run.mode == RUN_MODE_BUILD && step__revert_of(s, &rv)) {
		/* sluice builds a revert itself (runner/revert.c): no agent */
		if ((error = store_attempt_set_agent(s->ctx->st, s->run.id, s->run.attempt,
						     "sluice-revert", "new", err)) != 0)
			goto out;
		sl_fault("build.before_builder");
		error = step__revert_build(s, &rv, res, err);
		if (error == SL_EINVALID)
			error = step__fail(s, RUN_FAILED, err, "%s", err->msg);
		goto out;
	}
	if ((error = choose_agent(s, &rs, &ov, &session, err)) != 0)
		goto out;
	sl_fault("build.before_builder");
	error = run_builder(s, &ov, prompt, session, res, oc, err);
	if (error == SL_ENOTFOUND || error == SL_EINVALID)
		error = step__fail(s, RUN_FAILED, err, "the builder cannot start: %s", err->msg);
out:
	free(prompt);
	return error;
}

/* The snapshot after the builder failed with `error` (nothing changed, or worse). */
static int snapshot_failed(struct step *s, int error, const struct sl_proc_result *res,
			   const char *how, struct sl_err *err)
{
	struct sl_err e2 = SL_ERR_INIT;

	if (error == SL_ENOTFOUND && s->run.mode != RUN_MODE_RESOLVE) {
		/* nothing changed: a failed attempt like any other (retry rules) */
		char why[SL_ERR_MSG_MAX + 200];
		if (build_failed(res))
			snprintf(why, sizeof(why), "attempt %d: the builder failed (%s) and changed "
				 "nothing", s->run.attempt, how);
		else /* "exited 0 (exit 0)" says it twice */
			snprintf(why, sizeof(why), "attempt %d: the builder exited 0 but changed "
				 "nothing", s->run.attempt);
		sl_err_clear(err);
		store_attempt_finish(s->ctx->st, s->run.id, s->run.attempt, res->exit_code, why,
				     NULL, err);
		return step__retry_or_fail(s, builder_no_change,
					   res->exit_code ? res->exit_code : build_failed(res), why,
					   err);
	}
	step__run_dir_linked(s, err); /* the cause, if the builder replaced the run folder */
	store_attempt_finish(s->ctx->st, s->run.id, s->run.attempt, res->exit_code, err->msg, NULL,
			     &e2);
	if (s->run.mode == RUN_MODE_RESOLVE && error == SL_ECONFLICT &&
	    !strstr(err->msg, "run folder was tampered with"))
		return step__retry_or_fail(s, builder_failed, res->exit_code, err->msg, err);
	if (error != SL_ELOCKED)
		return step__fail(s, RUN_FAILED, err, "after the builder (%s): %s", how, err->msg);
	return error;
}

/* The builder's work is committed as `head`: record it, then the gates (or the retry rules). */
static int built(struct step *s, const char *head, const struct sl_proc_result *res,
		 const char *how, struct sl_err *err)
{
	int error;

	sl_fault(s->run.mode == RUN_MODE_RESOLVE ? "resolve.after_commit" : "build.after_snapshot");
	store_attempt_finish(s->ctx->st, s->run.id, s->run.attempt, res->exit_code,
			     build_failed(res) ? how : "ok", head, err);
	if ((error = step__set(s, err, "head_commit", head, NULL)) != 0)
		return error;
	if (build_failed(res)) {
		char why[400];
		snprintf(why, sizeof(why), "the builder failed (%s) on attempt %d", how,
			 s->run.attempt);
		return step__retry_or_fail(s, builder_failed, res->exit_code ? res->exit_code : 1,
					   why, err);
	}
	if ((error = step__record_diff(s, head, err)) == SL_EINVALID &&
	    !step__run_dir_linked(s, err))
		/* git cannot diff what was built (a file over 2 GiB): so on every try */
		return step__fail(s, RUN_FAILED, err, "cannot record the diff of attempt %d: %s",
				  s->run.attempt, err->msg);
	if (error)
		return error;
	sl_fault("build.after_diff");
	return step__move(s, RUN_GATING, err, "attempt %d built %.12s (%s)", s->run.attempt, head,
			  how);
}

/* A job the engine lost, or that never reported: a failed attempt, under the retry rules. */
static const char *const job_failed[] = { "builder", BUILD_JOB, NULL };

static int build_job_lost(struct step *s, const struct exec_outcome *oc, struct sl_err *err)
{
	char why[1200];

	snprintf(why, sizeof(why), "attempt %d: %s", s->run.attempt, oc->why);
	store_attempt_finish(s->ctx->st, s->run.id, s->run.attempt, 1, why, NULL, err);
	sl_err_clear(err);
	return step__retry_or_fail(s, job_failed, 1, why, err);
}

int step_build(struct step *s, struct sl_err *err)
{
	struct sl_proc_result res;
	struct exec_outcome oc;
	char head[41], how[256];
	int error;

	memset(&res, 0, sizeof(res));
	memset(&oc, 0, sizeof(oc));
	if ((error = run_attempt(s, &res, &oc, err)) != 0)
		return error;
	if (oc.cancelled) /* sluice abandon cancelled the job: it ends the run */
		return STEP_STOP;
	if (oc.lost)
		return build_job_lost(s, &oc, err);
	sl_proc_describe(how, sizeof(how), &res);
	step__record_usage(s, res.duration_ms); /* before a kill can lose it */
	sl_fault(s->run.mode == RUN_MODE_RESOLVE ? "resolve.after_resolver" : "build.after_builder");
	step__sanitize_run_dir(s);
	if (step__worktree_mode(s) != SL_WORKTREE_READ_WRITE) /* nothing is snapshotted */
		return step__report_built(s, step__worktree_mode(s), &res, how, err);
	if ((error = snapshot(s, head, err)) != 0)
		return snapshot_failed(s, error, &res, how, err);
	return built(s, head, &res, how, err);
}

/*
 * Gates may leave files (formatters, reports): commit them now, so that
 * the reviewer sees exactly what will be merged and nothing changes after
 * the review.
 */
static int keep_gate_output(struct step *s, struct sl_err *err)
{
	char head[41], msg[128];
	int error, committed = 0;

	if (s->run.mode == RUN_MODE_RESOLVE)
		return 0; /* the resolution commit is a merge; the merge step catches changes */
	snprintf(msg, sizeof(msg), "sluice snapshot: what the gates of attempt %d left",
		 s->run.attempt);
	error = step__snapshot(s, msg, STEP_SNAP_LOCK, head, &committed, err);
	/* a gate moved HEAD off the branch, or broke the worktree: not fixed by waiting */
	if (error == SL_ECONFLICT || error == SL_EINVALID)
		return step__fail(s, RUN_FAILED, err, "after the gates: %s", err->msg);
	if (error || !committed)
		return error;
	if ((error = step__set(s, err, "head_commit", head, NULL)) != 0)
		return error;
	if ((error = step__record_diff(s, head, err)) == SL_EINVALID &&
	    !step__run_dir_linked(s, err))
		return step__fail(s, RUN_FAILED, err, "cannot record the diff of what the gates "
				  "left: %s", err->msg);
	return error;
}

/* The gates here, or as a job (executor.kind slurm or kubernetes): *oc says how a job ended. */
static int run_gates(struct step *s, struct build_gate_results *gr, struct exec_outcome *oc,
		     struct sl_err *err)
{
	struct exec_run r;
	char base[41], theirs[41];
	int error;

	memset(oc, 0, sizeof(*oc));
	if (!step__remote(s) || !s->ctx->cfg->ngates)
		return build_gates_run(s->ctx->cfg, s->wt, s->run_dir, gr, err);
	if ((error = step__job_init(s, "gates", &r, base, theirs, err)) != 0)
		return error;
	return build_gates_run_job(s->ctx->cfg, s->wt, s->run_dir, NULL, s->run.branch_name, &r,
				   oc, gr, err);
}

static const char *const gates_job_failed[] = { BUILD_JOB, NULL };

/*
 * Keep the attempt's gate results and output beside its prompt:
 * attempts/<n>/gates.json and attempts/<n>/gates/<name>.log (docs/audit.md).
 * Best effort: a copy that fails leaves that result naming gates/<name>.log.
 */
static void keep_attempt_gates(struct step *s, struct build_gate_results *gr)
{
	struct sl_err e = SL_ERR_INIT;
	char name[64];
	json_t *j;

	build_gates_keep_attempt(s->run_dir, s->run.attempt, gr, &e);
	snprintf(name, sizeof(name), "attempts/%d/gates.json", s->run.attempt);
	if ((j = build_gates_json(gr)) != NULL)
		step__write_json(s, name, j, &e);
	json_decref(j);
}

int step_gate(struct step *s, struct sl_err *err)
{
	struct build_gate_results gr = BUILD_GATE_RESULTS_INIT;
	struct exec_outcome oc;
	const char **failed = NULL;
	char why[1200];
	int error;

	error = run_gates(s, &gr, &oc, err);
	step__sanitize_run_dir(s);
	if (error)
		goto out;
	if (oc.cancelled) {
		error = STEP_STOP;
		goto out;
	}
	if (oc.lost) {
		snprintf(why, sizeof(why), "the gates of attempt %d: %s", s->run.attempt, oc.why);
		error = step__retry_or_fail(s, gates_job_failed, 0, why, err);
		goto out;
	}
	keep_attempt_gates(s, &gr);
	if (gr.all_passed) {
		sl_fault("gates.after_all");
		/* no gate ran, nothing but gates writes here now: no second walk of the tree */
		if (gr.n && !step__remote(s)) /* no tree tested twice: a clean worktree's greens */
			train_gating_green(s->ctx, s->wt, s->run.head_commit, &gr);
		if (gr.n && (error = keep_gate_output(s, err)) != 0)
			goto out;
		error = step__move(s, RUN_REVIEWING, err, "%zu gate%s passed; asking the reviewer",
				   gr.n, gr.n == 1 ? "" : "s");
		goto out;
	}
	if (!(failed = build_gates_failed(&gr))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	snprintf(why, sizeof(why), "gate '%s' failed on attempt %d", failed[0] ? failed[0] : "?",
		 s->run.attempt);
	error = step__retry_or_fail(s, failed, 0, why, err);
out:
	free(failed);
	build_gate_results_release(&gr);
	return error;
}
