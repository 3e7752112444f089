/*
 * The merge train's decision (train_decide(), train/train.h): a table of
 * named cases, one per branch, with the reason a person reads; and every
 * train of one to four cars, exhaustively, against the rules of landing
 * (docs/ARCHITECTURE.md, The merge train).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "train/train.h"

static char TIP[] = "7777777777777777777777777777777777777777";
static char STALE[] = "8888888888888888888888888888888888888888";
static char HEAD[] = "head", OWNER[] = "owner";

static char ids[4][8] = { "run-a", "run-b", "run-c", "run-d" };
static char commits[4][41] = { "1111111111111111111111111111111111111111",
			    "2222222222222222222222222222222222222222",
			    "3333333333333333333333333333333333333333",
			    "4444444444444444444444444444444444444444" };

/* Car i, built on the car ahead in the array (car 0: on the tip). */
static void car(struct store_car *c, int i, enum train_status status, char *base)
{
	memset(c, 0, sizeof(*c));
	c->run_id = ids[i];
	c->status = status;
	c->base = base;
	c->head = HEAD;
	c->commit = status == TRAIN_WAITING ? NULL : commits[i];
	c->ahead = i ? ids[i - 1] : NULL;
	c->tester = OWNER;
	c->started_ms = 1000;
	c->tested_ms = 2500;
}

static void state(struct train_state *st, const struct store_car *cars, size_t n,
		  const int *alive, const char *me)
{
	memset(st, 0, sizeof(*st));
	st->cars = cars;
	st->n = n;
	st->alive = alive;
	st->tip = TIP;
	st->me = me;
	st->holds = 1;
	st->target = "main";
	st->train_depth = 4;
	st->my_ahead_name = "wo-mine";
	st->line_ahead_name = "wo-ahead";
}

struct row {
	const char *name;
	enum train_status s0, s1; /* car 0 (run-a), car 1 (run-b) */
	int base1_tip;            /* car 1 built on the tip, not on car 0 */
	int alive0, alive1, head_in_base, holds;
	size_t n;
	int me; /* 0 or 1 */
	enum train_action want;
	const char *why;
};

static const struct row rows[] = {
	{ "out of line, a live car ahead", TRAIN_TESTING, TRAIN_RED, 1, 1, 0, 0, 1, 2, 1,
	  TRAIN_DO_WAIT, "in the train: merge gates failed on top of wo-mine; waits for the cars "
	  "ahead to land or leave" },
	{ "out of line, no live car ahead", TRAIN_PENDING, TRAIN_CONFLICT, 1, 0, 0, 0, 1, 2, 1,
	  TRAIN_DO_STOP, "in the train: merge conflict on top of wo-mine; waits for the cars "
	  "ahead to land or leave" },
	{ "out of line on no base: parked", TRAIN_RED, TRAIN_RED, 0, 0, 0, 0, 1, 2, 0,
	  TRAIN_DO_PARK, "" },
	{ "conflict on the tip: leaves", TRAIN_CONFLICT, TRAIN_GREEN, 0, 0, 0, 0, 1, 1, 0,
	  TRAIN_DO_LEAVE_CONFLICT, "" },
	{ "red on the tip, nothing new: own red", TRAIN_RED, TRAIN_GREEN, 0, 0, 0, 1, 1, 1, 0,
	  TRAIN_DO_OWN_RED, "" },
	{ "red on the tip, a rival there: semantic", TRAIN_RED, TRAIN_GREEN, 0, 0, 0, 0, 1, 1, 0,
	  TRAIN_DO_LEAVE_SEMANTIC, "" },
	{ "red on a car not known good", TRAIN_TESTING, TRAIN_RED, 0, 1, 0, 0, 1, 2, 1,
	  TRAIN_DO_WAIT, "in the train: car 2 of 2, merge gates failed on top of wo-mine, which "
	  "is not known good yet; waits for it" },
	{ "conflict on a car not known good", TRAIN_PENDING, TRAIN_CONFLICT, 0, 0, 0, 0, 1, 2, 1,
	  TRAIN_DO_STOP, "in the train: car 2 of 2, merge conflict on top of wo-mine, which "
	  "is not known good yet; waits for it" },
	{ "waiting for a place", TRAIN_GREEN, TRAIN_WAITING, 0, 1, 0, 0, 1, 2, 1, TRAIN_DO_WAIT,
	  "in the train: car 2 of 2, waits for a place (merge.train_depth 4)" },
	{ "pending: tested here", TRAIN_GREEN, TRAIN_PENDING, 0, 0, 0, 0, 1, 2, 1, TRAIN_DO_TEST,
	  "" },
	{ "testing, its tester dead: tested here", TRAIN_GREEN, TRAIN_TESTING, 0, 0, 0, 0, 1, 2, 1,
	  TRAIN_DO_TEST, "" },
	{ "testing by a live process", TRAIN_GREEN, TRAIN_TESTING, 0, 0, 1, 0, 1, 2, 1,
	  TRAIN_DO_STOP, "in the train: car 2 of 2, being tested by another process" },
	{ "green, first, on the tip: lands", TRAIN_GREEN, TRAIN_PENDING, 0, 0, 0, 0, 1, 2, 0,
	  TRAIN_DO_LAND, "landing the tested merge 111111111111 on main" },
	{ "green, first, no longer approved", TRAIN_GREEN, TRAIN_PENDING, 0, 0, 0, 0, 0, 2, 0,
	  TRAIN_DO_STOP, "in the train: car 1 of 2, no longer approved as built; waits to be "
	  "planned again" },
	{ "green behind a car", TRAIN_TESTING, TRAIN_GREEN, 0, 1, 0, 0, 1, 2, 1, TRAIN_DO_WAIT,
	  "in the train: car 2 of 2, green in 1.5 s; waits for wo-ahead to land" },
	{ "green behind a car, not live", TRAIN_GREEN, TRAIN_GREEN, 0, 0, 0, 0, 1, 2, 1,
	  TRAIN_DO_STOP, "in the train: car 2 of 2, green in 1.5 s; waits for wo-ahead to land" },
};

