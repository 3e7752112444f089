/*
 * gc (system/gc.c) on real runs of a real repository: system_gc_plan keeps
 * the newest keep_last finished runs and never lists a run that is not
 * finished; system_gc_drop_unmerged leaves out the runs that did not merge;
 * system_gc_apply removes worktree, branch and folder, writes the
 * tombstone, and leaves alone a run that is no longer finished or that
 * another process holds. (gc has no age rule: keep_last is the only one.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <git2.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/runner.h"
#include "system/system.h"
#include "core/fs.h"
#include "core/repo.h"
#include "test_helpers.h"

static struct test_sluice T;
/* the runs, oldest first: two merged, one rejected, one abandoned, one awaiting review */
static char M1[64], M2[64], R1[64], X1[64], A1[64];

/* A tick builds `wo`; its run waits for a person (manual reviewer). */
static void awaiting(const char *wo, char run[64])
{
	test_sluice_wo(&T, wo, "");
	assert_int_equal(test_sluice_tick(&T, 1, wo).started, 1);
	test_sluice_run_of(&T, wo, run);
	assert_int_equal(test_sluice_state(&T, run), RUN_AWAITING_REVIEW);
}

static void merged(const char *wo, char run[64])
{
	struct sl_err err = SL_ERR_INIT;

	awaiting(wo, run);
	assert_int_equal(runner_approve(&T.ctx, run, NULL, &err), 0);
	assert_int_equal(test_sluice_tick(&T, 0, NULL).merged, 1);
	assert_int_equal(test_sluice_state(&T, run), RUN_MERGED);
}

static int setup(void **state)
{
	struct sl_err err = SL_ERR_INIT;

	if (test_sluice_setup(&T, "/tmp/sluice-gc.XXXXXX", NULL))
		return -1;
	merged("M1", M1);
	merged("M2", M2);
	awaiting("R1", R1);
	assert_int_equal(runner_reject(&T.ctx, R1, "no", &err), 0);
	awaiting("X1", X1);
	assert_int_equal(runner_abandon(&T.ctx, X1, 0, &err), 0);
	awaiting("A1", A1);
	return 0;
}

static int teardown(void **state)
{
	test_sluice_teardown(&T);
	return 0;
}

/* The plan's runs, "id,id,...", oldest first (static buffer). */
static const char *ids(const struct system_gc_plan *p)
{
	static char s[1024];
	size_t i;

	s[0] = '\0';
	for (i = 0; i < p->n; i++)
		snprintf(s + strlen(s), sizeof(s) - strlen(s), "%s%s", i ? "," : "", p->v[i].run);
	return s;
}

static void plan(int keep_last, struct system_gc_plan *p)
{
	struct sl_err err = SL_ERR_INIT;

	if (system_gc_plan(&T.ctx, keep_last, p, &err) != 0)
		fail_msg("system_gc_plan: %s", err.msg);
}

static char *join(const char *a, const char *b, const char *c, const char *d)
{
	static char s[1024];

	snprintf(s, sizeof(s), "%s%s%s%s%s%s%s", a, b ? "," : "", b ? b : "", c ? "," : "",
		 c ? c : "", d ? "," : "", d ? d : "");
	return s;
}

static void test_plan_keeps_the_newest_finished(void **state)
{
	struct system_gc_plan p = SYSTEM_GC_PLAN_INIT;

	/* keep none: every finished run, oldest first; the waiting one never */
	plan(0, &p);
	assert_string_equal(ids(&p), join(M1, M2, R1, X1));
	assert_int_equal(p.kept_finished, 0);
	assert_int_equal(p.kept_active, 1);
	assert_int_equal(p.v[0].merged, 1);
	assert_string_equal(p.v[0].state, "merged");
	assert_string_equal(p.v[0].work_order, "M1");
	assert_non_null(p.v[0].folder);
	assert_true(p.v[0].bytes > 0);
	assert_null(p.v[0].branch); /* a merge deletes the run's branch */
	assert_int_equal(p.v[0].has_worktree, 0);
	assert_int_equal(p.v[2].merged, 0);
	assert_string_equal(p.v[2].state, "rejected");
	assert_non_null(p.v[2].branch); /* a rejected run keeps its work */
	assert_int_equal(p.v[2].has_worktree, 1);
	assert_string_equal(p.v[3].state, "abandoned");
	assert_int_equal(p.v[3].has_worktree, 0);

	/* runs that did not merge are left out on request */
	assert_int_equal(system_gc_drop_unmerged(&p), 2);
	assert_string_equal(ids(&p), join(M1, M2, NULL, NULL));
	system_gc_plan_release(&p);

	/* keep the newest two finished (X1, R1) */
	plan(2, &p);
	assert_string_equal(ids(&p), join(M1, M2, NULL, NULL));
	assert_int_equal(p.kept_finished, 2);
	assert_int_equal(p.kept_active, 1);
	system_gc_plan_release(&p);

	plan(3, &p);
	assert_string_equal(ids(&p), M1);
	system_gc_plan_release(&p);

	plan(4, &p);
	assert_int_equal(p.n, 0);
	assert_int_equal(p.kept_finished, 4);
	system_gc_plan_release(&p);
}

