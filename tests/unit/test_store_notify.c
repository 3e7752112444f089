/*
 * store: the notifications outbox (schema/db/005_notify.sql). A move into
 * merged, merge_conflict, rejected or failed adds one row in the move's own
 * transaction (rolled back with it); no other move does; the rows are
 * listed, read one by seq, marked (with the next try's time) and settled as
 * the runner delivers them.
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
#define COMMIT "0123456789abcdef0123456789abcdef01234567"

static int setup(void **state)
{
	struct test_store *f;
	struct sl_err err = SL_ERR_INIT;
	struct store_wo wo = STORE_WO_INIT;
	struct store_run r;

	if (test_store_setup(state, "/tmp/sluice-test-notify.XXXXXX"))
		return -1;
	f = *state;
	wo.id = (char *)"WO-1";
	wo.path = (char *)"work_orders/WO-1.md";
	wo.content_hash = (char *)"h1";
	wo.title = (char *)"The first one";
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

static int move(struct store *st, enum run_state from, enum run_state to, const char *why)
{
	struct sl_err err = SL_ERR_INIT;
	int error = store_run_transition(st, RUN, from, to, why, 0, &err);

	if (error)
		fprintf(stderr, "%s\n", err.msg);
	return error;
}

static long long rows(struct store *st)
{
	return query_int(st, "SELECT count(*) FROM notify_outbox");
}

static void test_only_the_four_moves(void **state)
{
	static const enum run_state path[] = { RUN_QUEUED,    RUN_PREPARING,  RUN_BUILDING,
					       RUN_GATING,    RUN_REVIEWING,  RUN_APPROVED,
					       RUN_MERGING,   RUN_MERGE_CONFLICT, RUN_REVIEWING,
					       RUN_APPROVED,  RUN_MERGING,    RUN_MERGED };
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	const char *const set[] = { "merge_commit", COMMIT, NULL };
	struct store_notify *v = NULL;
	size_t n = 0, i;

	for (i = 1; i < sizeof(path) / sizeof(path[0]); i++) {
		if (path[i] == RUN_MERGED)
			assert_int_equal(store_run_update(f->st, RUN, set, 0, &err), 0);
		assert_int_equal(move(f->st, path[i - 1], path[i], "why"), 0);
	}
	assert_int_equal(rows(f->st), 2);
	assert_int_equal(store_notify_list(f->st, 1, 100, &v, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].event, run_state_name(RUN_MERGE_CONFLICT));
	assert_string_equal(v[0].from_state, run_state_name(RUN_MERGING));
	assert_null(v[0].commit);
	assert_string_equal(v[1].event, run_state_name(RUN_MERGED));
	assert_string_equal(v[1].commit, COMMIT);
	assert_string_equal(v[1].title, "The first one");
	assert_string_equal(v[1].work_order_id, "WO-1");
	assert_string_equal(v[1].target, "refs/heads/main");
	assert_string_equal(v[1].reason, "why");
	assert_true(v[0].seq < v[1].seq);
	/* the seq is the move's row of the event stream */
	assert_int_equal(query_int(f->st, "SELECT count(*) FROM notify_outbox o JOIN events e "
					  "ON e.seq = o.seq AND e.to_state = o.event"),
			 2);
	assert_int_equal(v[1].sent, 0);
	assert_false(v[1].done);
	store_notify_free(v, n);
}

static void test_staying_adds_nothing(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(move(f->st, RUN_QUEUED, RUN_FAILED, "the builder failed"), 0);
	assert_int_equal(rows(f->st), 1);
	/* a new reason in the same state is an event, not a notification */
	assert_int_equal(store_run_set_reason(f->st, RUN, "still failed", &err), 0);
	assert_int_equal(rows(f->st), 1);
	/* a person's retry, and the same end again: a second notification */
	assert_int_equal(move(f->st, RUN_FAILED, RUN_QUEUED, "retry"), 0);
	assert_int_equal(move(f->st, RUN_QUEUED, RUN_FAILED, "failed again"), 0);
	assert_int_equal(rows(f->st), 2);
	/* abandoned is no notification */
	assert_int_equal(move(f->st, RUN_FAILED, RUN_QUEUED, "retry"), 0);
	assert_int_equal(move(f->st, RUN_QUEUED, RUN_ABANDONED, "abandoned"), 0);
	assert_int_equal(rows(f->st), 2);
}

