/*
 * The human commands (runner/human.c): runner_approve, runner_reject,
 * runner_retry and runner_abandon on real runs of a real repository. Runs
 * are brought to awaiting_review by a real tick (the reviewer is manual, the
 * default; the tick's workers are this binary, see test_runner_tick.c).
 * Each command where it is allowed moves the run with one event; where it
 * is not, it says why and changes nothing: no state, no event.
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

static int setup(void **state)
{
	return test_sluice_setup(&T, "/tmp/sluice-human.XXXXXX", NULL);
}

static int teardown(void **state)
{
	test_sluice_teardown(&T);
	return 0;
}

/* A tick builds the work order `wo`; its run waits for a person (id into run[64]). */
static void awaiting(const char *wo, char run[64])
{
	struct runner_tick_result r;

	test_sluice_wo(&T, wo, "");
	r = test_sluice_tick(&T, 1, wo);
	assert_int_equal(r.started, 1);
	assert_true(r.waiting >= 1);
	test_sluice_run_of(&T, wo, run);
	assert_int_equal(test_sluice_state(&T, run), RUN_AWAITING_REVIEW);
}

enum cmd { APPROVE, REJECT, RETRY, ABANDON };

static int human(enum cmd c, const char *run, struct sl_err *err)
{
	char next[32];

	sl_err_clear(err);
	switch (c) {
	case APPROVE:
		return runner_approve(&T.ctx, run, "looks fine", err);
	case REJECT:
		return runner_reject(&T.ctx, run, "not like this", err);
	case RETRY:
		return runner_retry(&T.ctx, run, next, sizeof(next), err);
	default:
		return runner_abandon(&T.ctx, run, 0, err);
	}
}

/* `c` on `run` is refused with `code` and a message containing `says`; nothing moves. */
static void refused(enum cmd c, const char *run, const char *id, int code, const char *says)
{
	struct sl_err err = SL_ERR_INIT;
	enum run_state before = test_sluice_state(&T, id);
	size_t events = test_sluice_events(&T, NULL);

	assert_int_equal(human(c, run, &err), code);
	if (!strstr(err.msg, says))
		fail_msg("'%s' does not say '%s'", err.msg, says);
	assert_int_equal(test_sluice_state(&T, id), before);
	assert_int_equal(test_sluice_events(&T, NULL), events);
}