static void test_table(void **unused)
{
	size_t k;

	(void)unused;
	for (k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		const struct row *r = &rows[k];
		struct store_car cars[2];
		struct train_state st;
		struct train_decision d;
		int alive[2] = { r->alive0, r->alive1 };

		car(&cars[0], 0, r->s0, TIP);
		car(&cars[1], 1, r->s1, r->base1_tip ? TIP : commits[0]);
		/* out of the line and on no known base: built again on the tip */
		if (r->want == TRAIN_DO_PARK)
			cars[0].base = NULL;
		state(&st, cars, r->n, alive, ids[r->me]);
		st.head_in_base = r->head_in_base;
		st.holds = r->holds;
		assert_int_equal(train_decide(&st, &d), 0);
		if (d.action != r->want || strcmp(d.why, r->why))
			fail_msg("%s: action %d, want %d; why '%s', want '%s'", r->name,
				 (int)d.action, (int)r->want, d.why, r->why);
	}
}

static void test_not_in_train(void **unused)
{
	struct store_car cars[1];
	struct train_state st;
	struct train_decision d;

	(void)unused;
	car(&cars[0], 0, TRAIN_GREEN, TIP);
	state(&st, cars, 1, NULL, "run-z");
	assert_int_equal(train_decide(&st, &d), -1);
}

/* The tail of "in the train: car k of M" that a plan tells each car's run. */
static void test_car_tail(void **unused)
{
	struct store_car c;
	char buf[256];

	(void)unused;
	car(&c, 1, TRAIN_WAITING, TIP);
	train_car_tail(&c, 5, 4, NULL, "wo-a", buf, sizeof(buf));
	assert_string_equal(buf, ", waits for a place (merge.train_depth 4)");
	car(&c, 1, TRAIN_PENDING, TIP);
	train_car_tail(&c, 2, 4, NULL, "wo-a", buf, sizeof(buf));
	assert_string_equal(buf, ", built on top of wo-a; waits to be tested");
	car(&c, 1, TRAIN_GREEN, TIP);
	train_car_tail(&c, 2, 4, NULL, "wo-a", buf, sizeof(buf));
	assert_string_equal(buf, ", green in 1.5 s; waits for wo-a to land");
	train_car_tail(&c, 1, 4, NULL, "main", buf, sizeof(buf));
	assert_string_equal(buf, ", green in 1.5 s; lands next");
	car(&c, 1, TRAIN_TESTING, TIP);
	train_car_tail(&c, 1, 4, NULL, "main", buf, sizeof(buf));
	assert_string_equal(buf, "");
}

