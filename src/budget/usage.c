/*
 * What an attempt used, as its builder reported it in $SLUICE_USAGE_FILE
 * and its reviewer in its reply (docs/budgets.md): recorded once per run,
 * attempt and role.
 */
#include "budget/budget.h"
#include "store/store.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USAGE_FILE_MAX ((size_t)64 << 10)

/*
 * A usage file sluice ignored: in the tick's log and the run's event log
 * (`sluice log`). path NULL: `what` names the file already.
 */
static void usage_ignored(const struct budget_attempt *a, const char *kind, const char *path,
			  const char *what)
{
	struct sl_err e = SL_ERR_INIT;
	char msg[SL_ERR_MSG_MAX + 300];

	snprintf(msg, sizeof(msg), "attempt %d: %s ignored: %s%s%s%s", a->attempt, kind,
		 path ? "'" : "", path ? path : "", path ? "': " : "", what);
	sl_log(SL_LOG_WARN, "run %s: %s", a->run_id, msg);
	if (store_event_add(a->st, a->run_id, a->work_order_id, a->state, a->state, msg, &e) != 0)
		sl_log(SL_LOG_WARN, "run %s: %s", a->run_id, e.msg);
}

/*
 * A cost from tokens (budget.prices, docs/budgets.md): for a row with
 * tokens but no cost, of a model the table prices; marked an estimate.
 */
static void estimate(const struct sl_config *cfg, struct store_usage *u)
{
	const int64_t tok[] = { u->input_tokens, u->output_tokens, u->cache_read_tokens,
				u->cache_write_tokens };
	double usd = 0;
	int known = 0;

	if (u->cost_usd >= 0 || !u->model)
		return;
	for (size_t i = 0; i < cfg->budget.nprices; i++) {
		const struct sl_price *p = &cfg->budget.prices[i];
		const double per[] = { p->input, p->output, p->cache_read, p->cache_write };

		if (strcmp(p->model, u->model))
			continue;
		for (int t = 0; t < 4; t++)
			if (tok[t] >= 0)
				usd += (double)tok[t] * per[t] / 1e6, known = 1;
		if (known)
			u->cost_usd = usd, u->estimate = 1;
		return;
	}
}

/* Record u for the run's attempt in `role`, its cost estimated when it has none. */
static void put(const struct budget_attempt *a, struct store_usage *u, char *role,
		int64_t wall_ms)
{
	struct sl_err e = SL_ERR_INIT;

	u->run_id = (char *)a->run_id;
	u->attempt = a->attempt;
	u->role = role;
	u->wall_ms = wall_ms;
	estimate(a->cfg, u);
	/* a builder's file read again is the same attempt; each review is a new request */
	if ((strcmp(role, "reviewer") ? store_usage_put : store_usage_add)(a->st, u, &e) != 0)
		sl_log(SL_LOG_WARN, "run %s: %s", a->run_id, e.msg);
}

/* The attempt's usage file, a new string (NULL: no memory). */
static char *usage_path(const struct budget_attempt *a)
{
	char name[64];

	snprintf(name, sizeof(name), "attempts/%d/usage.json", a->attempt);
	return sl_path_join(a->run_dir, name);
}

int budget_usage_over(const struct budget_attempt *a, double left_usd, const char *from,
		      char *why, size_t n)
{
	struct store_usage u = STORE_USAGE_UNKNOWN;
	struct sl_err e = SL_ERR_INIT;
	json_t *j = NULL;
	char *path = usage_path(a);
	int stop = 0;

	/* a report being written, or a bad one: the next write is looked at (and
	 * the one left at the end is recorded, or said to be ignored) */
	if (path && sl_json_read(path, USAGE_FILE_MAX, &j, &e) == 0 &&
	    store_usage_from_json(j, &u, &e) == 0) {
		estimate(a->cfg, &u);
		/* the same tolerance as the budget's check between attempts */
		if (u.cost_usd >= 0 && u.cost_usd > left_usd + 1e-9) {
			snprintf(why, n, "its usage report says $%.2f%s, past the $%.2f left of "
				 "the run's budget (%s)", u.cost_usd,
				 u.estimate ? " (estimate)" : "", left_usd, from);
			stop = 1;
		}
	}
	free(u.model);
	json_decref(j);
	free(path);
	return stop;
}

void budget_usage_record(const struct budget_attempt *a, int64_t wall_ms)
{
	struct store_usage u = STORE_USAGE_UNKNOWN;
	struct sl_err e = SL_ERR_INIT;
	json_t *j = NULL;
	char role[] = "builder", *path;

	if (!(path = usage_path(a)))
		return;
	/* the builder writes the run folder: bounded, never through a link */
	if (sl_json_read(path, USAGE_FILE_MAX, &j, &e) != 0) {
		if (e.code != SL_ENOTFOUND)
			usage_ignored(a, "usage file", NULL, e.msg);
	} else if (store_usage_from_json(j, &u, &e) != 0) {
		usage_ignored(a, "usage file", path, e.msg);
	} else {
		put(a, &u, role, wall_ms);
	}
	free(u.model);
	json_decref(j);
	free(path);
}

void budget_usage_record_review(const struct budget_attempt *a, const json_t *usage,
				int64_t wall_ms)
{
	struct store_usage u = STORE_USAGE_UNKNOWN;
	struct sl_err e = SL_ERR_INIT;
	char role[] = "reviewer";

	if (!usage)
		return; /* the reviewer did not say */
	if (store_usage_from_json(usage, &u, &e) != 0) {
		usage_ignored(a, "the reviewer's usage", NULL, e.msg);
	} else {
		put(a, &u, role, wall_ms);
	}
	free(u.model);
}
