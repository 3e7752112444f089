/*
 * store: a run's state moves on a real database: one event per move with
 * the states' names, the moves the state table refuses, the sets of states
 * a tick and `status` ask for.
 */
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

#define RUN "20260101-000000-aaaaaaaa"

static int setup(void **state)
{
	struct test_store *f;
	struct sl_err err = SL_ERR_INIT;
	struct store_wo wo = STORE_WO_INIT;
	struct store_run r;

	if (test_store_setup(state, "/tmp/sluice-test-moves.XXXXXX"))
		return -1;
	f = *state;
	wo.id = (char *)"WO-1";
	wo.path = (char *)"work_orders/WO-1.md";
	wo.content_hash = (char *)"h1";
	wo.state = (char *)wo_state_name(WO_READY);
	wo.present = 1;
	memset(&r, 0, sizeof(r));
	r.id = (char *)RUN;
	r.work_order_id = (char *)"WO-1";
	r.wo_content_hash = (char *)"h1";
	r.target = (char *)"refs/heads/main";
	r.branch_name = (char *)"run/WO-1-aaaaaaaa";
	if (store_begin(f->st, &err) || store_wo_put_tx(f->st, &wo, "x", 1, &err) ||
	    store_commit(f->st, &err) || store_run_claim(f->st, &r, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return 0;
}

static long long events_of(struct store *st)
{
	return query_int(st, "SELECT count(*) FROM events WHERE run_id = '" RUN "'");
}

static enum run_state state_of(struct store *st)
{
	struct sl_err err = SL_ERR_INIT;
	struct store_run r;
	enum run_state s;

	assert_int_equal(store_run_get(st, RUN, &r, &err), 0);
	s = r.state;
	store_run_release(&r);
	return s;
}

static int move(struct store *st, enum run_state from, enum run_state to, struct sl_err *err)
{
	return store_run_transition(st, RUN, from, to, "why", 0, err);
}

static void test_one_event_per_move(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_event *ev = NULL;
	size_t n = 0;
	long long before = events_of(f->st);

	assert_int_equal(move(f->st, RUN_QUEUED, RUN_PREPARING, &err), 0);
	assert_int_equal(events_of(f->st), before + 1);
	assert_int_equal(store_events_list(f->st, RUN, 0, &ev, &n, &err), 0);
	assert_int_equal(n, 2); /* the claim, the move */
	assert_null(ev[0].from_state);
	assert_string_equal(ev[0].to_state, "queued");
	assert_string_equal(ev[1].from_state, "queued");
	assert_string_equal(ev[1].to_state, "preparing");
	assert_string_equal(ev[1].reason, "why");
	store_events_free(ev, n);
	/* staying with a new reason is an event too, from and to the same state */
	assert_int_equal(store_run_set_reason(f->st, RUN, "still preparing", &err), 0);
	assert_int_equal(events_of(f->st), before + 2);
	assert_int_equal(query_int(f->st, "SELECT count(*) FROM events WHERE from_state = "
					  "'preparing' AND to_state = 'preparing'"),
			 1);
}

static void test_refused_moves_change_nothing(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	long long before = events_of(f->st);

	/* not a move of the state machine */
	assert_int_equal(move(f->st, RUN_QUEUED, RUN_MERGED, &err), SL_EINVALID);
	assert_non_null(strstr(err.msg, "cannot move from queued to merged"));
	sl_err_clear(&err);
	assert_int_equal(move(f->st, RUN_QUEUED, RUN_AWAITING_REVIEW, &err), SL_EINVALID);
	sl_err_clear(&err);
	/* not where the run is */
	assert_int_equal(move(f->st, RUN_BUILDING, RUN_GATING, &err), SL_ECONFLICT);
	sl_err_clear(&err);
	assert_int_equal(state_of(f->st), RUN_QUEUED);
	assert_int_equal(events_of(f->st), before);
}

static void test_final_states(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_run r;
	int i;

	assert_int_equal(move(f->st, RUN_QUEUED, RUN_FAILED, &err), 0);
	assert_int_equal(store_run_get(f->st, RUN, &r, &err), 0);
	assert_true(r.finished_ms > 0);
	store_run_release(&r);
	/* a person's retry is the one way out of failed */
	for (i = 0; i < RUN_STATE_COUNT; i++)
		if (i != RUN_QUEUED && i != RUN_FAILED) {
			assert_int_equal(move(f->st, RUN_FAILED, (enum run_state)i, &err),
					 SL_EINVALID);
			sl_err_clear(&err);
		}
	assert_int_equal(move(f->st, RUN_FAILED, RUN_QUEUED, &err), 0);
	assert_int_equal(move(f->st, RUN_QUEUED, RUN_ABANDONED, &err), 0);
	/* abandoned is never left */
	for (i = 0; i < RUN_STATE_COUNT; i++)
		if (i != RUN_ABANDONED) {
			assert_int_equal(move(f->st, RUN_ABANDONED, (enum run_state)i, &err),
					 SL_EINVALID);
			sl_err_clear(&err);
		}
	assert_int_equal(state_of(f->st), RUN_ABANDONED);
}

static void test_the_whole_way(void **state)
{
	static const enum run_state path[] = {
		RUN_QUEUED,    RUN_PREPARING, RUN_BUILDING,    RUN_GATING,      RUN_BUILDING,
		RUN_GATING,    RUN_REVIEWING, RUN_APPROVED,    RUN_MERGING,     RUN_RESOLVING,
		RUN_BUILDING,  RUN_GATING,    RUN_REVIEWING,   RUN_APPROVED,    RUN_MERGING,
		RUN_INTERRUPTED, RUN_APPROVED, RUN_MERGING,    RUN_MERGED
	};
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	long long before = events_of(f->st);
	size_t i, n = sizeof(path) / sizeof(path[0]);

	for (i = 1; i < n; i++)
		assert_int_equal(move(f->st, path[i - 1], path[i], &err), 0);
	assert_int_equal(events_of(f->st), before + (long long)n - 1);
	assert_int_equal(state_of(f->st), RUN_MERGED);
	assert_int_equal(query_int(f->st, "SELECT count(*) FROM runs WHERE state = 'merged' "
					  "AND finished_ms IS NOT NULL"),
			 1);
}

static void test_sets(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_run *runs = NULL;
	size_t n = 0;

	assert_int_equal(store_runs_count(f->st, RUN_STATES_ALL, &err), 1);
	assert_int_equal(store_runs_count(f->st, run_states_where(run_state_is_runnable), &err), 1);
	assert_int_equal(store_runs_count(f->st, run_states_where(run_state_is_final), &err), 0);
	assert_int_equal(store_runs_count(f->st, 0, &err), 0);
	assert_int_equal(move(f->st, RUN_QUEUED, RUN_PREPARING, &err), 0);
	assert_int_equal(store_runs_list(f->st, run_states_where(run_state_is_runnable), NULL,
					 &runs, &n, &err), 0);
	assert_int_equal(n, 0);
	store_runs_free(runs, n);
	assert_int_equal(store_runs_list(f->st, run_states_where(run_state_is_active), "WO-1",
					 &runs, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(runs[0].state, RUN_PREPARING);
	assert_int_equal(runs[0].mode, RUN_MODE_BUILD);
	store_runs_free(runs, n);
	assert_int_equal(store_runs_list(f->st, RUN_SET(RUN_PREPARING), "WO-2", &runs, &n, &err), 0);
	assert_int_equal(n, 0);
	store_runs_free(runs, n);
}

static void test_unknown_state_in_the_database(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_run r, *runs = NULL;
	size_t n = 0;

	/* a database from elsewhere: the CHECK constraint is what keeps this out */
	assert_int_equal(sqlite3_exec(store_db(f->st), "PRAGMA ignore_check_constraints = 1; "
				      "UPDATE runs SET state = 'teleporting'", NULL, NULL, NULL),
			 SQLITE_OK);
	assert_int_equal(store_run_get(f->st, RUN, &r, &err), SL_ERROR);
	assert_non_null(strstr(err.msg, "teleporting"));
	sl_err_clear(&err);
	assert_int_equal(store_runs_list(f->st, RUN_STATES_ALL, NULL, &runs, &n, &err), SL_ERROR);
	assert_null(runs);
	sl_err_clear(&err);
	assert_int_equal(move(f->st, RUN_QUEUED, RUN_PREPARING, &err), SL_ERROR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_one_event_per_move, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_refused_moves_change_nothing, setup,
						test_store_teardown),
		cmocka_unit_test_setup_teardown(test_final_states, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_the_whole_way, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_sets, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_unknown_state_in_the_database, setup,
						test_store_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
