/* The manifest chain's index (store/chain.c, migration 006): record, last link, backfill mark. */
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
#include "store/store_int.h"
#include "test_helpers.h"

static int setup(void **state)
{
	return test_store_setup(state, "/tmp/test-store-chain.XXXXXX");
}

static int teardown(void **state)
{
	return test_store_teardown(state);
}

static void record(struct store *st, const char *run, const char *merged_at, const char *prev,
		   char fill)
{
	struct store_chain_link l;
	struct sl_err err = SL_ERR_INIT;

	memset(&l, 0, sizeof(l));
	l.run_id = (char *)run;
	l.merged_at = (char *)merged_at;
	l.previous_run = (char *)prev;
	memset(l.sha256, fill, 64);
	assert_int_equal(store_chain_record(st, &l, &err), 0);
}

static void test_last_in_merge_order(void **state)
{
	struct test_store *f = *state;
	struct store_chain_link l;
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(store_chain_last(f->st, NULL, &l, &err), SL_ENOTFOUND);
	sl_err_clear(&err);
	record(f->st, "B", "2026-01-01T00:00:02.000Z", NULL, 'b');
	record(f->st, "A", "2026-01-01T00:00:03.000Z", "B", 'a');
	/* same time: the run id breaks the tie, as strcmp does in artifact_chain_load */
	record(f->st, "C", "2026-01-01T00:00:01.000Z", NULL, 'c');
	record(f->st, "D", "2026-01-01T00:00:03.000Z", "A", 'd');
	assert_int_equal(store_chain_last(f->st, NULL, &l, &err), 0);
	assert_string_equal(l.run_id, "D");
	assert_string_equal(l.previous_run, "A");
	assert_int_equal(strspn(l.sha256, "d"), 64);
	store_chain_link_release(&l);
	/* the run being sealed is never its own previous link */
	assert_int_equal(store_chain_last(f->st, "D", &l, &err), 0);
	assert_string_equal(l.run_id, "A");
	assert_string_equal(l.merged_at, "2026-01-01T00:00:03.000Z");
	store_chain_link_release(&l);
	assert_int_equal(store_chain_get(f->st, "C", &l, &err), 0);
	assert_null(l.previous_run);
	assert_int_equal(strspn(l.sha256, "c"), 64);
	store_chain_link_release(&l);
	assert_int_equal(store_chain_get(f->st, "Z", &l, &err), SL_ENOTFOUND);
}

static void test_record_replaces_and_checks(void **state)
{
	struct test_store *f = *state;
	struct store_chain_link l;
	struct sl_err err = SL_ERR_INIT;

	record(f->st, "A", "2026-01-01T00:00:01.000Z", NULL, 'a');
	record(f->st, "A", "2026-01-01T00:00:01.000Z", NULL, 'e'); /* sealed again */
	assert_int_equal(query_int(f->st, "SELECT count(*) FROM manifest_chain"), 1);
	assert_int_equal(store_chain_get(f->st, "A", &l, &err), 0);
	assert_int_equal(strspn(l.sha256, "e"), 64);
	store_chain_link_release(&l);
	memset(&l, 0, sizeof(l));
	l.run_id = (char *)"B";
	snprintf(l.sha256, sizeof(l.sha256), "short");
	assert_int_equal(store_chain_record(f->st, &l, &err), SL_EINVALID);
}

/* The previous link is one step down an index, whatever the number of links. */
static void test_last_uses_the_index(void **state)
{
	struct test_store *f = *state;
	sqlite3_stmt *s = NULL;
	char plan[1024] = "";

	assert_int_equal(sqlite3_prepare_v2(store_db(f->st),
					    "EXPLAIN QUERY PLAN SELECT run_id, merged_at, "
					    "previous_run, sha256 FROM manifest_chain WHERE run_id IS "
					    "NOT ?1 ORDER BY merged_at DESC, run_id DESC LIMIT 1",
					    -1, &s, NULL),
			 SQLITE_OK);
	while (sqlite3_step(s) == SQLITE_ROW) {
		strncat(plan, (const char *)sqlite3_column_text(s, 3), sizeof(plan) - strlen(plan) - 2);
		strcat(plan, ";");
	}
	sqlite3_finalize(s);
	assert_non_null(strstr(plan, "manifest_chain_order"));
	assert_null(strstr(plan, "TEMP B-TREE")); /* no sort of every row */
}

/* Any database the migration runs on: the files are read once (run folders may outlive a database). */
static void test_new_database_is_marked(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	int pending = -1;

	assert_true(store_version(f->st) >= 6); /* and the migrations after 006 */
	assert_int_equal(store_chain_backfill_pending(f->st, &pending, &err), 0);
	assert_int_equal(pending, 1);
	assert_int_equal(store_chain_backfill(f->st, NULL, 0, &err), 0);
	assert_int_equal(store_chain_backfill_pending(f->st, &pending, &err), 0);
	assert_int_equal(pending, 0);
}

