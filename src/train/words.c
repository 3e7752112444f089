/*
 * The reasons a run shows in the train outside train_decide()
 * (docs/ARCHITECTURE.md, The merge train): its car under test, a join
 * refused under queue.overlap: fatal, a landing held because the target
 * carries the run's head by a move sluice did not make. Pure: the words
 * only, the runner says them. Scripts and tests grep them: keep them.
 */
#include "train/train.h"

#include <stdio.h>

void train_testing_reason(char *buf, size_t n, int pos, int total, const char *ahead_name,
			  const char *gate_names)
{
	snprintf(buf, n, "in the train: car %d of %d, testing on top of %s (gates: %s)", pos, total,
		 ahead_name, gate_names);
}

void train_overlap_reason(char *buf, size_t n, const char *paths, const char *wo,
			  const char *rival, int landed)
{
	snprintf(buf, n, "queue.overlap is fatal: %s also changed by %s (run %s), which %s; "
		 "nothing was merged", paths, wo, rival,
		 landed ? "landed first" : "is ahead in the merge train");
}

void train_held_reason(char *buf, size_t n, const char *target, const char *commit,
		       const char *run)
{
	snprintf(buf, n, "merge held: the target '%s' carries commit %.12s from run %s that sluice "
		 "did not land (unreviewed); reset '%s' to before it or run 'sluice accept-target "
		 "%s'", target, commit, run && run[0] ? run : "(unknown)", target, commit);
}
