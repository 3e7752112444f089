/* core/lock: the service flock and process identities (pid + start time). */
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

#include "core/lock.h"

static void test_self_alive(void **state)
{
	char me[64];

	sl_owner_self(me, sizeof(me));
	assert_true(sl_owner_alive(me));
	assert_false(sl_owner_alive("garbage"));
	assert_false(sl_owner_alive(NULL));
}

static void test_zombie_is_dead(void **state)
{
	char id[64];
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	sl_owner_of((long)pid, id, sizeof(id));
	assert_true(sl_owner_alive(id));
	kill(pid, SIGKILL);
	/* not reaped yet: a zombie, which must count as dead */
	for (int i = 0; i < 30000 && sl_owner_alive(id); i++)
		usleep(10000);
	assert_false(sl_owner_alive(id));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_false(sl_owner_alive(id));
}

static void test_pid_reuse_is_not_the_owner(void **state)
{
	char id[64], other[80];
	long pid;
	unsigned long long start;

	sl_owner_self(id, sizeof(id));
	assert_int_equal(sscanf(id, "%ld:%llu", &pid, &start), 2);
	snprintf(other, sizeof(other), "%ld:%llu", pid, start + 1);
	assert_false(sl_owner_alive(other));
}

static void test_lock_excludes(void **state)
{
	char dir[] = "/tmp/sluice-test-lock.XXXXXX", path[128];
	struct sl_lock a = SL_LOCK_INIT, b = SL_LOCK_INIT;
	struct sl_err err = SL_ERR_INIT;
	int status;
	pid_t pid;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/lock", dir);
	assert_int_equal(sl_lock_acquire(&a, path, 0, &err), 0);
	pid = fork();
	if (pid == 0) {
		/* another process cannot take it while we hold it */
		_exit(sl_lock_acquire(&b, path, 50, &err) == SL_ELOCKED ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WEXITSTATUS(status), 0);
	sl_lock_release(&a);
	assert_int_equal(sl_lock_acquire(&b, path, 0, &err), 0);
	sl_lock_release(&b);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_alive),
		cmocka_unit_test(test_zombie_is_dead),
		cmocka_unit_test(test_pid_reuse_is_not_the_owner),
		cmocka_unit_test(test_lock_excludes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
