/*
 * Flaky merge gates (docs/config.md, merge.rerun_failed; src/train/rerun.c):
 * a red merge gate runs again on the same tree before its car is blamed,
 * and a car is red only when a gate was red on rerun_failed + 1 runs of
 * one tree. Pure: the tallies stand for what the store counted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "train/train.h"

static const char TREE[] = "0123456789abcdef0123456789abcdef01234567";

static void green_gates_run_once(void **state)
{
	struct train_gate_tally g[2] = { { 1, 0 }, { 1, 3 } };
	int again[2] = { 7, 7 };

	(void)state;
	assert_int_equal(train_rerun_decide(g, 2, 1, again), TRAIN_RERUN_GREEN);
	assert_int_equal(again[0], 0);
	assert_int_equal(again[1], 0);
}

static void a_first_red_runs_again_alone(void **state)
{
	struct train_gate_tally g[3] = { { 1, 0 }, { 0, 1 }, { 1, 0 } };
	int again[3];

	(void)state;
	assert_int_equal(train_rerun_decide(g, 3, 1, again), TRAIN_RERUN_AGAIN);
	assert_int_equal(again[0], 0);
	assert_int_equal(again[1], 1);
	assert_int_equal(again[2], 0);
}

static void red_twice_on_one_tree_is_blamed(void **state)
{
	struct train_gate_tally g[2] = { { 0, 1 }, { 0, 2 } };
	int again[2];

	(void)state;
	/* one gate red on both runs: the car is red, the other gate not run again for nothing */
	assert_int_equal(train_rerun_decide(g, 2, 1, again), TRAIN_RERUN_RED);
	g[1].reds = 1;
	assert_int_equal(train_rerun_decide(g, 2, 1, again), TRAIN_RERUN_AGAIN);
	assert_int_equal(again[0] + again[1], 2);
}

static void rerun_failed_counts_the_runs(void **state)
{
	struct train_gate_tally g[1] = { { 0, 1 } };
	int again[1], reds;

	(void)state;
	/* 0: today's behaviour, the first red blames */
	assert_int_equal(train_rerun_decide(g, 1, 0, again), TRAIN_RERUN_RED);
	/* N: red on N + 1 runs of the tree, never fewer */
	for (reds = 1; reds <= 3; reds++) {
		g[0].reds = reds;
		assert_int_equal(train_rerun_decide(g, 1, 3, again), TRAIN_RERUN_AGAIN);
	}
	g[0].reds = 4;
	assert_int_equal(train_rerun_decide(g, 1, 3, again), TRAIN_RERUN_RED);
}

static void a_killed_rerun_counts_the_red_before(void **state)
{
	/* red once, killed before the rerun: the next test of the car counts that red */
	struct train_gate_tally g[1] = { { 0, 2 } };
	int again[1];

	(void)state;
	assert_int_equal(train_rerun_decide(g, 1, 1, again), TRAIN_RERUN_RED);
	g[0].passed = 1;
	assert_int_equal(train_rerun_decide(g, 1, 1, again), TRAIN_RERUN_GREEN);
}

static void every_combination_of_two_gates(void **state)
{
	int p0, p1, r0, r1, n, again[2];

	(void)state;
	for (n = 0; n <= 2; n++)
		for (p0 = 0; p0 <= 1; p0++)
			for (p1 = 0; p1 <= 1; p1++)
				for (r0 = 1 - p0; r0 <= 4; r0++)
					for (r1 = 1 - p1; r1 <= 4; r1++) {
						struct train_gate_tally g[2] = { { p0, r0 }, { p1, r1 } };
						enum train_rerun v = train_rerun_decide(g, 2, n, again);
						int blamed = (!p0 && r0 > n) || (!p1 && r1 > n);
						assert_int_equal(v == TRAIN_RERUN_RED, blamed);
						assert_int_equal(v == TRAIN_RERUN_GREEN, p0 && p1);
						if (v == TRAIN_RERUN_AGAIN) {
							assert_int_equal(again[0], !p0);
							assert_int_equal(again[1], !p1);
						}
					}
}

static void the_words_name_the_runs_and_the_tree(void **state)
{
	char buf[128];

	(void)state;
	train_red_runs_words(2, TREE, buf, sizeof(buf));
	assert_string_equal(buf, "red on both runs of the same tree 0123456789ab");
	train_red_runs_words(3, TREE, buf, sizeof(buf));
	assert_string_equal(buf, "red on all 3 runs of the same tree 0123456789ab");
	train_red_runs_words(1, TREE, buf, sizeof(buf));
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(green_gates_run_once),
		cmocka_unit_test(a_first_red_runs_again_alone),
		cmocka_unit_test(red_twice_on_one_tree_is_blamed),
		cmocka_unit_test(rerun_failed_counts_the_runs),
		cmocka_unit_test(a_killed_rerun_counts_the_red_before),
		cmocka_unit_test(every_combination_of_two_gates),
		cmocka_unit_test(the_words_name_the_runs_and_the_tree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
