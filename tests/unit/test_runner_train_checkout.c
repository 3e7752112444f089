/*
 * train_checkouts_prune() (train/checkout.c) on git's entry of a merge
 * gates' checkout whose `git worktree add` a kill cut short (git's "locked"
 * still says "initializing"): removed once the lock is older than 10 s, or
 * at once when no tester of the train is alive (only a tester adds one);
 * left alone while a tester lives and the lock is fresh (an add under way).
 * The tester is a child of this test, named in the store as a tick names
 * one (pid and start time); the store is a real one, the entry git's layout.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <git2.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/runner.h"
#include "train/train.h"
#include "store/store.h"
#include "core/lock.h"
#include "test_helpers.h"

static struct test_sluice T;
static char run[64];

static int setup(void **state)
{
	if (test_sluice_setup(&T, "/tmp/sluice-train-checkout.XXXXXX", TEST_APPROVE_REVIEWER))
		return -1;
	/* a run for the car to belong to (the store's train names runs) */
	test_sluice_wo(&T, "W1", "");
	test_sluice_tick(&T, 1, NULL);
	test_sluice_run_of(&T, "W1", run);
	return 0;
}

static int teardown(void **state)
{
	test_sluice_teardown(&T);
	return 0;
}

/* git's entry of a checkout whose add was killed; its files' times `when` (touch -d) */
static void plant(const char *when)
{
	sh("e='%s/.git/worktrees/worktree-train' && mkdir -p \"$e\" && "
	   "printf initializing >\"$e/locked\" && : >\"$e/commondir\" && "
	   "echo '%s/.system/runs/%s/worktree-train/.git' >\"$e/gitdir\" && "
	   "touch -d '%s' \"$e/locked\" \"$e/gitdir\" \"$e/commondir\" \"$e\"",
	   T.repo, T.repo, run, when);
}

static int planted(void)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/.git/worktrees/worktree-train", T.repo);
	return access(path, F_OK) == 0;
}

/* The run's car, testing by `tester` (an owner, or NULL for none). */
static void car_tested_by(const char *tester)
{
	struct store_car c;
	struct sl_err err = SL_ERR_INIT;
	int joined = 0;

	assert_int_equal(store_train_join(T.ctx.st, run, T.ctx.target_ref,
					  "0123456789012345678901234567890123456789", 0, &joined,
					  &err),
			 0);
	memset(&c, 0, sizeof(c));
	assert_int_equal(store_train_get(T.ctx.st, run, &c, &err), 0);
	c.status = TRAIN_TESTING;
	free(c.tester);
	c.tester = tester ? strdup(tester) : NULL;
	assert_int_equal(store_train_put(T.ctx.st, &c, &err), 0);
	store_car_release(&c);
}

static pid_t live_tester(char owner[64])
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		/* gone with the test, and holding none of its output (ctest waits on that) */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(STDOUT_FILENO);
		close(STDERR_FILENO);
		for (;;)
			pause();
	}
	sl_owner_of((long)pid, owner, 64);
	return pid;
}

static void end(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
}

static void test_fresh_lock_live_tester_is_left(void **state)
{
	char owner[64];
	pid_t pid = live_tester(owner);
	int left;

	car_tested_by(owner);
	plant("+1 hour");
	train_checkouts_prune(&T.ctx);
	left = planted();
	/* the same once the tester is gone: the add it made was cut short */
	end(pid);
	assert_true(left);
	train_checkouts_prune(&T.ctx);
	assert_false(planted());
}

static void test_old_lock_live_tester_is_removed(void **state)
{
	char owner[64];
	pid_t pid = live_tester(owner);
	int left;

	car_tested_by(owner);
	plant("2 minutes ago");
	train_checkouts_prune(&T.ctx);
	left = planted();
	end(pid);
	assert_false(left);
}

static void test_fresh_lock_no_tester_is_removed(void **state)
{
	car_tested_by(NULL);
	plant("+1 hour");
	train_checkouts_prune(&T.ctx);
	assert_false(planted());
}

/* A lock that is not git's "initializing" is someone's: never removed. */
static void test_other_lock_is_left(void **state)
{
	car_tested_by(NULL);
	plant("2 minutes ago");
	sh("printf 'kept by a person' >'%s/.git/worktrees/worktree-train/locked'", T.repo);
	train_checkouts_prune(&T.ctx);
	assert_true(planted());
	sh("rm -rf '%s/.git/worktrees/worktree-train'", T.repo);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh_lock_live_tester_is_left),
		cmocka_unit_test(test_old_lock_live_tester_is_removed),
		cmocka_unit_test(test_fresh_lock_no_tester_is_removed),
		cmocka_unit_test(test_other_lock_is_left),
	};
	int rc = test_runner_worker(argc, argv);

	if (rc >= 0)
		return rc;
	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, setup, teardown);
	git_libgit2_shutdown();
	return rc;
}