static void test_apply_removes_and_leaves_a_tombstone(void **state)
{
	struct system_gc_plan p = SYSTEM_GC_PLAN_INIT;
	struct sl_err err = SL_ERR_INIT;
	json_error_t jerr;
	json_t *tomb;
	char *path, *a1;
	int64_t freed = -1, bytes = 0;
	size_t i;

	plan(0, &p);
	for (i = 0; i < p.n; i++)
		bytes += p.v[i].bytes;
	assert_int_equal(system_gc_apply(&T.ctx, &p, &freed, &err), 0);
	for (i = 0; i < p.n; i++) {
		if (!p.v[i].removed)
			fail_msg("%s not removed: %s", p.v[i].run, p.v[i].error);
		assert_null(p.v[i].error);
	}
	assert_int_equal(freed, bytes);
	/* nothing of them is left: folders, the rejected run's worktree and branch */
	assert_int_equal(sh_in(T.repo, "! test -e .system/runs/%s && ! test -e .system/runs/%s && "
				       "! test -e .system/runs/%s && ! test -e .system/runs/%s && "
				       "! test -e .git/worktrees/%s && "
				       "test -z \"$(git branch --list 'run/R1-*')\"",
			       M1, M2, R1, X1, R1), 0);
	/* the store keeps every run */
	assert_int_equal(test_sluice_state(&T, M1), RUN_MERGED);
	assert_int_equal(test_sluice_state(&T, R1), RUN_REJECTED);

	/* the tombstone of a merged run: enough for show and audit */
	path = sl_path_fmt("%s/.system/runs/%s.gc", T.repo, M2);
	assert_non_null(tomb = json_load_file(path, 0, &jerr));
	assert_string_equal(json_string_value(json_object_get(tomb, "run")), M2);
	assert_string_equal(json_string_value(json_object_get(tomb, "state")), "merged");
	assert_string_equal(json_string_value(json_object_get(tomb, "previous_run")), M1);
	assert_int_equal(strlen(json_string_value(json_object_get(tomb, "manifest_sha256"))), 64);
	assert_int_equal(strlen(json_string_value(json_object_get(tomb, "merge_commit"))), 40);
	assert_non_null(json_string_value(json_object_get(tomb, "removed_at")));
	json_decref(tomb);
	free(path);
	path = sl_path_fmt("%s/.system/runs/%s.gc", T.repo, R1);
	assert_non_null(tomb = json_load_file(path, 0, &jerr));
	assert_string_equal(json_string_value(json_object_get(tomb, "state")), "rejected");
	assert_true(json_is_null(json_object_get(tomb, "merge_commit")));
	json_decref(tomb);
	free(path);
	system_gc_plan_release(&p);

	/* the run waiting for a person is all there */
	a1 = sl_path_fmt("%s/.system/runs/%s/worktree/f-A1", T.repo, A1);
	assert_true(sl_path_exists(a1));
	free(a1);
	assert_int_equal(test_sluice_state(&T, A1), RUN_AWAITING_REVIEW);

	/* nothing left to remove */
	plan(0, &p);
	assert_int_equal(p.n, 0);
	system_gc_plan_release(&p);
}

/* Between plan and apply, R1 was retried and M1 is held by another process: both stay. */
static void test_apply_leaves_a_run_in_use(void **state)
{
	struct system_gc_plan p = SYSTEM_GC_PLAN_INIT;
	struct sl_err err = SL_ERR_INIT;
	char next[32], *lock;
	int64_t freed = -1;
	pid_t holder;

	plan(0, &p);
	assert_string_equal(ids(&p), join(M1, M2, R1, X1));
	assert_int_equal(runner_retry(&T.ctx, R1, next, sizeof(next), &err), 0);
	lock = sl_repo_run_path(&T.ctx.repo, M1, "lock");
	holder = test_lock_holder(lock);
	assert_int_equal(system_gc_apply(&T.ctx, &p, &freed, &err), 0);
	test_lock_holder_end(holder);
	free(lock);
	assert_int_equal(p.v[0].removed, 0);
	assert_non_null(strstr(p.v[0].error, "in use by another sluice process"));
	assert_int_equal(p.v[1].removed, 1);
	assert_int_equal(p.v[2].removed, 0);
	assert_non_null(strstr(p.v[2].error, "is queued now, not finished; left alone"));
	assert_int_equal(p.v[3].removed, 1);
	assert_int_equal(freed, p.v[1].bytes + p.v[3].bytes);
	assert_int_equal(sh_in(T.repo, "test -d .system/runs/%s && test -d .system/runs/%s/worktree && "
				       "! test -e .system/runs/%s.gc && ! test -e .system/runs/%s.gc",
			       M1, R1, M1, R1), 0);
	system_gc_plan_release(&p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_plan_keeps_the_newest_finished, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_removes_and_leaves_a_tombstone, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_apply_leaves_a_run_in_use, setup, teardown),
	};
	int rc = test_runner_worker(argc, argv);

	if (rc >= 0)
		return rc;
	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