static void test_rolled_back_with_the_move(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(store_begin(f->st, &err), 0);
	assert_int_equal(store_run_transition(f->st, RUN, RUN_QUEUED, RUN_FAILED, "x", 1, &err), 0);
	assert_int_equal(rows(f->st), 1);
	store_rollback(f->st);
	assert_int_equal(rows(f->st), 0);
	assert_int_equal(query_int(f->st, "SELECT count(*) FROM runs WHERE state = 'queued'"), 1);
}

static void test_mark_and_settle(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_notify *v = NULL, one;
	size_t n = 0;
	int64_t seq;

	assert_int_equal(move(f->st, RUN_QUEUED, RUN_PREPARING, "p"), 0);
	assert_int_equal(move(f->st, RUN_PREPARING, RUN_FAILED, "f"), 0);
	assert_int_equal(store_notify_list(f->st, 1, 100, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	seq = v[0].seq;
	store_notify_free(v, n);
	/* the command got it, the URL did not: still pending, with what it knows */
	assert_int_equal(store_notify_get(f->st, seq, &one, &err), 0);
	assert_int_equal(one.next_ms, 0);
	one.sent = STORE_NOTIFY_COMMAND;
	one.tries = 1;
	free(one.last_error);
	one.last_error = strdup("HTTP 500");
	one.next_ms = 1234;
	assert_int_equal(store_notify_mark(f->st, &one, NULL, &err), 0);
	store_notify_release(&one);
	assert_int_equal(store_notify_list(f->st, 1, 100, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].sent, STORE_NOTIFY_COMMAND);
	assert_int_equal(v[0].tries, 1);
	assert_string_equal(v[0].last_error, "HTTP 500");
	assert_int_equal(v[0].next_ms, 1234);
	assert_null(v[0].outcome);
	v[0].sent = STORE_NOTIFY_COMMAND | STORE_NOTIFY_URL;
	assert_int_equal(store_notify_mark(f->st, &v[0], STORE_NOTIFY_DELIVERED, &err), 0);
	store_notify_free(v, n);
	assert_int_equal(store_notify_list(f->st, 1, 100, &v, &n, &err), 0);
	assert_int_equal(n, 0);
	store_notify_free(v, n);
	assert_int_equal(store_notify_list(f->st, 0, 100, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_true(v[0].done);
	assert_string_equal(v[0].outcome, STORE_NOTIFY_DELIVERED);
	store_notify_free(v, n);
	/* an unknown seq */
	assert_int_equal(store_notify_get(f->st, seq + 1000, &one, &err), SL_ENOTFOUND);
	/* a new one, settled with nobody to tell */
	assert_int_equal(move(f->st, RUN_FAILED, RUN_QUEUED, "retry"), 0);
	assert_int_equal(move(f->st, RUN_QUEUED, RUN_FAILED, "again"), 0);
	assert_int_equal(store_notify_settle_all(f->st, STORE_NOTIFY_NO_NOTIFIER, &err), 0);
	assert_int_equal(store_notify_list(f->st, 1, 100, &v, &n, &err), 0);
	assert_int_equal(n, 0);
	store_notify_free(v, n);
	assert_int_equal(query_int(f->st, "SELECT count(*) FROM notify_outbox WHERE outcome = "
					  "'no_notifier'"),
			 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_only_the_four_moves, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_staying_adds_nothing, setup,
						test_store_teardown),
		cmocka_unit_test_setup_teardown(test_rolled_back_with_the_move, setup,
						test_store_teardown),
		cmocka_unit_test_setup_teardown(test_mark_and_settle, setup, test_store_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
