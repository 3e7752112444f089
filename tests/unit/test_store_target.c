/* store: the target watch (observed tips, the user's commits, alerts) and the migration. */
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

#define T "refs/heads/main"
#define C1 "1111111111111111111111111111111111111111"
#define C2 "2222222222222222222222222222222222222222"

static int setup(void **state)
{
	return test_store_setup(state, "/tmp/sluice-test-target.XXXXXX");
}

static void test_schema_version(void **state)
{
	struct test_store *f = *state;

	assert_true(store_version(f->st) >= 2);
}

static void test_tips(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	char *root = NULL, *tip = NULL;

	assert_int_equal(store_target_get(f->st, T, &root, &tip, &err), SL_ENOTFOUND);
	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(store_target_set(f->st, T, C1, C1, &err), 0);
	assert_int_equal(store_commit(f->st, &err), 0);
	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(store_target_set(f->st, T, C2, C2, &err), 0); /* root stays */
	assert_int_equal(store_commit(f->st, &err), 0);
	assert_int_equal(store_target_get(f->st, T, &root, &tip, &err), 0);
	assert_string_equal(root, C1);
	assert_string_equal(tip, C2);
	free(root);
	free(tip);
}

static void test_user_commits(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(store_user_commit_has(f->st, T, C1, &err), 0);
	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(store_user_commit_add(f->st, T, C1, "accepted", &err), 0);
	assert_int_equal(store_user_commit_add(f->st, T, C1, "observed", &err), 0);
	assert_int_equal(store_user_commit_add(f->st, T, "x'); DROP TABLE runs; --", "observed",
					       &err), 0);
	assert_int_not_equal(store_user_commit_add(f->st, T, C2, "bogus", &err), 0);
	store_rollback(f->st);
	assert_int_equal(store_user_commit_has(f->st, T, C1, &err), 0); /* rolled back */
	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(store_user_commit_add(f->st, T, C1, "accepted", &err), 0);
	assert_int_equal(store_user_commit_add(f->st, T, C1, "observed", &err), 0);
	assert_int_equal(store_commit(f->st, &err), 0);
	assert_int_equal(store_user_commit_has(f->st, T, C1, &err), 1);
	assert_int_equal(store_user_commit_has(f->st, "refs/heads/other", C1, &err), 0);
}

static void test_alerts(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_alert *a = NULL;
	size_t n = 0;

	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(store_alert_open(f->st, T, C1, "RUN-1", &err), 1);
	assert_int_equal(store_alert_open(f->st, T, C1, "RUN-1", &err), 0); /* open already */
	assert_int_equal(store_commit(f->st, &err), 0);
	assert_int_equal(store_alerts_list(f->st, T, &a, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(a[0].commit, C1);
	assert_string_equal(a[0].run_id, "RUN-1");
	store_alerts_free(a, n);
	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(store_alert_clear(f->st, T, C1, &err), 0);
	assert_int_equal(store_commit(f->st, &err), 0);
	assert_int_equal(store_alerts_list(f->st, T, &a, &n, &err), 0);
	assert_int_equal(n, 0);
	store_alerts_free(a, n);
	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(store_alert_open(f->st, T, C1, NULL, &err), 1); /* found again */
	assert_int_equal(store_commit(f->st, &err), 0);
	assert_int_equal(store_alerts_list(f->st, T, &a, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_null(a[0].run_id);
	store_alerts_free(a, n);
}

static void test_run_commits_and_landings(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_run_commit *v = NULL;
	char *run = NULL;
	size_t n = 0;

	assert_int_equal(sqlite3_exec(store_db(f->st),
		"INSERT INTO runs (id, work_order_id, wo_content_hash, state, target, branch_name, "
		"base_commit, head_commit, merge_commit, created_ms, updated_ms) VALUES "
		"('R1', 'W', 'h', 'merged', 'refs/heads/main', 'run/W-1', '" C1 "', '" C2 "', "
		"'3333333333333333333333333333333333333333', 0, 0), "
		"('R2', 'W', 'h', 'rejected', 'refs/heads/main', 'run/W-2', '" C1 "', NULL, "
		"'4444444444444444444444444444444444444444', 0, 0);"
		"INSERT INTO attempts (run_id, n, started_ms, head_commit) VALUES ('R1', 1, 0, '"
		C1 "');", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(store_run_commits(f->st, &v, &n, &err), 0);
	assert_int_equal(n, 3);
	store_run_commits_free(v, n);
	assert_int_equal(store_landing_run(f->st, "3333333333333333333333333333333333333333", &run,
					   &err), 0);
	assert_string_equal(run, "R1");
	free(run);
	/* a rejected run's merge commit is no landing */
	assert_int_equal(store_landing_run(f->st, "4444444444444444444444444444444444444444", &run,
					   &err), SL_ENOTFOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_schema_version, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_tips, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_user_commits, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_alerts, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_run_commits_and_landings, setup,
						test_store_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