/* A database at version 5 with a run: migration 006 marks the chain to fill from the files. */
static void test_old_database_is_marked_then_filled(void **state)
{
	struct test_store *f = *state;
	struct store *st = NULL;
	struct store_chain_link v[2], l;
	struct sl_err err = SL_ERR_INIT;
	sqlite3 *db = NULL;
	char *path = sl_path_fmt("%s/old.db", f->dir), sql[64];
	int i, pending = 0;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
	for (i = 0; i < store_migrations_count && store_migrations[i].version <= 5; i++)
		assert_int_equal(sqlite3_exec(db, store_migrations[i].sql, NULL, NULL, NULL), SQLITE_OK);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = 5");
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "INSERT INTO runs (id, work_order_id, wo_content_hash, "
				      "target, created_ms, updated_ms) VALUES ('R1', 'WO-1', 'h', "
				      "'refs/heads/main', 1, 1)", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);

	assert_int_equal(store_open(&st, path, &err), 0);
	assert_true(store_version(st) >= 6);
	assert_int_equal(store_chain_backfill_pending(st, &pending, &err), 0);
	assert_int_equal(pending, 1);
	memset(v, 0, sizeof(v));
	v[0].run_id = (char *)"R0";
	v[0].merged_at = (char *)"2026-01-01T00:00:01.000Z";
	snprintf(v[0].sha256, sizeof(v[0].sha256), "zz"); /* a tombstone says so: kept as it is */
	v[1].run_id = (char *)"R1";
	v[1].merged_at = (char *)"2026-01-01T00:00:02.000Z";
	v[1].previous_run = (char *)"R0";
	memset(v[1].sha256, '1', 64);
	assert_int_equal(store_chain_backfill(st, v, 2, &err), 0);
	assert_int_equal(store_chain_backfill_pending(st, &pending, &err), 0);
	assert_int_equal(pending, 0);
	assert_int_equal(store_chain_last(st, NULL, &l, &err), 0);
	assert_string_equal(l.run_id, "R1");
	store_chain_link_release(&l);
	assert_int_equal(store_chain_last(st, "R1", &l, &err), 0);
	assert_string_equal(l.sha256, "zz");
	store_chain_link_release(&l);
	store_free(st);
	free(path);
}

static void run_at(struct store *st, const char *id, enum run_state state, long long finished)
{
	struct store_run r;
	struct sl_err err = SL_ERR_INIT;
	sqlite3_stmt *s = NULL;

	memset(&r, 0, sizeof(r));
	r.id = (char *)id;
	r.work_order_id = (char *)"WO-1";
	r.wo_content_hash = (char *)"h";
	r.target = (char *)"refs/heads/main";
	assert_int_equal(store_begin(st, &err), 0);
	assert_int_equal(store_run_insert(st, &r, &err), 0);
	assert_int_equal(store_commit(st, &err), 0);
	assert_int_equal(sqlite3_prepare_v2(store_db(st), "UPDATE runs SET state = ?, finished_ms = ? "
					    "WHERE id = ?", -1, &s, NULL), SQLITE_OK);
	sqlite3_bind_text(s, 1, run_state_name(state), -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, finished);
	sqlite3_bind_text(s, 3, id, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(s), SQLITE_DONE);
	sqlite3_finalize(s);
}

/* The run a killed merge may have left unsealed: the merged one that finished last, by an index. */
static void test_newest_merged(void **state)
{
	struct test_store *f = *state;
	struct store_run *runs = NULL;
	struct sl_err err = SL_ERR_INIT;
	sqlite3_stmt *s = NULL;
	char plan[1024] = "";
	size_t n = 9;

	assert_int_equal(store_chain_newest_merged(f->st, &runs, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_null(runs);
	run_at(f->st, "M1", RUN_MERGED, 1000);
	run_at(f->st, "M2", RUN_MERGED, 3000);
	run_at(f->st, "F1", RUN_FAILED, 5000);
	run_at(f->st, "M0", RUN_MERGED, 2000);
	assert_int_equal(store_chain_newest_merged(f->st, &runs, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(runs[0].id, "M2");
	assert_int_equal(runs[0].state, RUN_MERGED);
	store_runs_free(runs, n);

	assert_int_equal(sqlite3_prepare_v2(store_db(f->st),
					    "EXPLAIN QUERY PLAN SELECT id FROM runs WHERE state = ? "
					    "ORDER BY finished_ms DESC LIMIT 1", -1, &s, NULL),
			 SQLITE_OK);
	while (sqlite3_step(s) == SQLITE_ROW) {
		strncat(plan, (const char *)sqlite3_column_text(s, 3), sizeof(plan) - strlen(plan) - 2);
		strcat(plan, ";");
	}
	sqlite3_finalize(s);
	assert_non_null(strstr(plan, "runs_state_finished"));
	assert_null(strstr(plan, "TEMP B-TREE"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_last_in_merge_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record_replaces_and_checks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_last_uses_the_index, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_database_is_marked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newest_merged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_database_is_marked_then_filled, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
