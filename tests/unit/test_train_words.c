/*
 * What the train module words for a person outside train_decide()
 * (train/train.h): the own-red reason with its failed gates, the files two
 * runs both changed, the merge gates' names (docs/ARCHITECTURE.md, The
 * merge train). Pure functions: no store, no git.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "train/train.h"
#include "core/config.h"

static char BASE[] = "0123456789abcdef0123456789abcdef01234567";

static void own_red_names_the_failed_gates(void **state)
{
	struct store_car c;
	const char *failed[32] = { NULL };
	char reason[768];
	char gates[] = "[{\"name\":\"unit\",\"passed\":true},{\"name\":\"lint\",\"passed\":false},"
		       "{\"name\":\"e2e\",\"passed\":false}]";
	json_t *all;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.base = BASE;
	c.gates_json = gates;
	all = train_own_red(&c, failed, 32, reason, sizeof(reason));
	assert_non_null(all);
	assert_string_equal(failed[0], "lint");
	assert_string_equal(failed[1], "e2e");
	assert_null(failed[2]);
	assert_string_equal(reason, "the merge gates failed on its own merge on top of "
			    "0123456789ab, with nothing new there to resolve against: gate "
			    "'lint', 'e2e'");
	json_decref(all);
}

static void own_red_without_results_says_so(void **state)
{
	struct store_car c;
	const char *failed[32] = { NULL };
	char reason[768];
	json_t *all;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.base = BASE;
	all = train_own_red(&c, failed, 32, reason, sizeof(reason));
	assert_null(failed[0]);
	assert_non_null(strstr(reason, "to resolve against: gate ?"));
	json_decref(all);
}

static void some_paths_names_five_and_counts_the_rest(void **state)
{
	const char *few[] = { "a.txt", "b.txt", NULL };
	const char *many[] = { "1", "2", "3", "4", "5", "6", "7", NULL };
	char buf[256];

	(void)state;
	train_some_paths(few, buf, sizeof(buf));
	assert_string_equal(buf, "'a.txt', 'b.txt'");
	train_some_paths(many, buf, sizeof(buf));
	assert_string_equal(buf, "'1', '2', '3', '4', '5' and 2 more");
}

static void merge_gates_are_the_named_ones(void **state)
{
	struct sl_config cfg;
	struct sl_gate g[3];
	char unit[] = "unit", lint[] = "lint", e2e[] = "e2e";
	char *only[] = { lint, e2e, NULL };
	char buf[64];

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	memset(g, 0, sizeof(g));
	g[0].name = unit;
	g[1].name = lint;
	g[2].name = e2e;
	cfg.gates = g;
	cfg.ngates = 3;
	train_gate_names(&cfg, buf, sizeof(buf));
	assert_string_equal(buf, "unit, lint, e2e"); /* default: every gate */
	cfg.merge.gates = only;
	train_gate_names(&cfg, buf, sizeof(buf));
	assert_string_equal(buf, "lint, e2e");
	assert_int_equal(train_has_merge_gates(&cfg), 1);
	cfg.ngates = 1;
	train_gate_names(&cfg, buf, sizeof(buf));
	assert_string_equal(buf, "none");
	assert_int_equal(train_has_merge_gates(&cfg), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(own_red_names_the_failed_gates),
		cmocka_unit_test(own_red_without_results_says_so),
		cmocka_unit_test(some_paths_names_five_and_counts_the_rest),
		cmocka_unit_test(merge_gates_are_the_named_ones),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
