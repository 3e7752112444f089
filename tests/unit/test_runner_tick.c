/*
 * runner_tick: one cron pass in a real repository, with real worker
 * processes. A tick starts its workers as `/proc/self/exe -C ROOT
 * advance-run RUN`; here that is this test binary, whose main() then does
 * what `sluice advance-run` does (test_runner_worker(): runner_ctx_open,
 * runner_advance). The builder writes f-<work order id>; the reviewer is a
 * command that approves.
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
#include "test_helpers.h"

static struct test_sluice T;

static int setup(void **state)
{
	return test_sluice_setup(&T, "/tmp/sluice-tick.XXXXXX", TEST_APPROVE_REVIEWER);
}

static int teardown(void **state)
{
	test_sluice_teardown(&T);
	return 0;
}

/* The states a run went through, "a>b>c", from its events. */
static const char *path_of(const char *run)
{
	static char path[1024];
	struct store_event *ev = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0, i;

	path[0] = '\0';
	assert_int_equal(store_events_list(T.ctx.st, run, 0, &ev, &n, &err), 0);
	for (i = 0; i < n; i++)
		if (ev[i].to_state && (!ev[i].from_state || strcmp(ev[i].from_state, ev[i].to_state)))
			snprintf(path + strlen(path), sizeof(path) - strlen(path), "%s%s",
				 path[0] ? ">" : "", ev[i].to_state);
	store_events_free(ev, n);
	return path;
}

static int count(run_state_set states)
{
	struct sl_err err = SL_ERR_INIT;
	int n = store_runs_count(T.ctx.st, states, &err);

	assert_true(n >= 0);
	return n;
}

/* One work order goes from the inbox to the target in one tick. */
static void test_one_work_order_merges(void **state)
{
	struct runner_tick_result r;
	char run[64];

	test_sluice_wo(&T, "W1", "");
	r = test_sluice_tick(&T, 0, NULL);
	assert_int_equal(r.started, 1);
	assert_int_equal(r.advanced, 1);
	assert_int_equal(r.merged, 1);
	assert_int_equal(r.failed, 0);
	assert_int_equal(r.waiting, 0);
	assert_int_equal(r.reconciled, 0);
	test_sluice_run_of(&T, "W1", run);
	assert_int_equal(test_sluice_state(&T, run), RUN_MERGED);
	assert_string_equal(path_of(run), "queued>preparing>building>gating>reviewing>approved>"
					  "merging>merged");
	/* the builder's file is on the target, and the work order is done */
	assert_string_equal(sh_line("git -C '%s' show main:f-W1", T.repo), "x");
	assert_int_equal(sh_in(T.repo, "git log --format=%%B -1 main | grep -q 'Reviewed-by: approve-bot'"), 0);

	/* nothing left: the next tick starts nothing */
	r = test_sluice_tick(&T, 0, NULL);
	assert_int_equal(r.started, 0);
	assert_int_equal(r.advanced, 0);
	assert_int_equal(r.merged, 0);
}

/* max_runs bounds the new runs of a tick; only_wo starts just that work order. */
static void test_max_runs_and_only_wo(void **state)
{
	struct runner_tick_result r;
	char run[64];

	test_sluice_wo(&T, "A1", "");
	test_sluice_wo(&T, "B1", "");
	test_sluice_wo(&T, "C1", "");

	/* as `sluice run C1` asks: just C1, one run (A1 and B1 are ready too) */
	r = test_sluice_tick(&T, 1, "C1");
	assert_int_equal(r.started, 1);
	assert_int_equal(r.merged, 1);
	test_sluice_run_of(&T, "C1", run);
	assert_int_equal(test_sluice_state(&T, run), RUN_MERGED);
	assert_int_equal(count(RUN_STATES_ALL), 1);

	r = test_sluice_tick(&T, 1, NULL);
	assert_int_equal(r.started, 1);
	assert_int_equal(r.merged, 1);
	assert_int_equal(count(RUN_STATES_ALL), 2);

	r = test_sluice_tick(&T, 0, NULL);
	assert_int_equal(r.started, 1);
	assert_int_equal(count(RUN_SET(RUN_MERGED)), 3);
	assert_string_equal(sh_line("git -C '%s' ls-tree --name-only main | tr '\\n' ' '", T.repo),
			    "README f-A1 f-B1 f-C1 ");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_one_work_order_merges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_max_runs_and_only_wo, setup, teardown),
	};
	int rc = test_runner_worker(argc, argv);

	if (rc >= 0)
		return rc;
	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
