#ifndef SL_ARTIFACT_H
#define SL_ARTIFACT_H
/*
 * manifest.json (docs/audit.md, The manifest and the chain, schema/manifest.schema.json): the
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
 * and gc tombstones (.system/runs/<id>.gc, written by system_gc_apply()); the
 * writer holds the repository lock, so the newest merge is the last link.
 * The writer reads it from the store's index of the chain (table
 * manifest_chain, one row per manifest, recorded before the file; a
 * tombstone keeps its run's row), not from the files: one query, whatever
 * the number of runs. The files stay the authority: the audit reads them.
 */
#include <stddef.h>
#include <git2.h>
#include "core/err.h"
#include "core/repo.h"
#include "store/store.h"

#define ARTIFACT_MANIFEST_VERSION 1

/*
 * Write .system/runs/<run_id>/manifest.json, last and atomically. The
 * commits come from merge.json (falling back to the store's run row).
 * Call it right after merge.json is written, holding the repository lock.
 * Its link (hash, key, previous run) is recorded in the store first, then
 * the file is written; a database from before the index is filled from
 * the files once, on the first call. SL_ENOTFOUND: no such run or no
 * merge.json.
 */
int artifact_manifest_write(const struct sl_repo *repo, struct store *st, const char *run_id,
			  struct sl_err *err);

/* 1 when `rel` (a path relative to a run folder) names an artifact. */
int artifact_manifest_is_artifact(const char *rel);

/*
 * Remove from the run folder `run_dir` (never entered through a link) and
 * the folders in it (not its worktree/ nor a worktree.broken-* set aside)
 * what is no regular file: a link, a fifo, or a folder named like a file
 * sluice writes (gates.json), each logged as run `run_id`'s (sanitize.c).
 */
void artifact_sanitize_run_dir(const char *run_dir, const char *run_id);

struct artifact_hash {
	char *path;                        /* relative to the run folder */
	char sha256[65];
	long long size;
};

struct artifact_hashes {
	struct artifact_hash *v;    /* sorted by path (strcmp) */
	size_t n;
};

#define ARTIFACT_HASHES_INIT { NULL, 0 }

/*
 * Hash every artifact file under `run_dir`. *out is the caller's:
 * artifact_hashes_release(). A missing folder is SL_ENOTFOUND.
 */
int artifact_hash_files(const char *run_dir, struct artifact_hashes *out,
			  struct sl_err *err);
void artifact_hashes_release(struct artifact_hashes *a);

/* One link of the chain: a manifest.json or a gc tombstone. */
struct artifact_chain_link {
	char *run;
	char *merged_at;          /* ISO 8601 UTC, the merge.json time ("" if unknown) */
	char *previous_run;       /* NULL for the first link */
	char *previous_manifest;  /* sha256 hex, NULL for the first link */
	char sha256[65];          /* of the manifest.json (for a tombstone: as it was) */
	int removed;              /* 1: a gc tombstone, the folder is gone */
};

struct artifact_chain {
	struct artifact_chain_link *v; /* in merge order: by (merged_at, run) */
	size_t n;
};

#define ARTIFACT_CHAIN_INIT { NULL, 0 }

/*
 * Every link under repo->runs_dir (folders with a manifest.json that
 * parses, and <id>.gc tombstones), in merge order; `skip_run` (may be
 * NULL) is left out. merged_at comes from the run's merge.json when it
 * has one (else the manifest's own field). *out: artifact_chain_release().
 */
int artifact_chain_load(const struct sl_repo *repo, const char *skip_run, struct artifact_chain *out,
		      struct sl_err *err);
void artifact_chain_release(struct artifact_chain *c);

/* <runs_dir>/<run_id>.gc, the tombstone path (new string, the caller's). */
char *artifact_tombstone_path(const struct sl_repo *repo, const char *run_id);

