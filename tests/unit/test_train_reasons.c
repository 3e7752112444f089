/*
 * The reasons a run shows in the train outside train_decide(), words moved
 * out of the runner's step into train/words.c (docs/ARCHITECTURE.md, The
 * merge train), and which tails of a retold car name the car ahead (the
 * retelling reads that name from the store only then). Pure functions: no
 * store, no git. The words are the ones tests/cli grep.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "train/train.h"

static char COMMIT[] = "0123456789abcdef0123456789abcdef01234567";

static void testing_names_the_car_ahead_and_the_gates(void **state)
{
	char buf[256];

	(void)state;
	train_testing_reason(buf, sizeof(buf), 2, 3, "W1", "unit, lint");
	assert_string_equal(buf, "in the train: car 2 of 3, testing on top of W1 (gates: unit, "
			    "lint)");
}

static void overlap_says_who_and_whether_it_landed(void **state)
{
	char buf[512];

	(void)state;
	train_overlap_reason(buf, sizeof(buf), "'a.txt'", "W2", "r-2", 1);
	assert_string_equal(buf, "queue.overlap is fatal: 'a.txt' also changed by W2 (run r-2), "
			    "which landed first; nothing was merged");
	train_overlap_reason(buf, sizeof(buf), "'a.txt'", "W2", "r-2", 0);
	assert_string_equal(buf, "queue.overlap is fatal: 'a.txt' also changed by W2 (run r-2), "
			    "which is ahead in the merge train; nothing was merged");
}

static void held_names_the_commit_and_the_way_out(void **state)
{
	char buf[512];

	(void)state;
	train_held_reason(buf, sizeof(buf), "main", COMMIT, "r-9");
	assert_string_equal(buf, "merge held: the target 'main' carries commit 0123456789ab from "
			    "run r-9 that sluice did not land (unreviewed); reset 'main' to before "
			    "it or run 'sluice accept-target "
			    "0123456789abcdef0123456789abcdef01234567'");
	train_held_reason(buf, sizeof(buf), "main", COMMIT, "");
	assert_non_null(strstr(buf, "from run (unknown) that"));
}

/* For every status and place: the tail names the car ahead exactly when tail_names says so. */
static void tail_names_the_car_ahead_only_when_asked(void **state)
{
	enum train_status all[] = { TRAIN_WAITING, TRAIN_PENDING, TRAIN_TESTING,
				    TRAIN_GREEN,   TRAIN_RED,     TRAIN_CONFLICT };
	struct store_car c;
	char buf[256];
	size_t i;
	int pos;

	(void)state;
	memset(&c, 0, sizeof(c));
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		for (pos = 1; pos <= 3; pos++) {
			c.status = all[i];
			train_car_tail(&c, pos, 4, NULL, "AHEAD-WO", buf, sizeof(buf));
			assert_int_equal(strstr(buf, "AHEAD-WO") != NULL,
					 train_car_tail_names(&c, pos));
			if (!train_car_tail_names(&c, pos)) { /* NULL is never read then */
				train_car_tail(&c, pos, 4, NULL, NULL, buf, sizeof(buf));
				assert_null(strstr(buf, "?"));
			}
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(testing_names_the_car_ahead_and_the_gates),
		cmocka_unit_test(overlap_says_who_and_whether_it_landed),
		cmocka_unit_test(held_names_the_commit_and_the_way_out),
		cmocka_unit_test(tail_names_the_car_ahead_only_when_asked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
