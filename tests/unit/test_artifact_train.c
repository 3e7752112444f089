/* The gate record of a landing (train.json) against the merge commit git has. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/artifact.h"

#define C "1111111111111111111111111111111111111111"
#define T "2222222222222222222222222222222222222222"
#define B "3333333333333333333333333333333333333333"
#define H "4444444444444444444444444444444444444444"

static const struct artifact_landing landing = { C, T, B, H };

struct seen {
	char what[8][256];
	size_t n;
};

static void collect(void *arg, const char *what)
{
	struct seen *s = arg;

	if (s->n < 8)
		snprintf(s->what[s->n++], sizeof(s->what[0]), "%s", what);
}

/* A green record of the landing, with the gates given as JSON. */
static json_t *record(const char *gates)
{
	json_t *t = json_pack("{s:s, s:s, s:s, s:s, s:n, s:b, s:I, s:I}", "commit", C, "tree", T,
			      "base", B, "head", H, "ahead", "green", 1, "tested_ms",
			      (json_int_t)1764000000000, "gates_ms", (json_int_t)2034);

	json_object_set_new(t, "gates", json_loads(gates, 0, NULL));
	return t;
}

static const char *const pass =
	"[{\"name\": \"test\", \"argv\": [\"make\", \"test\"], \"exit_code\": 0, \"passed\": true, "
	"\"duration_ms\": 2000, \"timed_out\": false, \"log\": \"train/gates/test.log\"}]";

static void test_green_record_holds(void **state)
{
	struct seen s = { .n = 0 };
	json_t *t = record(pass), *none = record("[]");

	(void)state;
	assert_int_equal(artifact_train_record_check(t, &landing, collect, &s), 0);
	/* no merge gate selected: the train only serialized the merge */
	assert_int_equal(artifact_train_record_check(none, &landing, collect, &s), 0);
	assert_int_equal(s.n, 0);
	json_decref(t);
	json_decref(none);
}

static void test_each_id_must_be_the_landings(void **state)
{
	static const char *const keys[] = { "commit", "tree", "base", "head" };
	size_t i;

	(void)state;
	for (i = 0; i < 4; i++) {
		struct seen s = { .n = 0 };
		json_t *t = record(pass);
		json_object_set_new(t, keys[i], json_string("5555555555555555555555555555555555555555"));
		assert_int_equal(artifact_train_record_check(t, &landing, collect, &s), 1);
		assert_int_equal(strncmp(s.what[0], keys[i], strlen(keys[i])), 0);
		assert_non_null(strstr(s.what[0], "555555555555"));
		json_decref(t);
	}
}

static void test_not_an_id_is_not_printed(void **state)
{
	struct seen s = { .n = 0 };
	json_t *t = record(pass);

	(void)state;
	json_object_set_new(t, "tree", json_string("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"));
	json_object_del(t, "base");
	assert_int_equal(artifact_train_record_check(t, &landing, collect, &s), 2);
	assert_string_equal(s.what[0], "tree differs: the gate record says (not an object id), the "
			    "merge commit's tree is 222222222222");
	assert_string_equal(s.what[1], "base differs: the gate record says (none), its first parent "
			    "is 333333333333");
	json_decref(t);
}

static void test_red_gates_are_named(void **state)
{
	struct seen s = { .n = 0 };
	json_t *t = record("[{\"name\": \"build\", \"exit_code\": 0, \"passed\": true},"
			   " {\"name\": \"test\", \"exit_code\": 2, \"passed\": false},"
			   " {\"name\": \"slow\", \"exit_code\": 0, \"passed\": true, \"timed_out\": true},"
			   " {\"name\": \"liar\", \"exit_code\": 1, \"passed\": true},"
			   " {\"name\": \"bad name\\u001b[31m\", \"passed\": false}]");

	(void)state;
	json_object_set_new(t, "green", json_false());
	assert_int_equal(artifact_train_record_check(t, &landing, collect, &s), 5);
	assert_string_equal(s.what[0], "the gate record is not green");
	assert_string_equal(s.what[1], "red gate test (exit 2)");
	assert_string_equal(s.what[2], "red gate slow (timed out)");
	assert_string_equal(s.what[3], "red gate liar (exit 1)");
	assert_string_equal(s.what[4], "red gate (unnamed) (no exit status)");
	json_decref(t);
}

static void test_green_with_a_red_gate_is_red(void **state)
{
	struct seen s = { .n = 0 };
	json_t *t = record("[{\"name\": \"test\", \"exit_code\": 1, \"passed\": false}]");

	(void)state;
	assert_int_equal(artifact_train_record_check(t, &landing, collect, &s), 1);
	assert_string_equal(s.what[0], "red gate test (exit 1)");
	json_decref(t);
}

static void test_the_tested_commit_is_the_landed_one(void **state)
{
	struct seen s = { .n = 0 };
	json_t *t = record(pass);

	(void)state;
	json_object_set_new(t, "tested_commit", json_string(C));
	json_object_set_new(t, "tested_base", json_string(B));
	assert_int_equal(artifact_train_record_check(t, &landing, collect, &s), 0);
	json_object_set_new(t, "tested_commit", json_string("6666666666666666666666666666666666666666"));
	json_object_set_new(t, "tested_base", json_string("7777777777777777777777777777777777777777"));
	assert_int_equal(artifact_train_record_check(t, &landing, collect, &s), 2);
	assert_string_equal(s.what[0], "the tested commit 666666666666 is not the merge commit "
			    "111111111111");
	assert_string_equal(s.what[1], "the tested base 777777777777 is not its first parent "
			    "333333333333");
	json_decref(t);
}

static void test_not_a_record(void **state)
{
	struct seen s = { .n = 0 };
	json_t *t = record(pass), *arr = json_array();

	(void)state;
	assert_int_equal(artifact_train_record_check(NULL, &landing, collect, &s), 1);
	assert_int_equal(artifact_train_record_check(arr, &landing, collect, &s), 1);
	json_object_del(t, "gates");
	assert_int_equal(artifact_train_record_check(t, &landing, collect, &s), 1);
	assert_string_equal(s.what[2], "the gate record has no list of gates");
	json_object_del(t, "green");
	assert_int_equal(artifact_train_record_check(t, &landing, collect, &s), 2);
	json_decref(t);
	json_decref(arr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_green_record_holds),
		cmocka_unit_test(test_each_id_must_be_the_landings),
		cmocka_unit_test(test_not_an_id_is_not_printed),
		cmocka_unit_test(test_red_gates_are_named),
		cmocka_unit_test(test_green_with_a_red_gate_is_red),
		cmocka_unit_test(test_the_tested_commit_is_the_landed_one),
		cmocka_unit_test(test_not_a_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