struct counts {
	long states, lands, checked_green, checked_first, checked_tip, checked_holds,
		checked_order, expected_lands;
};

/* LAND is decided exactly when the rules allow it, and then every rule holds. */
static void check(const struct train_state *st, size_t me, struct counts *k)
{
	const struct store_car *c = &st->cars[me];
	struct train_decision d;
	size_t i;
	int first = 1, may;

	assert_int_equal(train_decide(st, &d), 0);
	k->states++;
	for (i = 0; i < me; i++) /* no car ahead of it still in the line */
		first &= !train_in_line(st->cars, st->n, st->tip, &st->cars[i]);
	may = c->status == TRAIN_GREEN && first && !strcmp(c->base, st->tip) && st->holds;
	k->expected_lands += may;
	if ((d.action == TRAIN_DO_LAND) != may)
		fail_msg("car %zu of %zu: LAND %d, allowed %d", me + 1, st->n,
			 d.action == TRAIN_DO_LAND, may);
	if (d.action != TRAIN_DO_LAND)
		return;
	k->lands++;
	assert_int_equal(c->status, TRAIN_GREEN), k->checked_green++;
	assert_int_equal(d.where.pos, 1), k->checked_first++;
	assert_string_equal(c->base, st->tip), k->checked_tip++;
	assert_true(st->holds), k->checked_holds++;
	for (i = 0; i < me; i++) /* in order: every car ahead has left the line */
		assert_true(st->cars[i].status == TRAIN_RED || st->cars[i].status == TRAIN_CONFLICT);
	k->checked_order++;
	assert_non_null(strstr(d.why, "landing the tested merge"));
}

static void test_exhaustive(void **unused)
{
	static const enum train_status all[] = { TRAIN_PENDING, TRAIN_WAITING, TRAIN_TESTING,
						 TRAIN_GREEN, TRAIN_RED, TRAIN_CONFLICT };
	struct counts k = { 0 };
	long want = 0;
	size_t n;

	(void)unused;
	for (n = 1; n <= 4; n++) {
		long statuses = 1, combos;
		long v, i;

		for (i = 0; i < (long)n; i++)
			statuses *= 6;
		combos = statuses << (2 * n); /* statuses x base on the tip or not x alive */
		want += combos * (long)n * 4;  /* x me x holds x head_in_base */
		for (v = 0; v < combos; v++) {
			struct store_car cars[4];
			int alive[4];
			long x = v;
			size_t me, j;

			for (j = 0; j < n; j++) {
				int on_tip = (int)(x & 1), live = (int)((x >> 1) & 1);
				enum train_status s;

				x >>= 2;
				s = all[x % 6];
				x /= 6;
				car(&cars[j], (int)j, s,
				    on_tip ? TIP : j ? commits[j - 1] : STALE);
				alive[j] = live;
			}
			for (me = 0; me < n; me++) {
				struct train_state st;
				int h;

				for (h = 0; h < 4; h++) {
					state(&st, cars, n, alive, ids[me]);
					st.holds = h & 1;
					st.head_in_base = h >> 1;
					check(&st, me, &k);
				}
			}
		}
	}
	assert_int_equal(k.states, want);
	assert_true(k.lands > 0);
	assert_int_equal(k.lands, k.expected_lands);
	assert_int_equal(k.checked_green, k.lands);
	assert_int_equal(k.checked_first, k.lands);
	assert_int_equal(k.checked_tip, k.lands);
	assert_int_equal(k.checked_holds, k.lands);
	assert_int_equal(k.checked_order, k.lands);
	print_message("%ld states, %ld land\n", k.states, k.lands);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_not_in_train),
		cmocka_unit_test(test_car_tail),
		cmocka_unit_test(test_exhaustive),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
