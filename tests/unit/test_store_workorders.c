/* store: the migration, work-order rows, states and events, inbox errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs.h"
#include "store/store_int.h"
#include "test_helpers.h"

static int setup(void **state)
{
	return test_store_setup(state, "/tmp/sluice-test-store.XXXXXX");
}

static char *query_text(struct store *st, const char *sql)
{
	sqlite3_stmt *s = NULL;
	char *v = NULL;

	if (sqlite3_prepare_v2(store_db(st), sql, -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		v = store__col_dup(s, 0);
	sqlite3_finalize(s);
	return v;
}

static void put(struct store *st, const char *id, const char *hash, const char *state)
{
	struct store_wo wo = STORE_WO_INIT;
	struct sl_err err = SL_ERR_INIT;

	wo.id = (char *)id;
	wo.path = (char *)"work_orders/x.md";
	wo.content_hash = (char *)hash;
	wo.title = (char *)"A title";
	wo.state = (char *)state;
	wo.reason = (char *)"because";
	wo.priority = 2;
	wo.present = 1;
	assert_int_equal(store_begin(st, &err), 0);
	assert_int_equal(store_wo_put_tx(st, &wo, "bytes\0x", 7, &err), 0);
	assert_int_equal(store_commit(st, &err), 0);
}

static void test_migration(void **state)
{
	struct test_store *f = *state;
	char *mode = query_text(f->st, "PRAGMA journal_mode");

	assert_true(store_version(f->st) >= 1);
	assert_int_equal(query_int(f->st, "PRAGMA application_id"), STORE_APPLICATION_ID);
	assert_string_equal(mode, "wal");
	free(mode);
}

static void test_put_get_list(void **state)
{
	struct test_store *f = *state;
	struct store_wo wo = STORE_WO_INIT, *list = NULL;
	struct sl_err err = SL_ERR_INIT;
	struct sl_buf content = SL_BUF_INIT;
	size_t n = 0;

	put(f->st, "WO-2", "h1", "ready");
	put(f->st, "WO-1", "h1", "waiting");
	assert_int_equal(store_wo_get(f->st, "WO-2", &wo, &err), 0);
	assert_string_equal(wo.state, "ready");
	assert_string_equal(wo.reason, "because");
	assert_int_equal(wo.priority, 2);
	assert_int_equal(wo.present, 1);
	assert_string_equal(wo.status, "ready");
	assert_string_equal(wo.fields_json, "{}");
	int64_t first = wo.first_seen_ms;
	store_wo_release(&wo);
	put(f->st, "WO-2", "h2", "ready");
	assert_int_equal(store_wo_get(f->st, "WO-2", &wo, &err), 0);
	assert_string_equal(wo.content_hash, "h2");
	assert_int_equal(wo.first_seen_ms, first);
	store_wo_release(&wo);
	assert_int_equal(store_wo_content(f->st, "WO-2", &content, &err), 0);
	assert_int_equal(content.len, 7);
	assert_memory_equal(content.ptr, "bytes\0x", 7);
	sl_buf_release(&content);
	assert_int_equal(store_wo_list(f->st, &list, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(list[0].id, "WO-1");
	assert_string_equal(list[1].id, "WO-2");
	store_wo_list_free(list, n);
	sl_err_clear(&err);
	assert_int_equal(store_wo_get(f->st, "WO-9", &wo, &err), SL_ENOTFOUND);
}

static void test_set_state_adds_event(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_wo wo = STORE_WO_INIT;
	char *reason;

	put(f->st, "WO-1", "h1", "ready");
	assert_int_equal(store_wo_set_state(f->st, "WO-1", WO_RUNNING, "run R started", &err), 0);
	assert_int_equal(store_wo_get(f->st, "WO-1", &wo, &err), 0);
	assert_string_equal(wo.state, "running");
	assert_string_equal(wo.reason, "run R started");
	store_wo_release(&wo);
	assert_int_equal(query_int(f->st,
	                           "SELECT count(*) FROM events WHERE work_order_id = "
	                           "'WO-1' AND from_state = 'ready' AND to_state = 'running'"),
	                 1);
	reason = query_text(f->st, "SELECT reason FROM events ORDER BY seq DESC LIMIT 1");
	assert_string_equal(reason, "run R started");
	free(reason);
	assert_int_equal(store_wo_set_state(f->st, "WO-1", (enum wo_state)99, "x", &err), SL_EINVALID);
	sl_err_clear(&err);
	assert_int_equal(store_wo_set_state(f->st, "WO-404", WO_DONE, "x", &err), SL_ENOTFOUND);
	assert_non_null(strstr(err.msg, "WO-404"));
}

static void test_events_append_only(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	char *msg = NULL;

	put(f->st, "WO-1", "h1", "ready");
	assert_int_equal(store_wo_set_state(f->st, "WO-1", WO_DONE, "merged", &err), 0);
	assert_int_not_equal(
	        sqlite3_exec(store_db(f->st), "UPDATE events SET reason = 'x'", NULL, NULL, &msg),
	        SQLITE_OK);
	assert_non_null(strstr(msg, "append-only"));
	sqlite3_free(msg);
	msg = NULL;
	assert_int_not_equal(sqlite3_exec(store_db(f->st), "DELETE FROM events", NULL, NULL, &msg),
	                     SQLITE_OK);
	sqlite3_free(msg);
	assert_int_equal(query_int(f->st, "SELECT count(*) FROM events"), 1);
}

static void test_mark_gone(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_wo wo = STORE_WO_INIT;

	put(f->st, "WO-1", "h1", "done");
	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(store_wo_mark_gone_tx(f->st, "WO-1", "file is gone", &err), 0);
	assert_int_equal(store_commit(f->st, &err), 0);
	assert_int_equal(store_wo_get(f->st, "WO-1", &wo, &err), 0);
	assert_int_equal(wo.present, 0);
	assert_string_equal(wo.state, "done");
	assert_string_equal(wo.reason, "file is gone");
	store_wo_release(&wo);
	assert_int_equal(query_int(f->st, "SELECT count(*) FROM events WHERE from_state = 'done' "
	                                  "AND to_state = 'done'"),
	                 1);
}

static void test_inbox_errors(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_inbox_error in[2] = {{(char *)"b.md", (char *)"bad b"},
	                                  {(char *)"a.md", (char *)"bad a"}};
	struct store_inbox_error *out = NULL;
	size_t n = 0;

	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(store_inbox_errors_replace_tx(f->st, in, 2, &err), 0);
	assert_int_equal(store_commit(f->st, &err), 0);
	assert_int_equal(store_inbox_errors_list(f->st, &out, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(out[0].path, "a.md");
	store_inbox_errors_free(out, n);
	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(store_inbox_errors_replace_tx(f->st, in, 1, &err), 0);
	assert_int_equal(store_commit(f->st, &err), 0);
	assert_int_equal(store_inbox_errors_list(f->st, &out, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(out[0].message, "bad b");
	store_inbox_errors_free(out, n);
}

static void add_run(struct store *st, const char *id, const char *wo, const char *hash,
                    const char *state, int at)
{
	char sql[512];

	snprintf(sql, sizeof(sql),
	         "INSERT INTO runs (id, work_order_id, wo_content_hash, state, target, created_ms, "
	         "updated_ms) VALUES ('%s', '%s', '%s', '%s', 'refs/heads/main', %d, %d)",
	         id, wo, hash, state, at, at);
	assert_int_equal(sqlite3_exec(store_db(st), sql, NULL, NULL, NULL), SQLITE_OK);
}

static void test_runs(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_wo_run *v = NULL;
	size_t n = 0;

	add_run(f->st, "r1", "WO-1", "h1", "failed", 1);
	add_run(f->st, "r2", "WO-1", "h1", "merged", 2);
	add_run(f->st, "r3", "WO-2", "h1", "building", 3);
	add_run(f->st, "r4", "WO-2", "h0", "abandoned", 0);
	assert_int_equal(store_wo_runs(f->st, &v, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[0].run_id, "r2"); /* the latest of WO-1's revision h1 */
	assert_int_equal(v[0].unfinished, 0);
	assert_string_equal(v[1].run_id, "r4");
	assert_string_equal(v[2].run_id, "r3");
	assert_int_equal(v[2].unfinished, 1);
	assert_int_equal(v[2].state, RUN_BUILDING);
	store_wo_runs_free(v, n);

}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_migration, setup, test_store_teardown),
	        cmocka_unit_test_setup_teardown(test_put_get_list, setup, test_store_teardown),
	        cmocka_unit_test_setup_teardown(test_set_state_adds_event, setup,
	                                        test_store_teardown),
	        cmocka_unit_test_setup_teardown(test_events_append_only, setup,
	                                        test_store_teardown),
	        cmocka_unit_test_setup_teardown(test_mark_gone, setup, test_store_teardown),
	        cmocka_unit_test_setup_teardown(test_inbox_errors, setup, test_store_teardown),
	        cmocka_unit_test_setup_teardown(test_runs, setup, test_store_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
