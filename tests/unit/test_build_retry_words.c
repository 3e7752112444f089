/*
 * The retry decision's words and whether a validator must be asked:
 * build_retry_decision_words() (what a run's reason adds after what failed)
 * and build_retry_validates(), which the runner's retry.c used to keep.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/config.h"
#include "builder/builder.h"

static void test_words_after_what_failed(void **state)
{
	struct sl_retry_rule rules[] = { { .kind = SL_RETRY_EXIT, .n = 3 } };
	struct sl_config cfg;
	struct build_retry_state st = BUILD_RETRY_STATE_INIT;
	struct build_retry_decision d;
	const char *failed[] = { "test", NULL };
	struct sl_err err = SL_ERR_INIT;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	assert_int_equal(build_retry_decide(&cfg, &st, 1, failed, 0, &d, &err), 0);
	assert_string_equal(d.reason, "gate 'test' failed on attempt 1; no retry rules");
	assert_string_equal(build_retry_decision_words(&d, 1), "no retry rules");
	cfg.retry = rules;
	cfg.nretry = 1;
	assert_int_equal(build_retry_decide(&cfg, &st, 3, failed, 0, &d, &err), 0);
	assert_string_equal(build_retry_decision_words(&d, 3), "retry exit at 3");
}

static void test_words_without_the_mark(void **state)
{
	struct build_retry_decision d;

	(void)state;
	memset(&d, 0, sizeof(d));
	strcpy(d.reason, "no retry rules");
	assert_string_equal(build_retry_decision_words(&d, 2), "no retry rules");
	/* another attempt's mark is not this one's */
	strcpy(d.reason, "gate 'x' failed on attempt 1; retry exit at 1");
	assert_string_equal(build_retry_decision_words(&d, 2), d.reason);
}

static void test_validates(void **state)
{
	struct sl_retry_rule rules[] = { { .kind = SL_RETRY_EXIT, .n = 3 },
					 { .kind = SL_RETRY_VALIDATE } };
	struct sl_config cfg;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	assert_int_equal(build_retry_validates(&cfg), 0);
	cfg.retry = rules;
	cfg.nretry = 1;
	assert_int_equal(build_retry_validates(&cfg), 0);
	cfg.nretry = 2;
	assert_int_equal(build_retry_validates(&cfg), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_words_after_what_failed),
		cmocka_unit_test(test_words_without_the_mark),
		cmocka_unit_test(test_validates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
