#ifndef SL_BUDGET_BUDGET_H
#define SL_BUDGET_BUDGET_H
/*
 * Usage records and the repository's budget (docs/budgets.md), below the
 * runner: what an attempt used, as its builder reported it in
 * $SLUICE_USAGE_FILE and its reviewer in its reply, recorded once per run,
 * attempt and role with its cost estimated from budget.prices when it has
 * none (usage.c); and the spend of the UTC day and month against
 * budget.day.usd and budget.month.usd (spend.c). A run's own budget, which
 * stops its attempts, is the runner's (runner/budget.c).
 */
#include "core/config.h"
#include "core/err.h"

#include <stddef.h>
#include <stdint.h>

struct store;
struct store_spend;
struct json_t;

/*
 * 1 when the spend recorded since the start of now_ms's UTC day or month
 * has reached its limit, and why (when not NULL) says which, how much and
 * what to do; 0 when no limit is reached (the store is not read when there
 * is none); -error.
 */
int budget_spent(const struct sl_config *cfg, struct store *st, int64_t now_ms, char *why,
		 size_t n, struct sl_err *err);
/*
 * budget_spent() on spends already read: 1 when the day's reaches its
 * limit, 2 when the month's does, else 0 (budget_spent() too).
 */
int budget_held(const struct sl_config *cfg, const struct store_spend *day,
		const struct store_spend *month, char *why, size_t n);
/*
 * budget_spent() now, as a tick asks before it starts new work: when the
 * budget holds (1), the notifiers hear of it once per day (month) of the
 * target `target_ref` (store_notify_budget(), a failure logged).
 */
int budget_hold(const struct sl_config *cfg, struct store *st, const char *target_ref, char *why,
		size_t n, struct sl_err *err);
/* The period a hold (1 day, 2 month) is of, at now_ms: "day 2026-11-28", "month 2026-11". */
void budget_period(int held, int64_t now_ms, char *out, size_t n);
/* What the attempts recorded since the start of now_ms's UTC day and month cost. */
int budget_spend(struct store *st, int64_t now_ms, struct store_spend *day,
		 struct store_spend *month, struct sl_err *err);

/* The attempt whose usage is recorded; every string borrowed. */
struct budget_attempt {
	struct store *st;
	const struct sl_config *cfg;
	const char *run_id, *work_order_id;
	const char *state;   /* the run's state, for the event of a usage ignored */
	const char *run_dir; /* the run folder: attempts/<n>/usage.json */
	int attempt;
};

/*
 * Record what the attempt used, from attempts/<n>/usage.json
 * ($SLUICE_USAGE_FILE), with its wall time. A file that is missing records
 * nothing; a bad one is ignored and said so in the log and the run's
 * events. Never fails the attempt.
 */
void budget_usage_record(const struct budget_attempt *a, int64_t wall_ms);
/*
 * Record what the review of the attempt used: `usage` (the verdict's,
 * schema/usage.schema.json; NULL: the reviewer did not say), each review a
 * request of its own.
 */
void budget_usage_record_review(const struct budget_attempt *a, const struct json_t *usage,
				int64_t wall_ms);
/*
 * 1 when the attempt's usage file, read now, reports a cost past
 * `left_usd`, why naming it and `from` (the limit's name); 0 when it does
 * not, or is missing or being written.
 */
int budget_usage_over(const struct budget_attempt *a, double left_usd, const char *from,
		      char *why, size_t n);

#endif
