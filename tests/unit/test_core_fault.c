/* core/fault: SLUICE_FAULT names the point and the visit at which a process dies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/fault.h"

/*
 * In a child with SLUICE_FAULT=spec: visit each point of `visits` in turn,
 * writing one byte to a pipe after each visit it survives. Returns the
 * number of visits survived; *killed is 1 when the child died of SIGKILL.
 */
static int visits_survived(const char *spec, const char *const *visits, int *killed)
{
	int fds[2], status, n = 0;
	char c;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		if (spec)
			setenv("SLUICE_FAULT", spec, 1);
		else
			unsetenv("SLUICE_FAULT");
		unsetenv("SLUICE_FAULT_GROUP");
		for (; *visits; visits++) {
			sl_fault(*visits);
			if (write(fds[1], "v", 1) != 1)
				_exit(2);
		}
		_exit(0);
	}
	close(fds[1]);
	while (read(fds[0], &c, 1) == 1)
		n++;
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	*killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
	if (!*killed)
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return n;
}

static void test_unset_never_fires(void **state)
{
	const char *v[] = { "build.after_builder", "merge.after_commit", NULL };
	int killed;

	assert_int_equal(visits_survived(NULL, v, &killed), 2);
	assert_false(killed);
}

static void test_first_visit(void **state)
{
	const char *v[] = { "a.x", "build.after_builder", "b.y", NULL };
	int killed;

	assert_int_equal(visits_survived("build.after_builder", v, &killed), 1);
	assert_true(killed);
}

static void test_nth_visit(void **state)
{
	const char *v[] = { "gates.before_gate", "gates.before_gate", "gates.before_gate", NULL };
	int killed;

	assert_int_equal(visits_survived("gates.before_gate:2", v, &killed), 1);
	assert_true(killed);
	assert_int_equal(visits_survived("gates.before_gate:4", v, &killed), 3);
	assert_false(killed);
}

static void test_list_and_bad_entries(void **state)
{
	const char *v[] = { "a.x", "b.y", "c.z", NULL };
	int killed;

	/* a bad count, an empty name and a name too long are ignored */
	assert_int_equal(visits_survived("a.x:0,,:3,c.z", v, &killed), 2);
	assert_true(killed);
	assert_int_equal(visits_survived("a.x:zero,"
					 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
					 v, &killed),
			 3);
	assert_false(killed);
	/* a prefix is not the name */
	assert_int_equal(visits_survived("b", v, &killed), 3);
	assert_false(killed);
}

static void test_null_is_no_point(void **state)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("SLUICE_FAULT", "x.y", 1);
		sl_fault(NULL);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_false(WIFSIGNALED(status));
}

static void test_checkout_progress_mid_only(void **state)
{
	int status;
	pid_t pid;
	size_t i;
	const size_t calls[][2] = { { 0, 3 }, { 3, 3 }, { 1, 1 } };

	/* the start (no path), the end, a one-file checkout: no fault */
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			setenv("SLUICE_FAULT", "merge.mid_checkout", 1);
			sl_fault_checkout_progress(calls[i][0] ? "f" : NULL, calls[i][0],
						   calls[i][1], NULL);
			_exit(0);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_false(WIFSIGNALED(status));
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("SLUICE_FAULT", "merge.mid_checkout", 1);
		sl_fault_checkout_progress("a1.txt", 1, 3, NULL);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

/* sl_fault_fail: 1 on the n-th visit only, and the process lives on. */
static void test_fail_point_does_not_kill(void **state)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int got = 0;

		setenv("SLUICE_FAULT", "tick.spawn:2", 1);
		got |= sl_fault_fail("tick.spawn") << 0;
		got |= sl_fault_fail("tick.other") << 1;
		got |= sl_fault_fail("tick.spawn") << 2;
		got |= sl_fault_fail("tick.spawn") << 3;
		got |= sl_fault_fail(NULL) << 4;
		_exit(got);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1 << 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unset_never_fires),
		cmocka_unit_test(test_first_visit),
		cmocka_unit_test(test_nth_visit),
		cmocka_unit_test(test_list_and_bad_entries),
		cmocka_unit_test(test_null_is_no_point),
		cmocka_unit_test(test_checkout_progress_mid_only),
		cmocka_unit_test(test_fail_point_does_not_kill),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