/*
 * The newest merged run of runs (by finished_ms) when it has neither
 * manifest.json nor a tombstone: the one a merge killed before its
 * manifest left (its id, borrowed from runs), else NULL. An older merged
 * run without a manifest is never named: that is a finding for the audit.
 */
struct store_run;
const char *artifact_unsealed_newest(const struct sl_repo *repo, const struct store_run *runs,
				     size_t n);


/*
 * sluice audit (docs/audit.md, What `sluice audit` checks): prove that what was reviewed is what
 * was merged. For every merged run (or the ones named):
 *  - manifest.json exists, parses and names the run; every artifact's
 *    SHA-256 matches; no artifact is missing and none was added;
 *  - the chain: each manifest's previous_manifest is the SHA-256 of the
 *    previous merged run's manifest.json, in merge order (artifact/manifest.c);
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
 * The gate record (issue 12, docs/audit.md): a run that landed since the
 * merge train (the store_meta key train_since_ms; finished_ms not earlier)
 * has train.json, a green record whose commit, tree, base and head are its
 * merge commit, that commit's tree and first and second parent, every gate
 * passed. A run that landed before is a note, not a finding.
 *
 * Without runs named, also the other way (docs/audit.md): every commit of
 * the target's first-parent line, from its tip back to the oldest run's
 * base, that carries Sluice-Run: is that run's landing in the store and has
 * its manifest in the chain; back to the first tip sluice observed, every
 * other commit there is a landing, recorded as the user's, or from no run
 * (target/target.h); a merge there that brings a run's commit not landed by
 * sluice is a finding too.
 *
 * It only reads: the repository, the store and the run folders (the diff
 * is recomputed into a temporary file under $TMPDIR).
 */
#include <jansson.h>
#include "core/ctx.h"

struct artifact_audit_finding {
	char *run;
	char *what;    /* what is wrong */
	char *where;   /* the file, commit or ref concerned */
};

/* What the audit reports without failing: a landing before the train, a person's commit. */
struct artifact_audit_note {
	char *kind;    /* "before_train" or "person" */
	char *run;     /* the run, or the target for a person's commit */
	char *commit;  /* the commit on the target */
	char *what;
};

struct artifact_audit_result {
	struct artifact_audit_finding *v;
	size_t n;
	struct artifact_audit_note *notes;
	size_t nnotes;
	size_t gated;      /* landings whose green gate record (train.json) holds */
	size_t runs;       /* merged runs audited */
	size_t artifacts;  /* artifact files verified */
	size_t manifests;  /* links of the chain verified (manifests + tombstones) */
	size_t removed;    /* runs whose folder gc removed */
	size_t line;       /* commits of the target's first-parent line checked */
};

#define ARTIFACT_AUDIT_RESULT_INIT { NULL, 0, NULL, 0, 0, 0, 0, 0, 0, 0 }

/*
 * Audit the merged runs named in `runs` (ids or unique prefixes; nruns 0:
 * every merged run). Findings are not errors: the return value is 0 when
 * the audit ran (look at res->n), negative when it could not (a run named
 * that does not exist or is not merged: SL_ENOTFOUND / SL_EINVALID).
 * *res is the caller's: artifact_audit_result_release().
 */
int artifact_audit(struct sl_ctx *ctx, const char *const *runs, size_t nruns,
		 struct artifact_audit_result *res, struct sl_err *err);
void artifact_audit_result_release(struct artifact_audit_result *res);

/* The landing a gate record must describe: ids in hex. */
struct artifact_landing {
	const char *commit, *tree, *base, *head;
};

/*
 * Check a gate record (train.json, parsed; NULL when it does not parse)
 * against the landing git has: commit, tree, base and head equal (and
 * tested_commit and tested_base, when it has them: what was tested is what
 * landed), green, and every gate passed (passed true, exit 0, not timed
 * out). Calls
 * fn(arg, what) once per problem; returns how many there were.
 */
size_t artifact_train_record_check(json_t *train, const struct artifact_landing *l,
				   void (*fn)(void *arg, const char *what), void *arg);


