#include "core/lock.h"
#include "core/time.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <signal.h>
#include <unistd.h>

int sl_lock_acquire(struct sl_lock *lock, const char *path, int64_t timeout_ms,
		    struct sl_err *err)
{
	int64_t deadline = sl_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int fd;

	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666)) < 0)
		return sl_err_sys(err, errno, "cannot open the lock file '%s'", path);
	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno != EWOULDBLOCK && errno != EINTR) {
			int e = errno;
			close(fd);
			return sl_err_sys(err, e, "cannot lock '%s'", path);
		}
		if (timeout_ms >= 0 && sl_mono_ms() >= deadline) {
			close(fd);
			return sl_err_set(err, SL_ELOCKED,
					  "'%s' is held by another sluice process; try again later",
					  path);
		}
		sl_sleep_ms(20);
	}
	lock->fd = fd;
	return 0;
}

void sl_lock_release(struct sl_lock *lock)
{
	if (lock->fd >= 0) {
		flock(lock->fd, LOCK_UN);
		close(lock->fd);
	}
	lock->fd = -1;
}

/*
 * A process's start time (clock ticks since boot) from /proc/<pid>/stat;
 * 0 when it is gone, or a zombie: dead, only not yet reaped (in a
 * container whose first process reaps nothing, zombies stay for good).
 */
static unsigned long long start_time(long pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	FILE *f;
	int field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (!(f = fopen(path, "r")))
		return 0;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	/* the command name (field 2) may hold spaces: skip to its closing paren */
	if (!(p = strrchr(buf, ')')))
		return 0;
	if (p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'))
		return 0; /* field 3, the state: zombie or dead */
	for (field = 2; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	sscanf(p, "%llu", &start);
	return start;
}

void sl_owner_self(char *out, size_t n)
{
	sl_owner_of((long)getpid(), out, n);
}

void sl_owner_of(long pid, char *out, size_t n)
{
	snprintf(out, n, "%ld:%llu", pid, start_time(pid));
}

int sl_owner_kill_group(const char *path)
{
	char owner[64] = "";
	FILE *f = fopen(path, "r");
	long pid = 0;
	int killed = 0;

	if (!f)
		return 0;
	if (fgets(owner, sizeof(owner), f))
		owner[strcspn(owner, "\n")] = '\0';
	fclose(f);
	if (sl_owner_alive(owner) && sscanf(owner, "%ld:", &pid) == 1 && pid > 1)
		killed = kill((pid_t)-pid, SIGKILL) == 0;
	unlink(path);
	return killed;
}

int sl_owner_alive(const char *owner)
{
	long pid;
	unsigned long long start;

	if (!owner || sscanf(owner, "%ld:%llu", &pid, &start) != 2 || pid <= 0)
		return 0;
	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return 0;
	return start_time(pid) == start;
}

int sl_pid_alive(long pid)
{
	return pid > 0 && start_time(pid) != 0;
}
