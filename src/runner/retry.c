/*
 * The retry rules of a failed attempt (docs/builders.md): the next attempt,
 * a resolution attempt, a person, or failed. Every step that can fail an
 * attempt comes here.
 */
#include "runner/runner_int.h"
#include "store/store.h"
#include "builder/builder.h"
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARTIFACT_READ_MAX ((size_t)64 << 20)

/*
 * In resolve mode a failure spends one resolution attempt of the builder;
 * a person's resolution that fails goes back to the person, said so.
 */
static int resolution_failed(struct step *s, const char *why, struct sl_err *err)
{
	char n[16], msg[SL_ERR_MSG_MAX + 256];
	int used = s->run.resolve_attempts + 1, error;

	if (step__person_resolved(s)) {
		snprintf(msg, sizeof(msg), "a person resolved the conflict on attempt %d, but it "
			 "failed (%s); a person must decide: see 'sluice show %s'", s->run.attempt,
			 why, s->run.id);
		return step__to_person(s, 0, msg, err);
	}
	snprintf(n, sizeof(n), "%d", used);
	if ((error = step__set(s, err, "resolve_attempts", n, NULL)) != 0)
		return error;
	if (used >= s->ctx->cfg->merge.resolve_attempts) {
		snprintf(msg, sizeof(msg), "the builder could not resolve the conflict in %d "
			 "attempt%s (%s); a person must decide: see 'sluice show %s'", used,
			 used == 1 ? "" : "s", why, s->run.id);
		return step__to_person(s, 1, msg, err);
	}
	return step__move(s, RUN_RESOLVING, err, "resolution attempt %d failed (%s); trying again",
			  used, why);
}

/* The retry decision; validators get the failed attempt's prompt variables (build.h). */
static int decide(struct step *s, const struct build_retry_state *rs, const char *const *failed,
		  int builder_exit, const char *why, struct build_retry_decision *d,
		  struct sl_err *err)
{
	struct build_validate_ctx vc = { 0 };
	struct build_prompt_ctx pc = BUILD_PROMPT_CTX_INIT;
	struct build_gate_results gates = BUILD_GATE_RESULTS_INIT;
	struct store_wo wo = STORE_WO_INIT;
	struct store_wo_fields fields = { 0 };
	struct sl_err ignored = SL_ERR_INIT;
	char *diff = NULL, *comments = NULL, *scratch = NULL;
	int error = 0;

	if (!build_retry_validates(s->ctx->cfg))
		return build_retry_decide(s->ctx->cfg, rs, s->run.attempt, failed, builder_exit, d,
					  err);
	if ((error = store_wo_get(s->ctx->st, s->run.work_order_id, &wo, err)) != 0)
		return error;
	store_wo_fields_parse(wo.id, wo.fields_json, &fields, &ignored); /* logged there */
	sl_err_clear(&ignored);
	pc.work_order = fields.all;
	pc.attempt = s->run.attempt;
	pc.error = why;
	pc.diff = diff = step__read(s, "diff.patch", ARTIFACT_READ_MAX);
	pc.review_comments = comments = step__review_comments(s);
	if (build_gates_load(s->run_dir, &gates, &ignored) == 0)
		pc.gates = &gates;
	vc.run_id = s->run.id;
	vc.work_order_id = s->run.work_order_id;
	vc.run_dir = s->run_dir;
	/* where the builder worked: a `worktree: none` run has its scratch/ folder, no worktree */
	if (step__worktree_mode(s) == SL_WORKTREE_NONE && !(scratch = step__path(s, "scratch")))
		error = sl_err_set(err, SL_ERROR, "out of memory");
	vc.worktree = scratch ? scratch : s->wt;
	vc.vars = &pc;
	if (!error)
		error = build_retry_decide_validated(s->ctx->cfg, rs, s->run.attempt, failed,
						     builder_exit, &vc, d, err);
	store_wo_fields_release(&fields);
	build_gate_results_release(&gates);
	store_wo_release(&wo);
	free(diff);
	free(comments);
	free(scratch);
	return error;
}

int step__retry_or_fail(struct step *s, const char *const *failed, int builder_exit,
			const char *why, struct sl_err *err)
{
	struct build_retry_state rs = BUILD_RETRY_STATE_INIT;
	struct build_retry_decision d;
	char n[16], spent[600];
	int error;

	if (s->run.mode == RUN_MODE_RESOLVE)
		return resolution_failed(s, why, err);
	if ((error = build_retry_load(s->ctx->st, s->run.id, &rs, err)) != 0 ||
	    (error = decide(s, &rs, failed, builder_exit, why, &d, err)) != 0)
		return error;
	if (!d.retry)
		return step__fail(s, RUN_FAILED, err, "%s; %s", why,
				  build_retry_decision_words(&d, s->run.attempt));
	/* a retry the rules allow, past the run's budget (docs/budgets.md) */
	if ((error = step__run_budget(s, spent, sizeof(spent), NULL, err)) < 0)
		return error;
	if (error)
		return step__fail(s, RUN_FAILED, err, "%s; %s", why, spent);
	if ((error = build_retry_save(s->ctx->st, s->run.id, s->run_dir, &d.state, err)) != 0 ||
	    (error = build_validate_record(s->ctx->st, s->run.id, s->run.work_order_id,
					   run_state_name(s->run.state), d.verdicts, err)) != 0)
		return error;
	snprintf(n, sizeof(n), "%d", d.next_attempt);
	if ((error = step__set(s, err, "attempt", n, NULL)) != 0)
		return error;
	return step__move(s, RUN_BUILDING, err, "attempt %d: %s; %s", d.next_attempt, why,
			  build_retry_decision_words(&d, s->run.attempt));
}
