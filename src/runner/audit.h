#ifndef SL_RUNNER_AUDIT_H
#define SL_RUNNER_AUDIT_H
/*
 * sluice audit (DESIGN.md section 9): prove that what was reviewed is what
 * was merged. For every merged run (or the ones named):
 *  - manifest.json exists, parses and names the run; every artifact's
 *    SHA-256 matches; no artifact is missing and none was added;
 *  - the chain: each manifest's previous_manifest is the SHA-256 of the
 *    previous merged run's manifest.json, in merge order (runner/manifest.h);
 *  - base and head agree between the manifest, merge.json and the store,
 *    and diff.patch equals the diff git computes now from them;
 *  - the merge commit exists, is reachable from the target branch, has the
 *    run's head as its second parent and carries the trailers Work-Order,
 *    Sluice-Run and Reviewed-by of the run;
 *  - the tree of the second parent is the approved tree (the store's, the
 *    manifest's and the one the review request showed the reviewer);
 *  - sha256(work_order.md) is the revision the store says was run.
 * Runs whose folder gc removed (a tombstone .system/runs/<id>.gc) are
 * counted as removed and only their git checks run.
 *
 * Without runs named, also the other way (docs/audit.md): every commit of
 * the target's first-parent line, from its tip back to the oldest run's
 * base, that carries Sluice-Run: is that run's landing in the store and has
 * its manifest in the chain; back to the first tip sluice observed, every
 * other commit there is a landing, recorded as the user's, or from no run
 * (runner/target.h); a merge there that brings a run's commit not landed by
 * sluice is a finding too.
 *
 * It only reads: the repository, the store and the run folders (the diff
 * is recomputed into a temporary file under $TMPDIR).
 */
#include <stddef.h>
#include "runner/runner.h"

struct runner_audit_finding {
	char *run;
	char *what;    /* what is wrong */
	char *where;   /* the file, commit or ref concerned */
};

struct runner_audit_result {
	struct runner_audit_finding *v;
	size_t n;
	size_t runs;       /* merged runs audited */
	size_t artifacts;  /* artifact files verified */
	size_t manifests;  /* links of the chain verified (manifests + tombstones) */
	size_t removed;    /* runs whose folder gc removed */
	size_t line;       /* commits of the target's first-parent line checked */
};

#define RUNNER_AUDIT_RESULT_INIT { NULL, 0, 0, 0, 0, 0, 0 }

/*
 * Audit the merged runs named in `runs` (ids or unique prefixes; nruns 0:
 * every merged run). Findings are not errors: the return value is 0 when
 * the audit ran (look at res->n), negative when it could not (a run named
 * that does not exist or is not merged: SL_ENOTFOUND / SL_EINVALID).
 * *res is the caller's: runner_audit_result_release().
 */
int runner_audit(struct runner_ctx *ctx, const char *const *runs, size_t nruns,
		 struct runner_audit_result *res, struct sl_err *err);
void runner_audit_result_release(struct runner_audit_result *res);

#endif
