/*
 * What a killed merge or git left behind, put in order at the start of a
 * tick with the repository lock held (docs/design.md, Locks and crash
 * recovery): the target's ref locks grown old, and the locks and the
 * half-moved checkout of a merge that died. The user's index.lock is never
 * touched.
 */
#include "merge/merge_int.h"
#include "core/fault.h"
#include "core/fs.h"
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * Ref locks of the target (and packed-refs.lock) older than STALE_LOCK_S:
 * a git or sluice killed while moving the ref. git itself never holds them
 * for long, so an old one blocks every merge and every user commit for
 * nothing. Removed with a warning.
 */
#define STALE_LOCK_S 300

static void remove_if_older(const char *path, long seconds)
{
	struct stat st;

	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && time(NULL) - st.st_mtime > seconds &&
	    unlink(path) == 0)
		sl_log(SL_LOG_WARN, "removed '%s', a lock older than %ld seconds", path, seconds);
}

void merge_remove_stale_ref_locks(const char *gitdir, const char *target_ref)
{
	char path[4200], *packed = sl_path_join(gitdir, "packed-refs.lock");

	/* a cut path could name another branch's ref file */
	if (snprintf(path, sizeof(path), "%s/%s.lock", gitdir, target_ref) < (int)sizeof(path))
		remove_if_older(path, STALE_LOCK_S);
	if (packed)
		remove_if_older(packed, STALE_LOCK_S);
	free(packed);
}

/*
 * The merge that wrote `journal` died while it held the locks of the
 * checked-out target: the index.lock it took is removed only when the
 * journal records that very file (merge_journal_release_locks). The
 * target's ref lock (taken by libgit2, not recorded) is the merge's when
 * it is no older than the journal and older than 10 s (git holds ref locks
 * for milliseconds). Returns 1 when such a lock is still there (too young
 * to remove yet).
 */
static int remove_locks_of_dead_merge(const char *gitdir, const char *target_ref,
				      const char *journal)
{
	char path[4800];
	struct stat js, st;
	int left = 0;

	if (stat(journal, &js) < 0)
		return 0;
	if (merge_journal_release_locks(journal, &left) == 0 && left)
		return 1;
	if (snprintf(path, sizeof(path), "%s/%s.lock", gitdir, target_ref) >= (int)sizeof(path))
		return 0; /* a cut path could name another branch's ref file */
	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_mtime < js.st_mtime)
		return 0;
	if (time(NULL) - st.st_mtime > 10 && unlink(path) == 0) {
		sl_log(SL_LOG_WARN, "removed '%s', left by a merge that was killed", path);
		return 0;
	}
	return 1;
}

void merge_recover_dead(const char *root, const char *gitdir, const char *target_ref,
			const char *target, const char *journal)
{
	struct sl_err err = SL_ERR_INIT;
	int recovered = 0;

	if (!journal || !sl_path_exists(journal))
		return;
	sl_fault("reconcile.before_recover");
	/* the recovery waits (journal kept) until the dead merge's locks are gone */
	if (merge_journal_dead(journal) && remove_locks_of_dead_merge(gitdir, target_ref, journal))
		sl_log(SL_LOG_INFO, "an interrupted merge left locks; recovering it later");
	else if (merge_recover_checkout(root, target, journal, &recovered, &err) != 0)
		sl_log(SL_LOG_WARN, "%s", err.msg);
	else if (recovered)
		sl_log(SL_LOG_WARN, "a merge was interrupted while updating the checkout of "
				    "'%s'; its files were put back in line with the branch",
		       target);
}
