/*
 * The runner's side of usage records (docs/budgets.md): the step's run
 * and attempt handed to budget/usage.c, which reads and records them.
 */
#include "runner/runner_int.h"
#include "budget/budget.h"

static void attempt_of(struct step *s, struct budget_attempt *a)
{
	a->st = s->ctx->st;
	a->cfg = s->ctx->cfg;
	a->run_id = s->run.id;
	a->work_order_id = s->run.work_order_id;
	a->state = run_state_name(s->run.state);
	a->run_dir = s->run_dir;
	a->attempt = s->run.attempt;
}

int step__usage_watch(void *arg, char *why, size_t n)
{
	const struct step_usage_watch *w = arg;
	struct budget_attempt a;

	attempt_of(w->s, &a);
	return budget_usage_over(&a, w->left_usd, w->from, why, n);
}

void step__record_usage(struct step *s, int64_t wall_ms)
{
	struct budget_attempt a;

	attempt_of(s, &a);
	budget_usage_record(&a, wall_ms);
}

void step__record_review_usage(struct step *s, const json_t *usage, int64_t wall_ms)
{
	struct budget_attempt a;

	attempt_of(s, &a);
	budget_usage_record_review(&a, usage, wall_ms);
}
