/*
 * The repository's budget (docs/budgets.md): once the spend recorded in the
 * UTC day or month reaches budget.day.usd or budget.month.usd, no new work
 * order starts. Runs already under way go on; raising the limit lets the
 * next tick start work again.
 */
#include "budget/budget.h"
#include "store/store.h"
#include "core/log.h"
#include "core/time.h"

#include <stdio.h>
#include <time.h>

/* The start of now_ms's UTC day and month, in ms. */
static int period_starts(int64_t now_ms, int64_t *day_ms, int64_t *month_ms)
{
	time_t now = (time_t)(now_ms / 1000);
	struct tm tm;

	if (!gmtime_r(&now, &tm))
		return -1;
	tm.tm_sec = tm.tm_min = tm.tm_hour = 0;
	*day_ms = (int64_t)timegm(&tm) * 1000;
	tm.tm_mday = 1;
	*month_ms = (int64_t)timegm(&tm) * 1000;
	return 0;
}

int budget_spend(struct store *st, int64_t now_ms, struct store_spend *day,
		 struct store_spend *month, struct sl_err *err)
{
	int64_t day_ms, month_ms;
	int error;

	if (period_starts(now_ms, &day_ms, &month_ms) != 0)
		return sl_err_set(err, SL_ERROR, "cannot tell the UTC day of %lld ms",
				  (long long)now_ms);
	if ((error = store_usage_spend(st, day_ms, day, err)) != 0)
		return error;
	return store_usage_spend(st, month_ms, month, err);
}

int budget_held(const struct sl_config *cfg, const struct store_spend *day,
		const struct store_spend *month, char *why, size_t n)
{
	static const char *const names[] = { "day", "month" };
	const double limits[] = { cfg->budget.day_usd, cfg->budget.month_usd };
	const struct store_spend *sp[] = { day, month };

	if (why && n)
		why[0] = '\0';
	for (int i = 0; i < 2; i++) {
		if (limits[i] < 0 || sp[i]->usd < limits[i])
			continue;
		if (why && n)
			snprintf(why, n,
				 "the %s's budget is spent: $%.2f%s recorded since %s UTC, "
				 "budget.%s.usd is $%.2f; no new work order starts until the next "
				 "UTC %s or a higher budget.%s.usd in .system/config.yaml",
				 names[i], sp[i]->usd, sp[i]->estimate ? " (estimate)" : "",
				 i ? "the 1st of the month" : "midnight", names[i], limits[i],
				 names[i], names[i]);
		return i + 1;
	}
	return 0;
}

void budget_period(int held, int64_t now_ms, char *out, size_t n)
{
	time_t now = (time_t)(now_ms / 1000);
	struct tm tm;

	if (!gmtime_r(&now, &tm)) {
		snprintf(out, n, "%s", held == 2 ? "month" : "day");
		return;
	}
	if (held == 2)
		strftime(out, n, "month %Y-%m", &tm);
	else
		strftime(out, n, "day %Y-%m-%d", &tm);
}

int budget_spent(const struct sl_config *cfg, struct store *st, int64_t now_ms, char *why,
		 size_t n, struct sl_err *err)
{
	struct store_spend day, month;
	int error;

	if (why && n)
		why[0] = '\0';
	if (cfg->budget.day_usd < 0 && cfg->budget.month_usd < 0)
		return 0; /* no limit: the store is not read */
	if ((error = budget_spend(st, now_ms, &day, &month, err)) != 0)
		return error;
	return budget_held(cfg, &day, &month, why, n);
}

int budget_hold(const struct sl_config *cfg, struct store *st, const char *target_ref, char *why,
		size_t n, struct sl_err *err)
{
	struct sl_err nerr = SL_ERR_INIT;
	int64_t now = sl_now_ms();
	char period[32];
	int held;

	if ((held = budget_spent(cfg, st, now, why, n, err)) <= 0)
		return held;
	budget_period(held, now, period, sizeof(period));
	if (store_notify_budget(st, period, target_ref, why, now, &nerr) != 0)
		sl_log(SL_LOG_WARN, "%s", nerr.msg);
	return 1;
}