/* `c` on `run` (id or prefix) moves run `id` to `to` with exactly one more event. */
static void moves(enum cmd c, const char *run, const char *id, enum run_state to)
{
	struct sl_err err = SL_ERR_INIT;
	size_t events = test_sluice_events(&T, id);

	if (human(c, run, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(test_sluice_state(&T, id), to);
	assert_int_equal(test_sluice_events(&T, id), events + 1);
}

/* A prefix of id: all but its last `cut` characters (static buffer, one at a time). */
static const char *prefix(const char *id, size_t cut)
{
	static char p[64];

	snprintf(p, sizeof(p), "%.*s", (int)(strlen(id) - cut), id);
	return p;
}

static void test_approve(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char run[64], path[PATH_MAX + 128], next[32] = "", *review;

	awaiting("W1", run);
	/* not allowed while awaiting_review */
	refused(RETRY, run, run, SL_EINVALID, "retry applies to");
	/* a rejection needs a reason */
	assert_int_equal(runner_reject(&T.ctx, run, "", &err), SL_EINVALID);
	assert_int_equal(test_sluice_state(&T, run), RUN_AWAITING_REVIEW);

	moves(APPROVE, prefix(run, 3), run, RUN_APPROVED);
	snprintf(path, sizeof(path), "%s/.system/runs/%s/review.json", T.repo, run);
	review = test_read_file(path);
	assert_non_null(review);
	assert_non_null(strstr(review, "\"approve\""));
	assert_non_null(strstr(review, "(manual)"));
	free(review);

	/* only a run waiting for a person is approved or rejected */
	refused(APPROVE, run, run, SL_EINVALID, "is approved, not awaiting_review");
	refused(REJECT, run, run, SL_EINVALID, "is approved, not awaiting_review");
	/* retry on an approved run asks for the merge again: same state, one event */
	assert_int_equal(runner_retry(&T.ctx, run, next, sizeof(next), &err), 0);
	assert_string_equal(next, "approved");
	assert_int_equal(test_sluice_state(&T, run), RUN_APPROVED);

	/* the next tick lands it; a merged run takes no command at all */
	assert_int_equal(test_sluice_tick(&T, 0, NULL).merged, 1);
	assert_int_equal(test_sluice_state(&T, run), RUN_MERGED);
	refused(APPROVE, run, run, SL_EINVALID, "is merged, not awaiting_review");
	refused(REJECT, run, run, SL_EINVALID, "is merged");
	refused(RETRY, run, run, SL_EINVALID, "is merged; retry applies to");
	refused(ABANDON, run, run, SL_EINVALID, "is already merged");
}

/* What the person read was changed after sluice wrote it: the approval is refused. */
static void test_approve_refuses_a_changed_diff(void **state)
{
	char run[64];

	awaiting("W1", run);
	sh("echo tampered >>'%s/.system/runs/%s/diff.patch'", T.repo, run);
	refused(APPROVE, run, run, SL_ECONFLICT, "diff.patch of run");
	/* sluice wrote it again from git: now it is what the person reads */
	moves(APPROVE, run, run, RUN_APPROVED);
}

static void test_reject_then_retry(void **state)
{
	char run[64], next[32] = "";
	struct sl_err err = SL_ERR_INIT;
	struct store_wo wo = STORE_WO_INIT;

	awaiting("W1", run);
	moves(REJECT, run, run, RUN_REJECTED);
	assert_int_equal(store_wo_get(T.ctx.st, "W1", &wo, &err), 0);
	assert_true(wo_state_is(wo.state, WO_FAILED));
	store_wo_release(&wo);
	refused(REJECT, run, run, SL_EINVALID, "is rejected, not awaiting_review");
	refused(APPROVE, run, run, SL_EINVALID, "is rejected, not awaiting_review");
	refused(ABANDON, run, run, SL_EINVALID, "is already rejected");

	/* a rejected run is retried: queued again, its work order running */
	assert_int_equal(runner_retry(&T.ctx, prefix(run, 2), next, sizeof(next), &err), 0);
	assert_string_equal(next, "queued");
	assert_int_equal(test_sluice_state(&T, run), RUN_QUEUED);
	assert_int_equal(store_wo_get(T.ctx.st, "W1", &wo, &err), 0);
	assert_true(wo_state_is(wo.state, WO_RUNNING));
	store_wo_release(&wo);
	refused(RETRY, run, run, SL_EINVALID, "is queued; retry applies to");
	refused(APPROVE, run, run, SL_EINVALID, "is queued, not awaiting_review");

	/* the next tick builds it again, and it waits for a person again */
	assert_int_equal(test_sluice_tick(&T, 0, NULL).waiting, 1);
	assert_int_equal(test_sluice_state(&T, run), RUN_AWAITING_REVIEW);
}

/* A work order whose text changed since the run is new work: no retry of the old run. */
static void test_retry_refused_after_the_work_order_changed(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char run[64];

	awaiting("W1", run);
	moves(REJECT, run, run, RUN_REJECTED);
	sh("echo 'More to do.' >>'%s/work_orders/W1.md'", T.repo);
	assert_int_equal(runner__ingest(&T.ctx, &err), 0);
	refused(RETRY, run, run, SL_EINVALID, "changed since run");
}

static void test_abandon(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char run[64], *wt;

	awaiting("W1", run);
	wt = sl_repo_run_path(&T.ctx.repo, run, "worktree");
	assert_true(sl_path_exists(wt));
	assert_int_equal(runner_abandon(&T.ctx, prefix(run, 4), 1, &err), 0);
	assert_int_equal(test_sluice_state(&T, run), RUN_ABANDONED);
	/* the worktree is gone, and with delete_branch its branch too */
	assert_false(sl_path_exists(wt));
	assert_string_equal(sh_line("git -C '%s' branch --list 'run/*'", T.repo), "");
	free(wt);
	refused(ABANDON, run, run, SL_EINVALID, "is already abandoned");
	refused(APPROVE, run, run, SL_EINVALID, "is abandoned, not awaiting_review");
	refused(RETRY, run, run, SL_EINVALID, "is abandoned; retry applies to");
}

/* A prefix that names two runs, or none, moves nothing. */
static void test_ambiguous_and_unknown(void **state)
{
	char a[64], b[64];
	size_t common = 0;
	enum cmd c;

	awaiting("W1", a);
	awaiting("W2", b);
	while (a[common] && a[common] == b[common])
		common++;
	assert_true(common > 0);
	for (c = APPROVE; c <= ABANDON; c++) {
		refused(c, prefix(a, strlen(a) - common), a, SL_EAMBIGUOUS, b);
		assert_int_equal(test_sluice_state(&T, b), RUN_AWAITING_REVIEW);
		refused(c, "zz-no-such-run", a, SL_ENOTFOUND, "zz-no-such-run");
	}
	/* one character more than they share names one of them */
	moves(REJECT, prefix(a, strlen(a) - common - 1), a, RUN_REJECTED);
	assert_int_equal(test_sluice_state(&T, b), RUN_AWAITING_REVIEW);
}

/* A run another process is working on (its run lock held) is left alone. */
static void test_locked_run(void **state)
{
	char run[64], *lock;
	enum cmd c;
	pid_t holder;

	awaiting("W1", run);
	lock = sl_repo_run_path(&T.ctx.repo, run, "lock");
	holder = test_lock_holder(lock);
	for (c = APPROVE; c <= ABANDON; c++)
		refused(c, run, run, SL_ELOCKED, "is being worked on by another sluice process");
	test_lock_holder_end(holder);
	free(lock);
	moves(APPROVE, run, run, RUN_APPROVED);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_approve, setup, teardown),
		cmocka_unit_test_setup_teardown(test_approve_refuses_a_changed_diff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reject_then_retry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retry_refused_after_the_work_order_changed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_abandon, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ambiguous_and_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_locked_run, setup, teardown),
	};
	int rc = test_runner_worker(argc, argv);

	if (rc >= 0)
		return rc;
	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
