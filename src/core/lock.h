#ifndef SL_CORE_LOCK_H
#define SL_CORE_LOCK_H
/*
 * The service lock (.system/lock): an flock(2) that serializes the
 * service's own git mutations and merges across processes (docs/design.md, Locks and crash
 * recovery). The kernel drops it when the process dies, so it can never
 * go stale. And process identity: a pid plus its start time, so that a run
 * owned by a dead process is told from one whose pid was reused.
 */
#include <stdint.h>
#include "core/err.h"

struct sl_lock {
	int fd;
};

#define SL_LOCK_INIT { -1 }

/*
 * Take the lock, waiting up to timeout_ms (0: do not wait, -1: forever).
 * SL_ELOCKED when it is still held by another process at the end.
 */
int sl_lock_acquire(struct sl_lock *lock, const char *path, int64_t timeout_ms,
		    struct sl_err *err);

/* Release (safe on a lock not held). */
void sl_lock_release(struct sl_lock *lock);

/* This process's identity as "<pid>:<start time in clock ticks>". */
void sl_owner_self(char *out, size_t n);

/* The identity of another process, in the same form. */
void sl_owner_of(long pid, char *out, size_t n);

/*
 * Read an identity from `path` (written by sl_proc_run's owner_file) and, if
 * that process is still alive, SIGKILL its whole process group. Removes the
 * file. Returns 1 if it killed something, 0 if not.
 */
int sl_owner_kill_group(const char *path);

/*
 * 1 when the process named by an identity from sl_owner_self() is still
 * alive (same pid, same start time), 0 when it is gone.
 */
int sl_owner_alive(const char *owner);

/*
 * 1 when a process `pid` is alive (not gone, not a zombie), 0 when not: for
 * names that carry only a pid, such as the temporary files of atomic writes.
 */
int sl_pid_alive(long pid);

#endif