/*
 * What people read about runs: one run's dossier (`sluice show`,
 * schema/show.schema.json) and the repository's report page (`sluice
 * report`: a self-contained HTML page and the work-order dependency graph
 * in Graphviz DOT). Both only read the store and the run folders.
 */
#include <jansson.h>
#include "core/buf.h"

/* How many bytes of a failed merge gate's output (its end) a dossier carries. */
#define ARTIFACT_DOSSIER_MARKERS_MAX 4096
/* The conflicted hunks shown (merge_conflict_info's, each with its context): at most this much. */
#define ARTIFACT_DOSSIER_HUNKS_MAX ((size_t)64 << 10)

/*
 * The dossier of one run (`run`: an id or a unique prefix): the work
 * order, the timeline of events with the time between them, the attempts
 * with their prompt, gates and verdict, the verdict with per-criterion
 * results, the diff stat, the conflict context summary, the merge, the
 * worktree, what to type next, and every artifact. *out is a new reference
 * (the caller's, json_decref()). SL_ENOTFOUND / SL_EAMBIGUOUS for `run`.
 */
int artifact_dossier(struct sl_ctx *ctx, const char *run, json_t **out, struct sl_err *err);
/*
 * One entry of a dossier's "watch" (a revert of watch_reverts the run plays
 * a part in: culprit, revert or fix) as one line for a person.
 */
void artifact_watch_line(json_t *e, char *out, size_t n);

/*
 * The rivals of the textual conflict of merging `head` into `tip` on
 * `paths` (artifact/rivals.c, docs/builders.md "The rival"): who last changed
 * the conflicting lines on the target (merge_blame_landings), each landing
 * mapped to the run that landed it, in the order git blame met them:
 *   {"run": ID, "by": "lines", "landing": HEX, "path": P, "line": N, "lines": K}
 *   {"person": {"commit": HEX, "author": "Name <mail>", "subject": S},
 *    "by": "lines", "path": P, "line": N, "lines": K}   (a commit no run landed)
 * When blame names nobody (the lines were removed on the target, a binary
 * file, git failed), the store's runs merged since `since_ms` (not
 * `run_id`) that changed the files, each {"run": ID, "by": "file"}.
 * A new array (maybe empty), never NULL. Why blame failed goes to *warn
 * (may be NULL), which the caller may log; the fallback is still given.
 */
json_t *artifact_conflict_rivals(struct sl_ctx *ctx, const char *run_id, const char *tip,
				 const char *head, const char *const *paths, size_t npaths,
				 int64_t since_ms, struct sl_err *warn);

/*
 * The report page: the queue (work orders, state, reason), the runs by
 * state, each run's timeline and the time spent per stage, and the
 * dependency graph as inline SVG. Everything HTML-escaped; no scripts, no
 * external assets. Appended to `out`.
 */
int artifact_report_html(struct sl_ctx *ctx, struct sl_buf *out, struct sl_err *err);

/*
 * HTML pages (artifact/html.c), for the report and `sluice serve`: an HTML
 * page written into a buffer whose first error sticks (p->error: SL_ERROR
 * when out of memory); text from outside is escaped for HTML text and
 * attributes, and its control characters, bidirectional overrides and bytes
 * that are not UTF-8 made visible as the CLI shows them (\n, \u202e, \xff).
 */
