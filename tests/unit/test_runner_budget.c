/*
 * A run's own budget (runner/budget.c, docs/budgets.md): where each limit
 * comes from (the work order's budget wins, key by key; none lifts the
 * config's), when the spend reaches it (money first, a float sum judged
 * with a tolerance), what the reason says, and the minutes left that bound
 * the next attempt.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <string.h>

#include "runner/runner.h"
#include "core/config.h"

static struct sl_config cfg;

static void limits_from_the_work_order_then_the_config(void **state)
{
	struct runner_run_budget b;
	json_t *wo;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.budget.run_usd = 5;
	cfg.budget.run_minutes = -1;
	runner_run_budget_of(&cfg, NULL, &b);
	assert_true(b.usd == 5 && b.minutes == -1);
	assert_string_equal(b.usd_from, "budget.run.usd in .system/config.yaml");

	wo = json_pack("{s:{s:f}}", "budget", "usd", 2.5);
	runner_run_budget_of(&cfg, wo, &b);
	assert_true(b.usd == 2.5 && b.minutes == -1);
	assert_string_equal(b.usd_from, "the work order's budget.usd");
	json_decref(wo);

	wo = json_pack("{s:{s:s, s:i}}", "budget", "usd", "none", "minutes", 30);
	runner_run_budget_of(&cfg, wo, &b);
	assert_true(b.usd == -1 && b.minutes == 30);
	assert_string_equal(b.minutes_from, "the work order's budget.minutes");
	json_decref(wo);

	/* a value ingest would refuse is not a limit: the config's stands */
	wo = json_pack("{s:{s:s}}", "budget", "usd", "lots");
	runner_run_budget_of(&cfg, wo, &b);
	assert_true(b.usd == 5);
	json_decref(wo);
}

static void spent_at_the_limit_and_not_before(void **state)
{
	struct runner_run_budget b = { 0.8, -1, "the work order's budget.usd", "x" };
	struct runner_run_spend sp = { 0.7 + 0.1, 0, 0 };
	char why[400];

	(void)state;
	assert_true(0.7 + 0.1 < 0.8); /* what a plain >= would miss */
	assert_int_equal(runner_run_budget_spent(&b, &sp, why, sizeof(why)), 1);
	assert_string_equal(why, "the run's budget is spent: its attempts recorded $0.80, the "
				 "work order's budget.usd is $0.80; no further attempt starts");
	sp.usd = 0.79;
	assert_int_equal(runner_run_budget_spent(&b, &sp, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	sp.estimate = 1, sp.usd = 1;
	assert_int_equal(runner_run_budget_spent(&b, &sp, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "$1.00 (estimate)"));

	/* no limit at all: never spent */
	b.usd = -1;
	sp.usd = 1e9, sp.wall_ms = INT64_MAX / 2;
	assert_int_equal(runner_run_budget_spent(&b, &sp, why, sizeof(why)), 0);
}

static void minutes_spent_and_left(void **state)
{
	struct runner_run_budget b = { -1, 2, "x", "budget.run.minutes in .system/config.yaml" };
	struct runner_run_spend sp = { 0, 0, 90 * 1000 };
	char why[400];

	(void)state;
	assert_int_equal(runner_run_budget_spent(&b, &sp, why, sizeof(why)), 0);
	assert_int_equal(runner_run_budget_left_ms(&b, &sp), 30 * 1000);
	sp.wall_ms = 120 * 1000;
	assert_int_equal(runner_run_budget_spent(&b, &sp, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "the run's time is spent: its attempts ran "));
	assert_non_null(strstr(why, "budget.run.minutes in .system/config.yaml is 2 minutes"));
	/* past the limit the next attempt gets the least there is, never 0 (no limit) */
	sp.wall_ms = 500 * 1000;
	assert_int_equal(runner_run_budget_left_ms(&b, &sp), 1);
	b.minutes = -1;
	assert_int_equal(runner_run_budget_left_ms(&b, &sp), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(limits_from_the_work_order_then_the_config),
		cmocka_unit_test(spent_at_the_limit_and_not_before),
		cmocka_unit_test(minutes_spent_and_left),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
