/* sl_proc_spawn and sl_proc_wait_any: children that run beside the caller. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/err.h"
#include "core/proc.h"
#include "core/time.h"

static int spawn_sh(const char *script, int pass_fd, int *pid)
{
	struct sl_proc_spawn_opts o = SL_PROC_SPAWN_OPTS_INIT;
	struct sl_err err = SL_ERR_INIT;
	const char *argv[] = { "sh", "-c", script, NULL };

	o.prog = "/bin/sh";
	o.argv = argv;
	o.pass_fd = pass_fd;
	return sl_proc_spawn(&o, pid, &err);
}

/* Several children at once: each is reaped once, with its own exit status. */
static void test_wait_any_reaps_each(void **state)
{
	struct sl_proc_result res;
	struct sl_err err = SL_ERR_INIT;
	int pids[3] = { -1, -1, -1 }, seen[3] = { 0, 0, 0 };
	size_t which;

	assert_int_equal(spawn_sh("sleep 0.3; exit 3", -1, &pids[0]), 0);
	assert_int_equal(spawn_sh("exit 0", -1, &pids[2]), 0);
	assert_true(pids[0] > 0 && pids[2] > 0);
	for (int n = 0; n < 2; n++) {
		assert_int_equal(sl_proc_wait_any(pids, 3, 5000, &which, &res, &err), 1);
		assert_true(which == 0 || which == 2);
		assert_int_equal(res.pid, pids[which]);
		assert_int_equal(res.exit_code, which == 0 ? 3 : 0);
		assert_int_equal(res.signaled, 0);
		seen[which]++;
		pids[which] = -1;
	}
	assert_int_equal(seen[0], 1);
	assert_int_equal(seen[2], 1);
	/* nothing left: 0 at once */
	assert_int_equal(sl_proc_wait_any(pids, 3, 5000, &which, &res, &err), 0);
}

/* A timeout returns 0 with the child still running; a signal is reported as such. */
static void test_timeout_and_signal(void **state)
{
	struct sl_proc_result res;
	struct sl_err err = SL_ERR_INIT;
	int64_t t0;
	size_t which;
	int pid;

	assert_int_equal(spawn_sh("exec sleep 30", -1, &pid), 0);
	t0 = sl_mono_ms();
	assert_int_equal(sl_proc_wait_any(&pid, 1, 100, &which, &res, &err), 0);
	assert_true(sl_mono_ms() - t0 >= 100);
	assert_int_equal(sl_proc_wait_any(&pid, 1, 0, &which, &res, &err), 0);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(sl_proc_wait_any(&pid, 1, 5000, &which, &res, &err), 1);
	assert_int_equal(which, 0);
	assert_int_equal(res.signaled, SIGKILL);
	assert_int_equal(res.exit_code, 128 + SIGKILL);
}

/* An exec that fails is an error of the spawn, with nothing left to wait for. */
static void test_exec_failure_reported(void **state)
{
	struct sl_proc_spawn_opts o = SL_PROC_SPAWN_OPTS_INIT;
	struct sl_err err = SL_ERR_INIT;
	const char *argv[] = { "nope", NULL };
	int pid = 123;

	o.prog = "/nonexistent/sluice-nope";
	o.argv = argv;
	assert_true(sl_proc_spawn(&o, &pid, &err) < 0);
	assert_int_equal(pid, -1);
	assert_non_null(strstr(err.msg, "cannot run '/nonexistent/sluice-nope'"));
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

/* pass_fd (close-on-exec here) stays open in the child alone; another close-on-exec fd does not. */
static void test_pass_fd(void **state)
{
	struct sl_proc_result res;
	struct sl_err err = SL_ERR_INIT;
	int data[2], other[2], pid;
	char script[256];
	size_t which;

	assert_int_equal(pipe2(data, O_CLOEXEC), 0);
	assert_int_equal(pipe2(other, O_CLOEXEC), 0);
	assert_int_equal(write(data[1], "secret", 6), 6);
	close(data[1]);
	/* exit 0 only when fd data[0] reads "secret" and fd other[0] is closed */
	snprintf(script, sizeof(script),
		 "test \"$(cat <&%d)\" = secret || exit 1; "
		 "{ true <&%d; } 2>/dev/null && exit 2; exit 0", data[0], other[0]);
	assert_int_equal(spawn_sh(script, data[0], &pid), 0);
	assert_int_equal(sl_proc_wait_any(&pid, 1, 5000, &which, &res, &err), 1);
	assert_int_equal(res.exit_code, 0);
	/* still close-on-exec in the parent */
	assert_int_equal(fcntl(data[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	close(data[0]);
	close(other[0]);
	close(other[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wait_any_reaps_each),
		cmocka_unit_test(test_timeout_and_signal),
		cmocka_unit_test(test_exec_failure_reported),
		cmocka_unit_test(test_pass_fd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
