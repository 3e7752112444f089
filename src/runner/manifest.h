#ifndef SL_RUNNER_MANIFEST_H
#define SL_RUNNER_MANIFEST_H
/*
 * manifest.json (DESIGN.md section 9, schema/manifest.schema.json): the
 * SHA-256 of every artifact of a merged run, the commits it recorded, and
 * the hash of the previous merged run's manifest.json: a chain in merge
 * order.
 *
 * Artifacts: every regular file under .system/runs/<id>/, recursively,
 * except `lock` (an flock target), `worktree/`, manifest.json itself and
 * the temporaries of atomic writes (names containing ".tmp.").
 *
 * Merge order: the key of a link is (merged_at of merge.json, run id).
 * "Previous" is the link with the greatest key among the other manifests
 * and gc tombstones (.system/runs/<id>.gc, written by runner_gc); the
 * writer holds the repository lock, so the newest merge is the last link.
 */
#include <stddef.h>
#include "core/err.h"
#include "core/repo.h"
#include "store/store.h"

#define RUNNER_MANIFEST_VERSION 1

/*
 * Write .system/runs/<run_id>/manifest.json, last and atomically. The
 * commits come from merge.json (falling back to the store's run row).
 * Call it right after merge.json is written, holding the repository lock.
 * SL_ENOTFOUND: no such run or no merge.json.
 */
int runner_manifest_write(const struct sl_repo *repo, struct store *st, const char *run_id,
			  struct sl_err *err);

/* 1 when `rel` (a path relative to a run folder) names an artifact. */
int runner_manifest_is_artifact(const char *rel);

struct runner_artifact_hash {
	char *path;                        /* relative to the run folder */
	char sha256[65];
	long long size;
};

struct runner_artifact_hashes {
	struct runner_artifact_hash *v;    /* sorted by path (strcmp) */
	size_t n;
};

#define RUNNER_ARTIFACT_HASHES_INIT { NULL, 0 }

/*
 * Hash every artifact file under `run_dir`. *out is the caller's:
 * runner_artifact_hashes_release(). A missing folder is SL_ENOTFOUND.
 */
int runner_artifacts_hash(const char *run_dir, struct runner_artifact_hashes *out,
			  struct sl_err *err);
void runner_artifact_hashes_release(struct runner_artifact_hashes *a);

/* One link of the chain: a manifest.json or a gc tombstone. */
struct runner_chain_link {
	char *run;
	char *merged_at;          /* ISO 8601 UTC, the merge.json time ("" if unknown) */
	char *previous_run;       /* NULL for the first link */
	char *previous_manifest;  /* sha256 hex, NULL for the first link */
	char sha256[65];          /* of the manifest.json (for a tombstone: as it was) */
	int removed;              /* 1: a gc tombstone, the folder is gone */
};

struct runner_chain {
	struct runner_chain_link *v; /* in merge order: by (merged_at, run) */
	size_t n;
};

#define RUNNER_CHAIN_INIT { NULL, 0 }

/*
 * Every link under repo->runs_dir (folders with a manifest.json that
 * parses, and <id>.gc tombstones), in merge order; `skip_run` (may be
 * NULL) is left out. merged_at comes from the run's merge.json when it
 * has one (else the manifest's own field). *out: runner_chain_release().
 */
int runner_chain_load(const struct sl_repo *repo, const char *skip_run, struct runner_chain *out,
		      struct sl_err *err);
void runner_chain_release(struct runner_chain *c);

/* <runs_dir>/<run_id>.gc, the tombstone path (new string, the caller's). */
char *runner_tombstone_path(const struct sl_repo *repo, const char *run_id);

#endif
