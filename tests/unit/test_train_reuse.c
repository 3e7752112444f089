/*
 * No tree tested twice (docs/config.md, merge.reuse_green; src/train/rerun.c):
 * a gate's green on a tree, for the same command, stands there only when
 * the tree never had a red for it. Pure: the counts stand for gate_runs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "train/train.h"

static void a_green_stands(void **state)
{
	(void)state;
	assert_int_equal(train_green_stands(1, 0), 1);
	assert_int_equal(train_green_stands(3, 0), 1);
}

static void nothing_yet_runs(void **state)
{
	(void)state;
	assert_int_equal(train_green_stands(0, 0), 0);
}

static void a_red_never_stands(void **state)
{
	(void)state;
	assert_int_equal(train_green_stands(0, 1), 0);
	assert_int_equal(train_green_stands(0, 2), 0);
}

static void a_flaky_tree_runs(void **state)
{
	(void)state;
	assert_int_equal(train_green_stands(1, 1), 0);
	assert_int_equal(train_green_stands(5, 1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_green_stands),
		cmocka_unit_test(nothing_yet_runs),
		cmocka_unit_test(a_red_never_stands),
		cmocka_unit_test(a_flaky_tree_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
