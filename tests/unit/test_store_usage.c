/* store: a usage file's figures (store_usage_parse) and the once-per-attempt row (store_usage_put). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "test_helpers.h"

static int parse(const char *text, struct store_usage *u, struct sl_err *err)
{
	struct store_usage z = STORE_USAGE_UNKNOWN;

	*u = z;
	sl_err_clear(err);
	return store_usage_parse(text, strlen(text), u, err);
}

static void test_parse_all(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	struct store_usage u;

	(void)state;
	assert_int_equal(parse("{\"input_tokens\": 1200, \"output_tokens\": 340, "
			       "\"cache_read_tokens\": 5000, \"cache_write_tokens\": 0, "
			       "\"cost_usd\": 0.125, \"model\": \"m\", \"other\": [1]}", &u, &err), 0);
	assert_int_equal(u.input_tokens, 1200);
	assert_int_equal(u.output_tokens, 340);
	assert_int_equal(u.cache_read_tokens, 5000);
	assert_int_equal(u.cache_write_tokens, 0);
	assert_true(u.cost_usd > 0.1249 && u.cost_usd < 0.1251);
	assert_string_equal(u.model, "m");
	free(u.model);
	/* all optional: nothing known; null is not known either; a whole cost is a number */
	assert_int_equal(parse("{\"output_tokens\": null, \"cost_usd\": 2}", &u, &err), 0);
	assert_true(u.input_tokens < 0 && u.output_tokens < 0 && !u.model);
	assert_true(u.cost_usd > 1.99 && u.cost_usd < 2.01);
}

static void test_parse_wrong(void **state)
{
	static const char *const bad[][2] = {
		{ "not json", "not JSON" },
		{ "[1, 2]", "not a JSON object" },
		{ "{\"input_tokens\": \"many\"}", "'input_tokens' is not a whole number" },
		{ "{\"output_tokens\": 1.5}", "'output_tokens' is not a whole number" },
		{ "{\"cache_read_tokens\": -1}", "'cache_read_tokens' is not a whole number" },
		{ "{\"cost_usd\": \"1\"}", "'cost_usd' is not a number" },
		{ "{\"cost_usd\": -0.5}", "'cost_usd' is not a number" },
		{ "{\"model\": 7}", "'model' is not a string" },
		{ "{\"model\": \"\"}", "'model' is not a string" },
		{ "{\"a\": 1, \"a\": 2}", "not JSON" },
	};
	struct sl_err err = SL_ERR_INIT;
	struct store_usage u;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(parse(bad[i][0], &u, &err), SL_EINVALID);
		if (!strstr(err.msg, bad[i][1]))
			fail_msg("%s: '%s' does not say '%s'", bad[i][0], err.msg, bad[i][1]);
		free(u.model);
	}
}

/* Recording the same run, attempt and role again replaces the row; another attempt adds one. */
static void test_put_once(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_usage u = STORE_USAGE_UNKNOWN, *v = NULL;
	char run[] = "20260101-000000-aaaaaaaa", builder[] = "builder";
	size_t n = 0;

	u.run_id = run;
	u.role = builder;
	u.attempt = 1;
	u.output_tokens = 5;
	u.cost_usd = 1.0;
	assert_int_equal(store_usage_put(f->st, &u, &err), 0);
	assert_int_equal(store_usage_put(f->st, &u, &err), 0);
	u.attempt = 2;
	u.cost_usd = -1;
	assert_int_equal(store_usage_put(f->st, &u, &err), 0);
	assert_int_equal(store_usage_list(f->st, run, 0, &v, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].attempt, 1);
	assert_int_equal(v[0].output_tokens, 5);
	assert_int_equal(v[0].input_tokens, -1);
	assert_true(v[0].cost_usd > 0.99 && v[1].cost_usd < 0);
	assert_null(v[0].work_order_id); /* no such run: the join finds nothing */
	store_usage_free(v, n);
	assert_int_equal(store_usage_list(f->st, NULL, INT64_MAX, &v, &n, &err), 0);
	assert_int_equal(n, 0);
	store_usage_free(v, n);
}

static int setup(void **state)
{
	return test_store_setup(state, "/tmp/sluice-test-usage.XXXXXX");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_all),
		cmocka_unit_test(test_parse_wrong),
		cmocka_unit_test_setup_teardown(test_put_once, setup, test_store_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