struct artifact_page {
	struct sl_buf *b;
	int error;
};
void artifact_put(struct artifact_page *p, const char *s);
void artifact_put_esc(struct artifact_page *p, const char *s);
/* The same, keeping line breaks and tabs (the text of a <pre>). */
void artifact_put_esc_lines(struct artifact_page *p, const char *s);
void artifact_putf(struct artifact_page *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A state's name on its colour (a run state or a work-order state). */
void artifact_badge(struct artifact_page *p, const char *state);
const char *artifact_state_color(const char *state);
/* Escape s into b for HTML: 0, or SL_ERROR when out of memory. */
int artifact_html_esc(struct sl_buf *b, const char *s);
/*
 * The escape of the character at *s when it is a control character, a
 * hidden one or not UTF-8 (1: written, *s advanced past it); 0 when it is
 * plain text the caller writes itself.
 */
int artifact_visible(struct sl_buf *b, const char **s, int *error);
/* The pages' style sheet. */
extern const char artifact_page_css[];
/* The work orders' dependency graph as an SVG section of page p (the report's). */
int artifact_graph_html(struct sl_ctx *ctx, struct artifact_page *p, struct sl_err *err);

/*
 * The merge gates' flake rate (store_gate_flakes(), flakes.c): an array of
 * {gate, trees, flaky, flake_rate} (flaky trees / trees run), by gate;
 * one element as words ("test flaky on 1 of 4 trees (25%)"); the table of
 * the report and the desk (nothing when no merge gate ran on a tree).
 */
json_t *artifact_flakes_json(struct sl_ctx *ctx);
void artifact_flake_words(const json_t *g, char *buf, size_t n);
/* The watch (docs/watch.md) as HTML: its newest runs, bisection steps, reverts and fix-ups. */
void artifact_watch_html(struct sl_ctx *ctx, struct artifact_page *p);
void artifact_flakes_html(struct sl_ctx *ctx, struct artifact_page *p);
/*
 * Where the known costs went (store_usage_split; docs/budgets.md):
 * {merged: {work_orders, cost_usd, per_work_order}, failed: {...},
 * rejected_usd, conflicts_usd, total_usd, estimate, rows}; null when the
 * store cannot say. The HTML is a table "What agents cost", nothing when
 * no attempt recorded usage (the report and the desk's queue page).
 */
json_t *artifact_spend_json(struct sl_ctx *ctx);
void artifact_spend_html(struct sl_ctx *ctx, struct artifact_page *p);

/* The work-order dependency graph in Graphviz DOT, appended to `out`. */
int artifact_report_dot(struct sl_ctx *ctx, struct sl_buf *out, struct sl_err *err);


/*
 * The commits of the runs (artifact/runset.c, shared by the audit and the target watch): for each run, the
 * commits reachable from what it recorded or left behind (its head, its
 * attempts' heads, its run/ branch, every entry of that branch's reflog and
 * of its worktree's HEAD reflog) and not from its base nor from `hide` (may
 * be NULL); a refs/sluice/ ref's own commit. Sorted by commit, each with its
 * run: what a run brought, as opposed to the target history it started from.
 */
struct artifact_runset_tip {
	git_oid id;
	git_oid base;
	int has_base;
	int own_only; /* a refs/sluice/ ref (a merge train car): its own commit, in a group of its own */
	char *run;
};

struct artifact_owned {
	git_oid id;
	const char *run; /* borrowed from the tips */
};

struct artifact_runset {
	struct artifact_owned *v;
	size_t n;
	struct artifact_runset_tip *tips; /* grouped by run */
	size_t ntips;
};

#define ARTIFACT_RUNSET_INIT { NULL, 0, NULL, 0 }

int artifact_runset_load(struct sl_ctx *ctx, git_repository *git, const git_oid *hide,
			struct artifact_runset *set, struct sl_err *err);
/* The run `id` came from (borrowed from set), or NULL: from no run. */
const char *artifact_runset_owner(const struct artifact_runset *set, const git_oid *id);
void artifact_runset_release(struct artifact_runset *set);

/* A growable list of commits (module-internal; free(v)). */
struct artifact_oids {
	git_oid *v;
	size_t n, cap;
};
int artifact_oids_add(struct artifact_oids *o, const git_oid *id); /* SL_ERROR: out of memory */

/* The trailer `key` of a parsed commit message, or NULL (borrowed from arr): runset.c. */
const char *artifact_trailer(const git_message_trailer_array *arr, const char *key);

#endif
