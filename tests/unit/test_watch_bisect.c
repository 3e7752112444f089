/* The halving decision of the watch's bisection (docs/watch.md, Bisect). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "watch/watch.h"

/* Bisect n landings whose first red one is `bad` (every later one red too); the tests run. */
static size_t steps_to(size_t n, size_t bad, size_t *culprit)
{
	struct sl_bisect b;
	size_t pick, steps = 0;

	sl_bisect_init(&b, n);
	while (sl_bisect_next(&b, &pick)) {
		assert_true(pick < n - 1); /* the tip is known red: never tested again */
		sl_bisect_record(&b, pick, pick >= bad);
		steps++;
		assert_true(steps <= n);
	}
	*culprit = sl_bisect_culprit(&b);
	return steps;
}

/* Three landings, the second broke it: two tests at most (issue 31's test). */
static void test_three_second(void **state)
{
	size_t culprit;

	(void)state;
	assert_true(steps_to(3, 1, &culprit) <= 2);
	assert_int_equal(culprit, 1);
}

/* One landing since the last green: it is the culprit, nothing to test. */
static void test_one(void **state)
{
	size_t culprit;

	(void)state;
	assert_int_equal(steps_to(1, 0, &culprit), 0);
	assert_int_equal(culprit, 0);
}

/* Every culprit of every length up to 64 is found in ceil(log2(n)) tests. */
static void test_halving(void **state)
{
	(void)state;
	for (size_t n = 1; n <= 64; n++) {
		size_t bound = 0;
		while (((size_t)1 << bound) < n)
			bound++;
		for (size_t bad = 0; bad < n; bad++) {
			size_t culprit;
			assert_true(steps_to(n, bad, &culprit) <= bound);
			assert_int_equal(culprit, bad);
		}
	}
}

/* A red run is believed only when the run again is red too. */
static void test_verdict(void **state)
{
	(void)state;
	assert_int_equal(sl_watch_verdict(0, -1), SL_WATCH_GREEN);
	assert_int_equal(sl_watch_verdict(1, 1), SL_WATCH_RED);
	assert_int_equal(sl_watch_verdict(1, 0), SL_WATCH_FLAKY);
	assert_int_equal(sl_watch_verdict(1, -1), SL_WATCH_AGAIN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_three_second),
		cmocka_unit_test(test_one),
		cmocka_unit_test(test_halving),
		cmocka_unit_test(test_verdict),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
