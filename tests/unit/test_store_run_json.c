/* store: store_run_json(), the one run-to-JSON encoder, on runs read back from a real store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs.h"
#include "core/time.h"
#include "store/store.h"
#include "test_helpers.h"

#define RUN_ID "20260101-000000-aaaaaaaa"
#define RIVAL_ID "20251231-000000-zzzzzzzz"
#define BASE "1111111111111111111111111111111111111111"
#define HEAD "2222222222222222222222222222222222222222"

/* The keys of schema/run.schema.json in the order runs --json prints them. */
static const char *const canonical[] = {
	"id", "work_order", "state", "reason", "target", "branch_name", "base_commit",
	"head_commit", "approved_tree", "merge_commit", "merge_status", "conflict_with_run_id",
	"reviewer", "mode", "attempt", "resolve_attempts", "review_tries", "created_ms",
	"updated_ms", "finished_ms",
};
#define NCANONICAL (sizeof(canonical) / sizeof(canonical[0]))

/* show --json's 0.1 names and the key each one aliases. */
static const char *const aliases[][2] = {
	{ "branch", "branch_name" },
	{ "base", "base_commit" },
	{ "head", "head_commit" },
	{ "conflict_with_run", "conflict_with_run_id" },
};

static int setup(void **state)
{
	struct test_store *f;
	struct sl_err err = SL_ERR_INIT;
	struct store_wo wo = STORE_WO_INIT;
	struct store_run r;

	if (test_store_setup(state, "/tmp/sluice-test-run-json.XXXXXX"))
		return -1;
	f = *state;
	wo.id = (char *)"WO-1";
	wo.path = (char *)"work_orders/WO-1.md";
	wo.content_hash = (char *)"h1";
	wo.fields_json = (char *)"{\"id\":\"WO-1\"}";
	wo.body = (char *)"";
	wo.title = (char *)"one";
	wo.created_at = (char *)"";
	wo.status = (char *)"ready";
	wo.state = (char *)"ready";
	wo.reason = (char *)"ready";
	wo.priority = 3;
	wo.present = 1;
	memset(&r, 0, sizeof(r));
	r.id = (char *)RUN_ID;
	r.work_order_id = (char *)"WO-1";
	r.wo_content_hash = (char *)"h1";
	r.target = (char *)"refs/heads/main";
	r.branch_name = (char *)"run/WO-1-aaaaaaaa";
	if (store_begin(f->st, &err) || store_wo_put_tx(f->st, &wo, "bytes", 5, &err) ||
	    store_commit(f->st, &err) || store_run_claim(f->st, &r, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return 0;
}

static json_t *encode(struct store *st, unsigned flags)
{
	struct sl_err err = SL_ERR_INIT;
	struct store_run r;
	json_t *j;

	assert_int_equal(store_run_get(st, RUN_ID, &r, &err), 0);
	j = store_run_json(&r, flags);
	assert_non_null(j);
	store_run_release(&r);
	return j;
}

static const char *str(json_t *j, const char *key)
{
	json_t *v = json_object_get(j, key);

	assert_non_null(v);
	assert_true(json_is_string(v));
	return json_string_value(v);
}

static void assert_null_key(json_t *j, const char *key)
{
	json_t *v = json_object_get(j, key);

	if (!json_is_null(v))
		fail_msg("'%s' is not null", key);
}

/* Exactly the canonical keys, in their order, and nothing else. */
static void test_canonical_keys(void **state)
{
	struct test_store *f = *state;
	json_t *j = encode(f->st, 0);
	const char *key;
	json_t *v;
	size_t i = 0;

	json_object_foreach(j, key, v) {
		(void)v;
		assert_true(i < NCANONICAL);
		assert_string_equal(key, canonical[i]);
		i++;
	}
	assert_int_equal(i, NCANONICAL);
	json_decref(j);
}

/* A queued run: the values of its row; what it does not have yet is null. */
static void test_queued_values(void **state)
{
	struct test_store *f = *state;
	json_t *j = encode(f->st, 0);

	assert_string_equal(str(j, "id"), RUN_ID);
	assert_string_equal(str(j, "work_order"), "WO-1");
	assert_string_equal(str(j, "state"), "queued");
	assert_string_equal(str(j, "reason"), "claimed");
	assert_string_equal(str(j, "target"), "refs/heads/main");
	assert_string_equal(str(j, "branch_name"), "run/WO-1-aaaaaaaa");
	assert_string_equal(str(j, "mode"), "build");
	assert_null_key(j, "base_commit");
	assert_null_key(j, "head_commit");
	assert_null_key(j, "merge_status");
	assert_null_key(j, "conflict_with_run_id");
	assert_null_key(j, "finished_ms");
	assert_true(json_integer_value(json_object_get(j, "created_ms")) > 0);
	assert_true(json_is_integer(json_object_get(j, "updated_ms")));
	assert_int_equal(json_integer_value(json_object_get(j, "attempt")), 0);
	json_decref(j);
}

/*
 * A merged run with a rival, encoded with and without the aliases: the
 * canonical keys are the same either way; each alias equals its key; the
 * times are the ISO forms of the ms keys.
 */
static void test_aliases(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	const char *fields[] = { "base_commit", BASE, "head_commit", HEAD, "conflict_with_run_id",
				 RIVAL_ID, "resolve_attempts", "2", "review_tries", "3", NULL };
	static const enum run_state to_merged[] = { RUN_QUEUED,	   RUN_PREPARING, RUN_BUILDING,
						    RUN_GATING,	   RUN_REVIEWING, RUN_APPROVED,
						    RUN_MERGING,   RUN_MERGED };
	json_t *plain, *j;
	char when[40];
	size_t i;

	assert_int_equal(store_run_update(f->st, RUN_ID, fields, 0, &err), 0);
	for (i = 1; i < sizeof(to_merged) / sizeof(to_merged[0]); i++) /* the allowed moves */
		assert_int_equal(store_run_transition(f->st, RUN_ID, to_merged[i - 1], to_merged[i],
						      "done", 0, &err),
				 0);
	plain = encode(f->st, 0);
	j = encode(f->st, STORE_RUN_JSON_ALIASES);
	for (i = 0; i < NCANONICAL; i++)
		if (!json_equal(json_object_get(plain, canonical[i]), json_object_get(j, canonical[i])))
			fail_msg("'%s' differs with the aliases", canonical[i]);
	assert_int_equal(json_object_size(j), NCANONICAL + 6);
	for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		assert_null(json_object_get(plain, aliases[i][0]));
		assert_string_equal(str(j, aliases[i][0]), str(j, aliases[i][1]));
	}
	assert_string_equal(str(j, "base"), BASE);
	assert_string_equal(str(j, "conflict_with_run"), RIVAL_ID);
	assert_int_equal(json_integer_value(json_object_get(j, "resolve_attempts")), 2);
	assert_int_equal(json_integer_value(json_object_get(j, "review_tries")), 3);
	assert_true(json_integer_value(json_object_get(j, "finished_ms")) > 0);
	sl_time_iso(when, sizeof(when), json_integer_value(json_object_get(j, "created_ms")));
	assert_string_equal(str(j, "created_at"), when);
	sl_time_iso(when, sizeof(when), json_integer_value(json_object_get(j, "finished_ms")));
	assert_string_equal(str(j, "finished_at"), when);
	json_decref(plain);
	json_decref(j);
}

/* A run not from the store (no reason, mode or times): the schema's types still hold. */
static void test_empty_run(void **state)
{
	struct store_run r;
	json_t *j;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.id = (char *)RUN_ID;
	r.state = RUN_QUEUED;
	j = store_run_json(&r, STORE_RUN_JSON_ALIASES);
	assert_non_null(j);
	assert_string_equal(str(j, "reason"), "");
	assert_string_equal(str(j, "mode"), "build");
	assert_null_key(j, "branch");
	assert_null_key(j, "finished_ms");
	assert_null_key(j, "created_at");
	assert_null_key(j, "finished_at");
	assert_int_equal(json_integer_value(json_object_get(j, "created_ms")), 0);
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_canonical_keys, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_queued_values, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_aliases, setup, test_store_teardown),
		cmocka_unit_test(test_empty_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
