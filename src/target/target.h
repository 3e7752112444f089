#ifndef SL_TARGET_TARGET_H
#define SL_TARGET_TARGET_H
/*
 * The target branch (docs/audit.md), below the runner: moves of the target
 * that sluice did not make.
 *
 * sluice records the tip of the target it last observed or landed on. A
 * later tip is classified by the commits it brings (reachable from it, not
 * from the last observed tip):
 *  - a sluice landing (a merged run's merge commit, or the merge commit of
 *    an approved run whose landing a crash cut short), and the run commits
 *    it merges: sluice's own;
 *  - a commit recorded as the user's (observed earlier or accepted);
 *  - a commit from a run: reachable from a run's recorded head, an attempt's
 *    head, a run/ branch, an entry of a run branch's or run worktree's
 *    reflog, or a refs/sluice/ ref, and not from any run's base: an
 *    unreviewed landing. Landing stops until the target no longer carries
 *    it (a person reset the target) or a person accepts it;
 *  - anything else (a person's commit, a pull, a reset backwards): the
 *    user's, recorded as such.
 */
#include "core/ctx.h"
#include "core/err.h"

#include <git2.h>
#include <stddef.h>

struct target_alert {
	char commit[GIT_OID_HEXSZ + 1]; /* the newest unreviewed commit on the target */
	char run[64];                   /* the run it came from ("" when unknown) */
	size_t count;                   /* unreviewed commits on the target in all */
};

/*
 * Observe the target: classify the commits the tip brings (`tip`; NULL:
 * the target's tip now). record: write what was found (the new tip, the
 * user's commits, an alert with its event): hold the repository lock. Not
 * recording only reads. Returns 0 when the target carries nothing
 * unreviewed, 1 when it does (*alert filled), or a negative error.
 */
int target_watch(struct sl_ctx *ctx, const git_oid *tip, int record,
		 struct target_alert *alert, struct sl_err *err);

/*
 * sluice accept-target COMMIT: record every commit reachable from COMMIT
 * (on the target) and not from the last observed tip as the user's, then
 * observe again. *n: how many were recorded. SL_ENOTFOUND: no such
 * commit; SL_ECONFLICT: it is not on the target.
 */
int target_accept(struct sl_ctx *ctx, const char *commit, size_t *n,
		  struct target_alert *alert, struct sl_err *err);

/* The same under the repository lock, recording (what a tick does at its start and end). */
int target_watch_locked(struct sl_ctx *ctx, struct target_alert *alert,
			struct sl_err *err);

/* sluice landed `commit` (hex) on the target: the last observed tip. Hold the lock. */
int target_landed(struct sl_ctx *ctx, const char *commit, struct sl_err *err);

/*
 * 0 when the target branch exists: a tick needs it (without it every run
 * would be claimed and fail to prepare, tick after tick). SL_EINVALID says
 * so (a config mistake, or the branch was deleted or renamed).
 */
int target_exists(struct sl_ctx *ctx, struct sl_err *err);

#endif
