/* store: runs (claim, transitions, updates, prefixes), attempts, rivals, events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs.h"
#include "store/store.h"
#include "test_helpers.h"

static int setup(void **state)
{
	struct test_store *f;
	struct sl_err err = SL_ERR_INIT;
	struct store_wo wo = STORE_WO_INIT;

	if (test_store_setup(state, "/tmp/sluice-test-runs.XXXXXX"))
		return -1;
	f = *state;
	/* one ready work order */
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
	if (store_begin(f->st, &err) || store_wo_put_tx(f->st, &wo, "bytes", 5, &err) ||
	    store_commit(f->st, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return 0;
}

static int claim(struct store *st, const char *id, const char *hash, struct sl_err *err)
{
	struct store_run r;

	memset(&r, 0, sizeof(r));
	r.id = (char *)id;
	r.work_order_id = (char *)"WO-1";
	r.wo_content_hash = (char *)hash;
	r.target = (char *)"refs/heads/main";
	r.branch_name = (char *)"run/WO-1-abcdefgh";
	return store_run_claim(st, &r, err);
}

/* Move a queued run the whole way to merged, one allowed step at a time. */
static void walk_to_merged(struct store *st, const char *id)
{
	static const enum run_state path[] = { RUN_QUEUED,    RUN_PREPARING, RUN_BUILDING,
					       RUN_GATING,    RUN_REVIEWING, RUN_APPROVED,
					       RUN_MERGING,   RUN_MERGED };
	struct sl_err err = SL_ERR_INIT;
	size_t i;

	for (i = 1; i < sizeof(path) / sizeof(path[0]); i++)
		assert_int_equal(store_run_transition(st, id, path[i - 1], path[i], "step", 0, &err),
				 0);
}

static void test_claim_once(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_wo wo = STORE_WO_INIT;

	/* a stale revision cannot be claimed */
	assert_int_equal(claim(f->st, "20260101-000000-aaaaaaaa", "other", &err), SL_ECONFLICT);
	sl_err_clear(&err);
	assert_int_equal(claim(f->st, "20260101-000000-aaaaaaaa", "h1", &err), 0);
	/* the work order is running now: a second claim loses */
	assert_int_equal(claim(f->st, "20260101-000000-bbbbbbbb", "h1", &err), SL_ECONFLICT);
	assert_non_null(strstr(err.msg, "no longer ready"));
	assert_int_equal(store_wo_get(f->st, "WO-1", &wo, &err), 0);
	assert_string_equal(wo.state, "running");
	store_wo_release(&wo);
}

static void test_transitions(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_run r;
	struct store_event *ev = NULL;
	size_t n = 0;
	const char *id = "20260101-000000-aaaaaaaa";

	assert_int_equal(claim(f->st, id, "h1", &err), 0);
	assert_int_equal(store_run_transition(f->st, id, RUN_QUEUED, RUN_PREPARING, "go", 0, &err),
			 0);
	/* compare-and-swap: the run is no longer queued */
	assert_int_equal(store_run_transition(f->st, id, RUN_QUEUED, RUN_PREPARING, "again", 0,
					      &err),
			 SL_ECONFLICT);
	sl_err_clear(&err);
	assert_int_equal(store_run_transition(f->st, id, RUN_PREPARING, (enum run_state)99, "x", 0,
					      &err),
			 SL_EINVALID);
	sl_err_clear(&err);
	assert_int_equal(store_run_transition(f->st, id, RUN_PREPARING, RUN_FAILED, "broke", 0,
					      &err),
			 0);
	assert_int_equal(store_run_get(f->st, id, &r, &err), 0);
	assert_int_equal(r.state, RUN_FAILED);
	assert_string_equal(r.reason, "broke");
	assert_true(r.finished_ms > 0);
	store_run_release(&r);
	assert_int_equal(store_events_list(f->st, id, 0, &ev, &n, &err), 0);
	assert_int_equal(n, 3); /* queued, preparing, failed */
	assert_string_equal(ev[2].from_state, "preparing");
	assert_string_equal(ev[2].to_state, "failed");
	store_events_free(ev, n);
}

static void test_prefix_lookup(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_run r;

	assert_int_equal(claim(f->st, "20260101-000000-aaaaaaaa", "h1", &err), 0);
	assert_int_equal(store_run_transition(f->st, "20260101-000000-aaaaaaaa", RUN_QUEUED,
					      RUN_FAILED, "x", 0, &err), 0);
	assert_int_equal(store_wo_set_state(f->st, "WO-1", WO_READY, "again", &err), 0);
	assert_int_equal(claim(f->st, "20260101-000000-aaaabbbb", "h1", &err), 0);
	assert_int_equal(store_run_get(f->st, "20260101-000000-aaaab", &r, &err), 0);
	assert_string_equal(r.id, "20260101-000000-aaaabbbb");
	store_run_release(&r);
	assert_int_equal(store_run_get(f->st, "20260101-000000-aaaa", &r, &err), SL_EAMBIGUOUS);
	assert_non_null(strstr(err.msg, "aaaaaaaa"));
	sl_err_clear(&err);
	assert_int_equal(store_run_get(f->st, "2027", &r, &err), SL_ENOTFOUND);
	sl_err_clear(&err);
	/* a prefix with LIKE wildcards matches nothing: the lookup is not a pattern */
	assert_int_equal(store_run_get(f->st, "2026%", &r, &err), SL_ENOTFOUND);
}

static void test_update_whitelist(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_run r;
	const char *id = "20260101-000000-aaaaaaaa";
	const char *ok[] = { "head_commit", "abc", "attempt", "4", "merge_status", NULL, NULL };
	const char *bad[] = { "state = 'merged', head_commit", "x", NULL };

	assert_int_equal(claim(f->st, id, "h1", &err), 0);
	assert_int_equal(store_run_update(f->st, id, ok, 0, &err), 0);
	assert_int_equal(store_run_get(f->st, id, &r, &err), 0);
	assert_string_equal(r.head_commit, "abc");
	assert_int_equal(r.attempt, 4);
	assert_null(r.merge_status);
	store_run_release(&r);
	/* a column name that is not on the list never reaches SQL */
	assert_int_equal(store_run_update(f->st, id, bad, 0, &err), SL_EINVALID);
	assert_int_equal(store_run_get(f->st, id, &r, &err), 0);
	assert_int_equal(r.state, RUN_QUEUED);
	store_run_release(&r);
}

static void test_rivals_and_files(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_file_change fc[] = { { 'M', "a.txt" }, { 'A', "b.txt" } };
	const char *paths[] = { "b.txt", "zzz" };
	const char *a = "20260101-000000-aaaaaaaa", *b = "20260101-000000-bbbbbbbb";
	char **ids = NULL;

	assert_int_equal(claim(f->st, a, "h1", &err), 0);
	assert_int_equal(store_files_changed_set(f->st, a, fc, 2, &err), 0);
	walk_to_merged(f->st, a);
	assert_int_equal(store_wo_set_state(f->st, "WO-1", WO_READY, "again", &err), 0);
	assert_int_equal(claim(f->st, b, "h1", &err), 0);
	assert_int_equal(store_rivals(f->st, b, paths, 2, 0, &ids, &err), 0);
	assert_non_null(ids);
	assert_string_equal(ids[0], a);
	assert_null(ids[1]);
	free(ids[0]);
	free(ids);
	/* a run is not its own rival */
	assert_int_equal(store_rivals(f->st, a, paths, 2, 0, &ids, &err), 0);
	assert_null(ids);
}

static void test_attempts(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	const char *a = "20260101-000000-aaaaaaaa";
	sqlite3_stmt *s = NULL;

	assert_int_equal(claim(f->st, a, "h1", &err), 0);
	assert_int_equal(store_attempt_start(f->st, a, 1, RUN_MODE_BUILD, &err), 0);
	assert_int_equal(store_attempt_finish(f->st, a, 1, 3, "exit 3", NULL, &err), 0);
	assert_int_equal(sqlite3_prepare_v2(store_db(f->st),
					    "SELECT builder_exit, outcome FROM attempts WHERE run_id = ?",
					    -1, &s, NULL), SQLITE_OK);
	sqlite3_bind_text(s, 1, a, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(s, 0), 3);
	assert_string_equal((const char *)sqlite3_column_text(s, 1), "exit 3");
	sqlite3_finalize(s);
}

static void test_events_append_only(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(claim(f->st, "20260101-000000-aaaaaaaa", "h1", &err), 0);
	assert_true(store_events_last(f->st) > 0);
	assert_int_not_equal(sqlite3_exec(store_db(f->st), "UPDATE events SET reason = 'x'", NULL,
					  NULL, NULL), SQLITE_OK);
	assert_int_not_equal(sqlite3_exec(store_db(f->st), "DELETE FROM events", NULL, NULL, NULL),
			     SQLITE_OK);
}

static void test_retry_state(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_retry_state rs = { 9, 9, 9, 9, 9 }, set = { 1, -1, 0, 3, 4 };

	assert_int_equal(claim(f->st, "R1", "h1", &err), 0);
	assert_int_equal(store_retry_get(f->st, "R1", &rs, &err), 0);
	assert_int_equal(rs.builder_rule, -1);
	assert_int_equal(rs.prompt_rule, -1);
	assert_int_equal(rs.reset_rule, -1);
	assert_int_equal(rs.rules_from, 0);
	assert_int_equal(store_retry_set(f->st, "R1", &set, &err), 0);
	set.builder_rule = 2; /* replaced, not added */
	assert_int_equal(store_retry_set(f->st, "R1", &set, &err), 0);
	assert_int_equal(store_retry_get(f->st, "R1", &rs, &err), 0);
	assert_int_equal(rs.builder_rule, 2);
	assert_int_equal(rs.prompt_rule, -1);
	assert_int_equal(rs.reset_rule, 0);
	assert_int_equal(rs.session_rule, 3);
	assert_int_equal(rs.rules_from, 4); /* a person's retry after attempt 4 (migration 012) */
	assert_int_equal(store_retry_clear(f->st, "R1", &err), 0);
	assert_int_equal(store_retry_get(f->st, "R1", &rs, &err), 0);
	assert_int_equal(rs.builder_rule, -1);
	/* only for a run the store knows */
	assert_int_not_equal(store_retry_set(f->st, "nosuchrun", &set, &err), 0);
}

static void test_conflict_record(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_conflict c;
	const char *tip = "1111111111111111111111111111111111111111",
		   *head = "2222222222222222222222222222222222222222";
	/* names are bytes: quotes, a newline, not UTF-8 */
	const char *paths[] = { "b.txt", "a'; DROP TABLE runs; --", "dir/\n\xff.txt", "b.txt" };

	assert_int_equal(claim(f->st, "R1", "h1", &err), 0);
	assert_int_equal(store_conflict_get(f->st, "R1", &c, &err), SL_ENOTFOUND);
	sl_err_clear(&err);
	assert_int_equal(store_conflict_set(f->st, "R1", tip, head, paths, 4, &err), 0);
	assert_int_equal(store_conflict_get(f->st, "R1", &c, &err), 0);
	assert_string_equal(c.target_tip, tip);
	assert_string_equal(c.run_head, head);
	assert_int_equal(c.npaths, 3);
	assert_string_equal(c.paths[0], "a'; DROP TABLE runs; --");
	assert_string_equal(c.paths[1], "b.txt");
	assert_string_equal(c.paths[2], "dir/\n\xff.txt");
	store_conflict_release(&c);
	/* a later conflict replaces the record */
	assert_int_equal(store_conflict_set(f->st, "R1", head, tip, paths, 1, &err), 0);
	assert_int_equal(store_conflict_get(f->st, "R1", &c, &err), 0);
	assert_string_equal(c.target_tip, head);
	assert_int_equal(c.npaths, 1);
	store_conflict_release(&c);
	assert_int_not_equal(store_conflict_set(f->st, "R1", NULL, head, paths, 1, &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_claim_once, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_transitions, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_prefix_lookup, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_update_whitelist, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_rivals_and_files, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_attempts, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_events_append_only, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_retry_state, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_conflict_record, setup, test_store_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
