/*
 * The human commands bound to what a person saw (runner/human.c,
 * runner_*_seen: the forms of sluice serve, `sluice approve --head`): a run
 * that is no longer at the head, attempt or state seen refuses each command
 * with SL_ECONFLICT and a message saying what it is now; nothing moves, no
 * event. What was seen, still so, acts as the plain command does.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/runner.h"
#include "runner/runner_int.h"
#include "core/fs.h"
#include "core/repo.h"
#include "test_helpers.h"

static struct test_sluice T;
static char run[64], head[72];

/* A run of work order A awaiting review at attempt 1; its head into head[]. */
static int setup(void **state)
{
	struct store_run r;
	struct sl_err err = SL_ERR_INIT;

	(void)state;
	if (test_sluice_setup(&T, "/tmp/sluice-seen.XXXXXX", NULL))
		return -1;
	test_sluice_wo(&T, "A", "");
	test_sluice_tick(&T, 1, "A");
	test_sluice_run_of(&T, "A", run);
	memset(&r, 0, sizeof(r));
	if (store_run_get(T.ctx.st, run, &r, &err) != 0 || r.state != RUN_AWAITING_REVIEW ||
	    r.attempt != 1 || !r.head_commit)
		return -1;
	snprintf(head, sizeof(head), "%s", r.head_commit);
	store_run_release(&r);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	test_sluice_teardown(&T);
	return 0;
}

enum cmd { APPROVE, REJECT, RETRY, ABANDON };

static int human(enum cmd c, const struct runner_seen *seen, struct sl_err *err)
{
	char next[32];

	sl_err_clear(err);
	switch (c) {
	case APPROVE:
		return runner_approve_seen(&T.ctx, run, "looks fine", seen, err);
	case REJECT:
		return runner_reject_seen(&T.ctx, run, "not like this", seen, err);
	case RETRY:
		return runner_retry_seen(&T.ctx, run, next, sizeof(next), seen, err);
	default:
		return runner_abandon_seen(&T.ctx, run, 0, seen, err);
	}
}

/* Each command with `seen` is refused, the message containing `says`; nothing moves. */
static void all_refused(const struct runner_seen *seen, const char *says)
{
	struct sl_err err = SL_ERR_INIT;
	size_t events = test_sluice_events(&T, NULL);
	enum cmd c;

	for (c = APPROVE; c <= ABANDON; c++) {
		assert_int_equal(human(c, seen, &err), SL_ECONFLICT);
		if (!strstr(err.msg, says))
			fail_msg("'%s' does not say '%s'", err.msg, says);
		assert_int_equal(test_sluice_state(&T, run), RUN_AWAITING_REVIEW);
		assert_int_equal(test_sluice_events(&T, NULL), events);
	}
}

static void test_another_head_attempt_or_state_is_refused(void **state)
{
	struct runner_seen seen = RUNNER_SEEN_INIT;
	char now[80];

	(void)state;
	snprintf(now, sizeof(now), "is now awaiting_review on attempt 1 (head %.12s), not ", head);
	seen.head = "0123456789012345678901234567890123456789";
	all_refused(&seen, now);
	all_refused(&seen, "not at head 012345678901 that was seen; nothing was done");
	seen.head = ""; /* a page of the run before it had a head */
	all_refused(&seen, "not at head none that");
	seen.head = head;
	seen.attempt = 2;
	all_refused(&seen, "not on attempt 2 (head ");
	seen.attempt = 1;
	seen.state = "rejected";
	seen.where = "this page showed; reload";
	all_refused(&seen, "not rejected on attempt 1 (head ");
	all_refused(&seen, "that this page showed; reload");
}

static void test_what_was_seen_acts(void **state)
{
	struct runner_seen seen = { head, 1, "awaiting_review", NULL };
	struct sl_err err = SL_ERR_INIT;
	char next[32];

	(void)state;
	assert_int_equal(runner_reject_seen(&T.ctx, run, "no", &seen, &err), 0);
	assert_int_equal(test_sluice_state(&T, run), RUN_REJECTED);
	/* the page still showing awaiting_review: its retry is refused; the new one's is not */
	assert_int_equal(runner_retry_seen(&T.ctx, run, next, sizeof(next), &seen, &err),
			 SL_ECONFLICT);
	assert_int_equal(test_sluice_state(&T, run), RUN_REJECTED);
	seen.state = "rejected";
	assert_int_equal(runner_retry_seen(&T.ctx, run, next, sizeof(next), &seen, &err), 0);
	assert_int_equal(test_sluice_state(&T, run), RUN_QUEUED);
	test_sluice_tick(&T, 1, "A");
	assert_int_equal(test_sluice_state(&T, run), RUN_AWAITING_REVIEW);
	/* attempt 1's approval does not land on attempt 2 */
	seen.state = "awaiting_review";
	sl_err_clear(&err); /* the first error of an sl_err stays: the refused retry's */
	assert_int_equal(runner_approve_seen(&T.ctx, run, NULL, &seen, &err), SL_ECONFLICT);
	if (!strstr(err.msg, "is now awaiting_review on attempt 2"))
		fail_msg("%s", err.msg);
	assert_int_equal(test_sluice_state(&T, run), RUN_AWAITING_REVIEW);
	seen.attempt = 2;
	seen.head = NULL; /* not checked */
	assert_int_equal(runner_approve_seen(&T.ctx, run, NULL, &seen, &err), 0);
	assert_int_equal(test_sluice_state(&T, run), RUN_APPROVED);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_another_head_attempt_or_state_is_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_what_was_seen_acts, setup, teardown),
	};
	int rc = test_runner_worker(argc, argv);

	if (rc >= 0)
		return rc;
	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
