/*
 * runner_reconcile (runner/reconcile.c), the start of every tick, on real
 * runs of a real repository: a run left in an active state whose run lock
 * nobody holds (its process died) is requeued through `interrupted`, with
 * both events; a run whose lock another process holds is left alone; the
 * stale lock files of the service are removed but the user's
 * .git/index.lock is never touched; worktrees and run/ branches no run
 * owns are counted.
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
#include "core/id.h"
#include "core/repo.h"
#include "test_helpers.h"

static struct test_sluice T;

static int setup(void **state)
{
	return test_sluice_setup(&T, "/tmp/sluice-reconcile.XXXXXX", NULL);
}

static int teardown(void **state)
{
	test_sluice_teardown(&T);
	return 0;
}

/* Claim the work order `wo` as a tick does (a queued run, id into run[64]) and move it to `to`. */
static void claimed(const char *wo, enum run_state to, char run[64])
{
	struct runner_ready *ready = NULL;
	struct sl_err err = SL_ERR_INIT;
	struct store_run r;
	char id[SL_ID_LEN + 1], branch[128];
	size_t n = 0;

	test_sluice_wo(&T, wo, "");
	assert_int_equal(runner__ingest(&T.ctx, &err), 0);
	assert_int_equal(runner__ready(&T.ctx, wo, &ready, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(sl_id_new(id), 0);
	snprintf(branch, sizeof(branch), "run/%s-%s", wo, sl_id_short(id));
	memset(&r, 0, sizeof(r));
	r.id = id;
	r.work_order_id = (char *)wo;
	r.wo_content_hash = ready[0].hash;
	r.target = T.ctx.target_ref;
	r.branch_name = branch;
	r.reason = (char *)"claimed by the test";
	assert_int_equal(store_run_claim(T.ctx.st, &r, &err), 0);
	runner__ready_free(ready, n);
	if (to != RUN_QUEUED)
		assert_int_equal(store_run_transition(T.ctx.st, id, RUN_QUEUED, to, "the test", 0, &err),
				 0);
	snprintf(run, 64, "%s", id);
}

static void reconcile(int requeued, int orphans)
{
	struct sl_err err = SL_ERR_INIT;
	int r = -1, o = -1;

	if (runner_reconcile(&T.ctx, &r, &o, &err) != 0)
		fail_msg("runner_reconcile: %s", err.msg);
	assert_int_equal(r, requeued);
	assert_int_equal(o, orphans);
}

/* The last `k` events of a run as "from>to: reason" lines (static buffer). */
static const char *last_events(const char *run, size_t k)
{
	static char s[2048];
	struct store_event *ev = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0, i;

	s[0] = '\0';
	assert_int_equal(store_events_list(T.ctx.st, run, 0, &ev, &n, &err), 0);
	for (i = n > k ? n - k : 0; i < n; i++)
		snprintf(s + strlen(s), sizeof(s) - strlen(s), "%s>%s: %s\n", ev[i].from_state,
			 ev[i].to_state, ev[i].reason);
	store_events_free(ev, n);
	return s;
}

/* A run in an active state whose lock is free: its process died; requeued. */
static void test_dead_owner_is_requeued(void **state)
{
	char run[64];
	size_t events;

	claimed("W1", RUN_PREPARING, run);
	events = test_sluice_events(&T, run);
	reconcile(1, 0);
	assert_int_equal(test_sluice_state(&T, run), RUN_QUEUED);
	assert_int_equal(test_sluice_events(&T, run), events + 2);
	assert_string_equal(last_events(run, 2),
			    "preparing>interrupted: interrupted while preparing: the test\n"
			    "interrupted>queued: requeued after an interruption (attempt 0 so far)\n");
	/* once is enough: nothing more to do */
	reconcile(0, 0);
	assert_int_equal(test_sluice_events(&T, run), events + 2);
	/* and the next tick carries it on, no new run claimed */
	assert_int_equal(test_sluice_tick(&T, 0, NULL).started, 0);
	assert_int_equal(test_sluice_state(&T, run), RUN_AWAITING_REVIEW);
}

/* A run whose lock another process holds is being worked on: left alone. */
static void test_live_owner_is_left_alone(void **state)
{
	char run[64], *lock;
	size_t events;
	pid_t holder;

	claimed("W1", RUN_PREPARING, run);
	events = test_sluice_events(&T, NULL);
	lock = sl_repo_run_path(&T.ctx.repo, run, "lock");
	sh("mkdir -p '%s/.system/runs/%s'", T.repo, run);
	holder = test_lock_holder(lock);
	reconcile(0, 0);
	assert_int_equal(test_sluice_state(&T, run), RUN_PREPARING);
	assert_int_equal(test_sluice_events(&T, NULL), events);
	/* the holder dies: the kernel drops its lock, the next reconcile requeues */
	test_lock_holder_end(holder);
	free(lock);
	reconcile(1, 0);
	assert_int_equal(test_sluice_state(&T, run), RUN_QUEUED);
}

/* A run not in an active state is never requeued, lock free or not. */
static void test_runnable_and_waiting_runs_stay(void **state)
{
	char a[64], b[64];

	claimed("W1", RUN_QUEUED, a);
	/* a real one waiting for a person (manual reviewer), with its worktree */
	test_sluice_wo(&T, "W2", "");
	assert_int_equal(test_sluice_tick(&T, 1, "W2").started, 1);
	test_sluice_run_of(&T, "W2", b);
	assert_int_equal(test_sluice_state(&T, b), RUN_AWAITING_REVIEW);
	reconcile(0, 0);
	assert_int_equal(test_sluice_state(&T, a), RUN_QUEUED);
	assert_int_equal(test_sluice_state(&T, b), RUN_AWAITING_REVIEW);
}

/*
 * A merge killed midway: the run (with a real worktree and branch) is in
 * merging. Its locks are the dead process's and go; the target's ref lock
 * goes once old; the user's index.lock stays, however old; the temporary
 * file of a dead writer goes.
 */
static void test_stale_locks(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	struct store_run r;
	char run[64], *wt_lock, *branch_lock, *user_lock, *ref_lock, *tmp, *kept_tmp;

	test_sluice_wo(&T, "W1", "");
	assert_int_equal(test_sluice_tick(&T, 1, "W1").started, 1);
	test_sluice_run_of(&T, "W1", run);
	assert_int_equal(runner_approve(&T.ctx, run, NULL, &err), 0);
	assert_int_equal(store_run_transition(T.ctx.st, run, RUN_APPROVED, RUN_MERGING, "the test",
					      0, &err), 0);
	memset(&r, 0, sizeof(r));
	assert_int_equal(store_run_get(T.ctx.st, run, &r, &err), 0);
	wt_lock = sl_path_fmt("%s/worktrees/%s/index.lock", T.ctx.repo.gitdir, run);
	branch_lock = sl_path_fmt("%s/refs/heads/%s.lock", T.ctx.repo.gitdir, r.branch_name);
	user_lock = sl_path_fmt("%s/index.lock", T.ctx.repo.gitdir);
	ref_lock = sl_path_fmt("%s/refs/heads/main.lock", T.ctx.repo.gitdir);
	tmp = sl_repo_run_path(&T.ctx.repo, run, "merge.json.tmp.999999999");
	kept_tmp = sl_repo_run_path(&T.ctx.repo, run, "merge.json.tmp.1");
	store_run_release(&r);
	/* the worktree is real: its entry exists */
	sh("d='%s'; test -d \"${d%%/index.lock}\"", wt_lock);
	sh(": >'%s' && : >'%s' && : >'%s' && : >'%s' && : >'%s' && : >'%s' && "
	   "touch -d '-10 minutes' '%s' '%s'",
	   wt_lock, branch_lock, user_lock, ref_lock, tmp, kept_tmp, user_lock, ref_lock);

	reconcile(1, 0);
	/* a merge goes back to approved: the next tick tries it again */
	assert_int_equal(test_sluice_state(&T, run), RUN_APPROVED);
	assert_string_equal(last_events(run, 2),
			    "merging>interrupted: interrupted while merging: the test\n"
			    "interrupted>approved: the merge is tried again after an interruption "
			    "(attempt 1 so far)\n");
	assert_false(sl_path_exists(wt_lock));
	assert_false(sl_path_exists(branch_lock));
	assert_false(sl_path_exists(ref_lock));
	assert_false(sl_path_exists(tmp));
	assert_true(sl_path_exists(kept_tmp)); /* pid 1 is alive: not a dead writer's */
	assert_true(sl_path_exists(user_lock));
	free(wt_lock);
	free(branch_lock);
	free(user_lock);
	free(ref_lock);
	free(tmp);
	free(kept_tmp);
}

/* A young ref lock of the target may be a git at work: kept. */
static void test_young_ref_lock_is_kept(void **state)
{
	char *ref_lock = sl_path_fmt("%s/refs/heads/main.lock", T.ctx.repo.gitdir);

	sh(": >'%s'", ref_lock);
	reconcile(0, 0);
	assert_true(sl_path_exists(ref_lock));
	free(ref_lock);
}

/* Worktrees and run/ branches that no run owns are counted; a run's own are not. */
static void test_orphans(void **state)
{
	char run[64];

	test_sluice_wo(&T, "W1", "");
	assert_int_equal(test_sluice_tick(&T, 1, "W1").started, 1);
	test_sluice_run_of(&T, "W1", run);
	/* the run's own worktree and branch exist */
	assert_int_equal(sh_in(T.repo, "test -d .system/runs/%s/worktree && "
				       "git branch --list 'run/W1-*' | grep -q run/", run), 0);
	reconcile(0, 0);
	sh("git -C '%s' branch run/nobody-1 main && git -C '%s' branch other main && "
	   "mkdir -p '%s/.system/runs/20990101-000000-nobody/worktree' '%s/.system/runs/x/y'",
	   T.repo, T.repo, T.repo, T.repo);
	reconcile(0, 2);
	/* counted, never removed */
	assert_int_equal(sh_in(T.repo, "git rev-parse -q --verify run/nobody-1 >/dev/null && "
				       "test -d .system/runs/20990101-000000-nobody/worktree"), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dead_owner_is_requeued, setup, teardown),
		cmocka_unit_test_setup_teardown(test_live_owner_is_left_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runnable_and_waiting_runs_stay, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_locks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_young_ref_lock_is_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_orphans, setup, teardown),
	};
	int rc = test_runner_worker(argc, argv);

	if (rc >= 0)
		return rc;
	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
