/*
 * runner: the dispatcher's map from the state table's steps to the step
 * functions (runner/advance.c): every state a tick or a working process
 * moves on has a function, the others none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runner/runner_int.h"

static void test_every_moving_state_has_a_step(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < RUN_STATE_COUNT; i++) {
		enum run_state s = (enum run_state)i;
		int moves = run_state_is_runnable(s) || run_state_is_active(s);

		if (moves)
			assert_non_null(runner__step_for(s));
		else
			assert_null(runner__step_for(s));
	}
}

static void test_steps_are_the_handlers(void **state)
{
	(void)state;
	assert_ptr_equal(runner__step_for(RUN_QUEUED), step_start);
	assert_ptr_equal(runner__step_for(RUN_PREPARING), step_prepare);
	assert_ptr_equal(runner__step_for(RUN_BUILDING), step_build);
	assert_ptr_equal(runner__step_for(RUN_GATING), step_gate);
	assert_ptr_equal(runner__step_for(RUN_REVIEWING), step_review);
	assert_ptr_equal(runner__step_for(RUN_APPROVED), step_train);
	assert_ptr_equal(runner__step_for(RUN_MERGING), step_merge);
	assert_ptr_equal(runner__step_for(RUN_RESOLVING), step_resolve);
	assert_null(runner__step_for(RUN_AWAITING_REVIEW));
	assert_null(runner__step_for(RUN_MERGE_CONFLICT));
	assert_null(runner__step_for(RUN_INTERRUPTED));
	assert_null(runner__step_for((enum run_state)RUN_STATE_COUNT));
}

/* Each step of the table is some state's: none is dead. */
static void test_every_step_is_used(void **state)
{
	int step, i, used;

	(void)state;
	for (step = RUN_STEP_NONE + 1; step < RUN_STEP_COUNT; step++) {
		for (used = 0, i = 0; i < RUN_STATE_COUNT; i++)
			used += run_state_step((enum run_state)i) == (enum run_step)step;
		assert_int_equal(used, 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_moving_state_has_a_step),
		cmocka_unit_test(test_steps_are_the_handlers),
		cmocka_unit_test(test_every_step_is_used),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
