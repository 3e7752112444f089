/*
 * A frozen target in the merge train's decision (train_decide(),
 * train/train.h; docs/config.md, "merge.freeze"; `sluice freeze`): the
 * train keeps testing cars, a green front car on the tip waits with the
 * freeze's reason instead of landing, and an urgent run lands through a
 * freeze only when the freeze allows urgent work. One table, one row per
 * case.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "train/train.h"
#include "core/config.h"

static char TIP[] = "7777777777777777777777777777777777777777";
static char COMMIT[] = "1111111111111111111111111111111111111111";
static char RUN[] = "run-a", HEAD[] = "head", OWNER[] = "owner";

struct row {
	const char *name;
	enum train_status status; /* the run's car, alone in the line, built on the tip */
	const char *frozen;       /* the freeze's reason, NULL: not frozen */
	int allow_urgent, urgent, alive;
	enum train_action want;
	const char *why; /* NULL: not checked */
};

static const struct row rows[] = {
	{ "not frozen, green: lands", TRAIN_GREEN, NULL, 0, 0, 0, TRAIN_DO_LAND,
	  "landing the tested merge 111111111111 on main" },
	{ "frozen, green: waits with the reason", TRAIN_GREEN, "release", 0, 0, 0, TRAIN_DO_STOP,
	  "in the train: car 1 of 1, green in 1.5 s; wait: frozen (release)" },
	{ "frozen, pending: still tested", TRAIN_PENDING, "release", 0, 0, 0, TRAIN_DO_TEST, "" },
	{ "frozen, testing by a dead tester: tested", TRAIN_TESTING, "release", 0, 0, 0,
	  TRAIN_DO_TEST, "" },
	{ "frozen, testing by a live tester: stops", TRAIN_TESTING, "release", 0, 0, 1,
	  TRAIN_DO_STOP, "in the train: car 1 of 1, being tested by another process" },
	{ "frozen, red on the tip: its own verdict", TRAIN_RED, "release", 0, 0, 0,
	  TRAIN_DO_LEAVE_SEMANTIC, "" },
	{ "frozen, urgent, not allowed: waits", TRAIN_GREEN, "weekend", 0, 1, 0, TRAIN_DO_STOP,
	  "in the train: car 1 of 1, green in 1.5 s; wait: frozen (weekend)" },
	{ "frozen allowing urgent, urgent: lands", TRAIN_GREEN, "weekend", 1, 1, 0, TRAIN_DO_LAND,
	  "landing the tested merge 111111111111 on main (urgent, through the freeze: weekend)" },
	{ "frozen allowing urgent, not urgent: waits", TRAIN_GREEN, "weekend", 1, 0, 0,
	  TRAIN_DO_STOP, "in the train: car 1 of 1, green in 1.5 s; wait: frozen (weekend)" },
	{ "not frozen, urgent: lands as any", TRAIN_GREEN, NULL, 1, 1, 0, TRAIN_DO_LAND,
	  "landing the tested merge 111111111111 on main" },
	{ "frozen with an empty reason", TRAIN_GREEN, "", 0, 0, 0, TRAIN_DO_STOP,
	  "in the train: car 1 of 1, green in 1.5 s; wait: frozen ()" },
};

static void one(const struct row *r)
{
	struct store_car c;
	struct train_state st;
	struct train_decision d;
	int alive[1];

	memset(&c, 0, sizeof(c));
	c.run_id = RUN;
	c.status = r->status;
	c.base = TIP;
	c.head = HEAD;
	c.commit = COMMIT;
	c.tester = OWNER;
	c.started_ms = 1000;
	c.tested_ms = 2500;
	alive[0] = r->alive;
	memset(&st, 0, sizeof(st));
	st.cars = &c;
	st.n = 1;
	st.alive = alive;
	st.tip = TIP;
	st.me = RUN;
	st.head_in_base = 0;
	st.holds = 1;
	st.target = "main";
	st.train_depth = 2;
	st.frozen = r->frozen;
	st.frozen_allow_urgent = r->allow_urgent;
	st.urgent = r->urgent;
	assert_int_equal(train_decide(&st, &d), 0);
	if (d.action != r->want)
		fail_msg("%s: action %d, want %d (%s)", r->name, d.action, r->want, d.why);
	if (r->why && strcmp(d.why, r->why))
		fail_msg("%s: reason '%s', want '%s'", r->name, d.why, r->why);
}

static void test_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		one(&rows[i]);
}

/* A window of merge.freeze: its days, from up to (not including) to. */
static void test_window(void **state)
{
	struct sl_freeze_window w = { .days = (1u << 6) | (1u << 0), .from_min = 8 * 60,
				      .to_min = 1440 }; /* sat, sun 08:00-24:00 */
	static const struct {
		int wday, minute, want;
	} cases[] = {
		{ 6, 8 * 60, 1 },      /* saturday 08:00: from is in */
		{ 6, 8 * 60 - 1, 0 },  /* 07:59 */
		{ 0, 1439, 1 },        /* sunday 23:59 */
		{ 1, 9 * 60, 0 },      /* monday */
		{ 5, 23 * 60, 0 },     /* friday */
		{ -1, 9 * 60, 0 },     /* no day */
		{ 7, 9 * 60, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (train_window_holds(&w, cases[i].wday, cases[i].minute) != cases[i].want)
			fail_msg("day %d minute %d: want %d", cases[i].wday, cases[i].minute,
				 cases[i].want);
	w.from_min = 0;
	w.to_min = 60;
	assert_int_equal(train_window_holds(&w, 6, 59), 1);
	assert_int_equal(train_window_holds(&w, 6, 60), 0); /* to is out */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
