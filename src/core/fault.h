#ifndef SL_CORE_FAULT_H
#define SL_CORE_FAULT_H
/*
 * Named fault points, for crash tests only (docs/sluice.1, ENVIRONMENT).
 *
 *   SLUICE_FAULT=<name>[:<n>][,<name>[:<n>]...]
 *
 * makes the process kill itself with SIGKILL the n-th time (default: the
 * first) it reaches the point `name`, after one log line at error level
 * ("fault point 'NAME' reached"), so that a test can tell the fault fired.
 * Counts are per process: each run's worker is a process of its own. The
 * variable is read once; with it unset a point costs a pthread_once check.
 *
 * With SLUICE_FAULT_GROUP=1 as well, the whole process group dies (kill(0)),
 * when a sluice process leads it (sluice started with setsid): a tick with
 * all its workers at once, as in a power cut. Builders and gates run in
 * groups of their own and outlive it, as after a kill -9 of sluice alone.
 *
 * A point is one line, sl_fault("<step>.<where>"), at the place the table
 * names. Every name here has a kill test (tests/cli/t075x-faults-*.sh, which
 * reads this table: keep one name per line, in this form; tick.spawn's is
 * t0850-tick-workers.sh, job.after_submit's t1114-slurm-submit-kill.sh and
 * t1115-k8s-submit-kill.sh).
 *
 *   name                          where the process dies
 *   claim.after_claim             tick: a run claimed (row committed), no worker started yet
 *   prepare.before_worktree_add   base recorded, no worktree or branch made yet
 *   prepare.before_populate       worktree entry and branch made, its files not checked out
 *   prepare.after_worktree_add    worktree complete, no shared or copied path yet
 *   prepare.after_environment     worktree.share and .copy done, worktree.setup not run
 *   prepare.after_setup           worktree.setup ran, setup.done not written
 *   build.before_builder          prompt written and attempt recorded, builder not started
 *   build.after_builder           builder exited, nothing it left committed yet
 *   build.after_snapshot          snapshot committed on the run branch, head not recorded
 *   build.after_diff              diff.patch and files changed recorded, still building
 *   gates.before_gate             before each gate starts
 *   gates.after_gate              after each gate exited, gates.json not written
 *   gates.after_all               every gate ran and gates.json written, run still gating
 *   review.before_request         review-request.json written, reviewer not asked
 *   review.after_verdict          verdict received, nothing of it stored
 *   review.after_record           review.json written, the run not yet moved by it
 *   train.after_car               a car's merge commit made, recorded and under its ref, gates not run
 *   train.rerun                   a merge gate red on the car's tree, recorded; its rerun not started
 *   train.after_gates             the merge gates ran on the car, their result not recorded
 *   train.after_result            the car's result (green or red) recorded, the run not moved on
 *   train.before_land             a green front car, the run merging, the landing not started
 *   merge.before_merge            repository lock held, before git's merge of a car
 *   merge.after_commit            merge commit object made, no journal, checkout or ref move
 *   merge.mid_checkout            bringing the checked-out target along, some files written
 *   merge.after_checkout_files    the merge's files written in the checkout, its index not (lock held)
 *   merge.index_in_lock           the merged index written into index.lock, not yet renamed to index
 *   merge.after_checkout          checkout brought along (journal kept), target ref not moved
 *   merge.after_ref_move          target ref moved, journal not removed, store not told
 *   merge.before_store            merge done and journal removed, merge.json not written
 *   merge.after_merge_json        merge.json written, the run not marked merged
 *   merge.after_store             run and work order marked merged, no manifest.json
 *   merge.after_chain             the manifest's link recorded in the store, no manifest.json
 *   merge.after_manifest          manifest.json written, worktree and branch still there
 *   cleanup.after_worktree_remove a final run's worktree removed, its branch not deleted yet
 *   pool.put_intent               a final run's worktree going to the pool: intent written, nothing moved
 *   pool.put_moved                its directory in .system/pool, its .git/worktrees entry not renamed
 *   pool.take_intent              a run taking a pooled worktree: intent written, nothing moved
 *   pool.take_moved               the directory moved to the run, its entry not renamed
 *   pool.take_half_linked         entry renamed, the worktree's .git names it, its gitdir not yet
 *   pool.take_relinked            entry renamed and linked, the run's branch and files not set
 *   pool.take_adopted             on the run's branch, marked for reset, the intent not removed
 *   pool.take_before_reset        no intent, the lock released, index cleaned, files not reset yet
 *   pool.take_recycled            reset and cleaned, the mark not removed
 *   resolve.after_markers         target merged into the run worktree (markers in files)
 *   resolve.after_resolver        resolver (builder in resolve mode) exited, nothing committed
 *   resolve.after_commit          resolution merge committed, head not recorded
 *   abandon.after_save            sluice abandon: worktree saved and diff recorded, not removed
 *   abandon.after_remove          sluice abandon: worktree removed, run not marked abandoned
 *   retry.after_save              sluice retry of a failed run: worktree saved, run not queued
 *   retry.after_resolution        sluice retry of a merge_conflict: resolution committed only
 *   gc.after_worktree             sluice gc: a run's worktree removed, its branch not deleted
 *   gc.after_branch               sluice gc: branch deleted, no tombstone written
 *   gc.after_tombstone            sluice gc: tombstone written, run folder not removed
 *   reconcile.after_requeue       tick: a dead run requeued, cleanups not done
 *   reconcile.before_recover      tick: the journal of a dead merge found, checkout not recovered
 *   job.after_submit              a job submitted to the engine, its id not recorded (row: its name)
 *   tick.spawn                    tick: starting a run's worker fails instead (sl_fault_fail)
 *   watch.after_culprit           sluice watch: a landing named and recorded, no revert staged
 *   watch.after_stage             sluice watch: revert and fix-up staged in .system/watch, not recorded
 *   watch.after_record            sluice watch: the revert recorded, its work orders not in the inbox
 *
 * A point marked sl_fault_fail does not kill: the operation there fails
 * (the caller reports an injected failure) the n-th time, so that a test
 * can check what happens when it cannot be done.
 */
#include <stddef.h>

/*
 * Die with SIGKILL here when SLUICE_FAULT names `name` (and this is its n-th
 * time). NULL is no point: sl_fault(error ? NULL : "x.y") keeps a point that
 * depends on an outcome on one line.
 */
void sl_fault(const char *name);

/*
 * 1 when SLUICE_FAULT names `name` and this is its n-th time, after the same
 * log line ("fault point 'NAME' reached"): the caller then fails as if the
 * operation there had failed. 0 otherwise (and for NULL).
 */
int sl_fault_fail(const char *name);

/*
 * A libgit2 checkout progress callback (git_checkout_progress_cb) that is
 * the point merge.mid_checkout: reached once some, not all, files are written.
 */
void sl_fault_checkout_progress(const char *path, size_t completed, size_t total, void *payload);

#endif
