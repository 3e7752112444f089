/*
 * A run's own budget (docs/budgets.md; the repository's is in
 * budget/spend.c): its work order's budget:, else budget.run.*, stops its
 * attempts once they recorded that much money or wall time, and bounds
 * each attempt by the minutes left.
 */
#include "runner/runner_int.h"
#include "store/store.h"
#include "core/json.h"
#include "core/time.h"

#include <stdio.h>
#include <string.h>

/*
 * A limit of the work order's budget: (key) a number or none; absent or
 * anything else (queue/validate.c refused it at ingest): not said.
 */
static int wo_limit(const json_t *budget, const char *key, double *out)
{
	const json_t *v = json_is_object(budget) ? json_object_get(budget, key) : NULL;

	if (json_is_number(v) && json_number_value(v) >= 0)
		return *out = json_number_value(v), 1;
	if (json_is_string(v) && !strcmp(json_string_value(v), "none"))
		return *out = -1, 1;
	return 0;
}

void runner_run_budget_of(const struct sl_config *cfg, const json_t *wo_fields,
			  struct runner_run_budget *b)
{
	const json_t *budget = wo_fields ? json_object_get(wo_fields, "budget") : NULL;

	b->usd = cfg->budget.run_usd;
	b->usd_from = "budget.run.usd in .system/config.yaml";
	b->minutes = cfg->budget.run_minutes;
	b->minutes_from = "budget.run.minutes in .system/config.yaml";
	if (wo_limit(budget, "usd", &b->usd))
		b->usd_from = "the work order's budget.usd";
	if (wo_limit(budget, "minutes", &b->minutes))
		b->minutes_from = "the work order's budget.minutes";
}

int runner_run_budget_spent(const struct runner_run_budget *b, const struct runner_run_spend *sp,
			    char *why, size_t n)
{
	if (why && n)
		why[0] = '\0';
	/* a sum of costs in binary fractions: 0.7 + 0.1 reaches 0.8 */
	if (b->usd >= 0 && sp->usd >= b->usd - 1e-9) {
		if (why && n)
			snprintf(why, n, "the run's budget is spent: its attempts recorded $%.2f%s, "
				 "%s is $%.2f; no further attempt starts", sp->usd,
				 sp->estimate ? " (estimate)" : "", b->usd_from, b->usd);
		return 1;
	}
	if (b->minutes >= 0 && (double)sp->wall_ms >= b->minutes * 60000.0) {
		char ran[32];

		sl_duration_format(ran, sizeof(ran), sp->wall_ms);
		if (why && n)
			snprintf(why, n, "the run's time is spent: its attempts ran %s, %s is %g "
				 "minutes; no further attempt starts", ran, b->minutes_from,
				 b->minutes);
		return 1;
	}
	return 0;
}

int64_t runner_run_budget_left_ms(const struct runner_run_budget *b,
				  const struct runner_run_spend *sp)
{
	double left;

	if (b->minutes < 0)
		return 0;
	left = b->minutes * 60000.0 - (double)sp->wall_ms;
	return left < 1 ? 1 : (int64_t)left;
}

/*
 * What the run's attempts recorded so far: the known costs of every usage
 * row of the run (builder or reviewer), and the attempts' wall time.
 */
static int run_spend(struct step *s, struct runner_run_spend *sp, struct sl_err *err)
{
	struct store_usage *v = NULL;
	size_t n = 0;
	int error;

	memset(sp, 0, sizeof(*sp));
	if ((error = store_usage_list(s->ctx->st, s->run.id, 0, &v, &n, err)) != 0)
		return error;
	for (size_t i = 0; i < n; i++) {
		if (v[i].cost_usd >= 0) {
			sp->usd += v[i].cost_usd;
			sp->estimate |= v[i].estimate;
		}
	}
	store_usage_free(v, n);
	return store_attempts_wall(s->ctx->st, s->run.id, s->run.attempt, sl_now_ms(),
				   &sp->wall_ms, err);
}

int step__run_budget(struct step *s, char *why, size_t n, struct step_budget_left *left,
		     struct sl_err *err)
{
	struct runner_run_budget b;
	struct runner_run_spend sp;
	json_t *fields;
	int error;

	if (why && n)
		why[0] = '\0';
	if (left)
		left->ms = 0, left->usd = -1, left->key = left->usd_from = NULL,
		left->by_work_order = 0;
	fields = step__wo_fields(s, s->run.work_order_id, NULL);
	runner_run_budget_of(s->ctx->cfg, fields, &b);
	json_decref(fields);
	if (b.usd < 0 && b.minutes < 0)
		return 0; /* no limit: the store is not read */
	if ((error = run_spend(s, &sp, err)) != 0)
		return error;
	if ((error = runner_run_budget_spent(&b, &sp, why, n)) && left) {
		/* which limit held: the money is judged first (runner_run_budget_spent) */
		left->key = b.usd >= 0 && sp.usd >= b.usd - 1e-9 ? "usd" : "minutes";
		left->by_work_order = !strncmp(!strcmp(left->key, "usd") ? b.usd_from
									   : b.minutes_from,
					       "the work order", 14);
	}
	if (left) {
		left->ms = runner_run_budget_left_ms(&b, &sp);
		left->usd = b.usd < 0 ? -1 : b.usd - sp.usd > 0 ? b.usd - sp.usd : 0;
		left->usd_from = b.usd < 0 ? NULL : b.usd_from;
	}
	return error;
}
