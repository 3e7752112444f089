/* sluice audit: verify merged runs' artifacts against their manifests, the chain and git. */
#include "artifact/artifact.h"
#include "worktree/worktree.h"
#include "store/store.h"
#include "merge/merge.h"
#include "core/config.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/sha256.h"

#include <git2.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX ((size_t)16 << 20)

struct audit {
	struct sl_ctx *ctx;
	struct artifact_audit_result *res;
	git_repository *git;
	struct artifact_chain chain;
	const struct store_run *run;
	char *dir;
	json_t *manifest;  /* NULL when missing or malformed */
	json_t *merge;     /* merge.json, NULL when missing */
	int64_t train_since_ms; /* store_meta train_since_ms; -1: none (every landing before the train) */
};

static void add_finding(struct audit *a, const char *run, const char *where, const char *what)
{
	struct artifact_audit_finding *v;

	if (!(v = realloc(a->res->v, (a->res->n + 1) * sizeof(*v))))
		return;
	a->res->v = v;
	v[a->res->n].run = strdup(run);
	v[a->res->n].what = strdup(what);
	v[a->res->n].where = strdup(where ? where : "");
	a->res->n++;
}

static void add_note(struct audit *a, const char *kind, const char *run, const char *commit,
		     const char *what)
{
	struct artifact_audit_note *v;

	if (!(v = realloc(a->res->notes, (a->res->nnotes + 1) * sizeof(*v))))
		return;
	a->res->notes = v;
	v[a->res->nnotes].kind = strdup(kind);
	v[a->res->nnotes].run = strdup(run);
	v[a->res->nnotes].commit = strdup(commit);
	v[a->res->nnotes].what = strdup(what);
	a->res->nnotes++;
}

static void finding(struct audit *a, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void finding(struct audit *a, const char *where, const char *fmt, ...)
{
	char what[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	add_finding(a, a->run->id, where, what);
}

/* A finding about the target's history: named by the run concerned, or the target. */
static void target_finding(struct audit *a, const char *run, const char *where,
			   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void target_finding(struct audit *a, const char *run, const char *where,
			   const char *fmt, ...)
{
	char what[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	add_finding(a, run ? run : a->ctx->cfg->target, where, what);
}

static json_t *read_json_any(const char *dir, const char *name)
{
	struct sl_err err = SL_ERR_INIT;
	char *path = sl_path_join(dir, name);
	json_t *j = NULL;

	if (path)
		sl_json_read(path, JSON_MAX, &j, &err);
	free(path);
	return j;
}

static json_t *read_json(const char *dir, const char *name)
{
	json_t *j = read_json_any(dir, name);

	if (j && !json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

static const char *jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static int same(const char *x, const char *y)
{
	return x && y && !strcmp(x, y);
}

static int cmp_path(const void *key, const void *elem)
{
	return strcmp(key, ((const struct artifact_hash *)elem)->path);
}

/* Every file listed with its hash; every file present is listed. */
static void check_artifacts(struct audit *a)
{
	struct artifact_hashes h = ARTIFACT_HASHES_INIT;
	struct sl_err err = SL_ERR_INIT;
	json_t *arts = json_object_get(a->manifest, "artifacts"), *v;
	const char *path;
	size_t i;

	if (!json_is_object(arts)) {
		finding(a, "manifest.json", "manifest lists no artifacts");
		return;
	}
	if (artifact_hash_files(a->dir, &h, &err) != 0) {
		finding(a, a->dir, "cannot hash the artifacts: %s", err.msg);
		return;
	}
	for (i = 0; i < h.n; i++) {
		const char *want = jstr(arts, h.v[i].path);
		if (!want)
			finding(a, h.v[i].path, "artifact not in the manifest (added after the merge)");
		else if (strcmp(want, h.v[i].sha256))
			finding(a, h.v[i].path, "artifact changed since the manifest (sha256 %.12s, "
				"manifest says %.12s)", h.v[i].sha256, want);
	}
	json_object_foreach(arts, path, v) {
		if (!h.n || !bsearch(path, h.v, h.n, sizeof(*h.v), cmp_path))
			finding(a, path, "artifact missing (listed in the manifest)");
		a->res->artifacts++;
	}
	artifact_hashes_release(&h);
}

/* The manifest itself: there, parses, names this run. */
static int check_manifest(struct audit *a)
{
	char *path = sl_path_join(a->dir, "manifest.json");
	int present = path && sl_path_exists(path);

	free(path);
	if (!present) {
		finding(a, "manifest.json", "manifest missing");
		return -1;
	}
	if (!(a->manifest = read_json(a->dir, "manifest.json"))) {
		finding(a, "manifest.json", "manifest does not parse as a JSON object");
		return -1;
	}
	if (!same(jstr(a->manifest, "run"), a->run->id)) {
		finding(a, "manifest.json", "manifest names run '%s', not this one (moved or swapped)",
			jstr(a->manifest, "run") ? jstr(a->manifest, "run") : "(none)");
	}
	if (json_integer_value(json_object_get(a->manifest, "version")) != ARTIFACT_MANIFEST_VERSION)
		finding(a, "manifest.json", "manifest version is not %d", ARTIFACT_MANIFEST_VERSION);
	return 0;
}

/* The link the store recorded when the manifest was sealed: the file is that one. */
static void check_recorded(struct audit *a, const struct artifact_chain_link *l)
{
	struct store_chain_link rec;
	struct sl_err err = SL_ERR_INIT;

	if (store_chain_get(a->ctx->st, a->run->id, &rec, &err) != 0)
		return; /* none: sealed before the store kept the chain (or missing: reported) */
	if (!same(rec.sha256, l->sha256))
		finding(a, l->removed ? "gc tombstone" : "manifest.json", "manifest is not the one "
			"sealed at the merge: its sha256 is %.12s, the store recorded %.12s",
			l->sha256, rec.sha256);
	store_chain_link_release(&rec);
}

/* The chain: this link points at the link before it in merge order. */
static void check_chain(struct audit *a)
{
	const struct artifact_chain_link *l = NULL, *prev = NULL;
	size_t i;

	for (i = 0; i < a->chain.n && !l; i++)
		if (!strcmp(a->chain.v[i].run, a->run->id)) {
			l = &a->chain.v[i];
			prev = i ? &a->chain.v[i - 1] : NULL;
		}
	if (!l)
		return; /* no manifest: reported already */
	a->res->manifests++;
	check_recorded(a, l);
	if (!prev && (l->previous_run || l->previous_manifest))
		finding(a, "manifest.json", "manifest chain broken: it names previous run '%s', but "
			"no run merged before this one has a manifest",
			l->previous_run ? l->previous_run : "(none)");
	else if (prev && !same(l->previous_run, prev->run))
		finding(a, "manifest.json", "manifest chain broken: previous_run is '%s', but the run "
			"merged before this one is '%s'", l->previous_run ? l->previous_run : "null",
			prev->run);
	else if (prev && !same(l->previous_manifest, prev->sha256))
		finding(a, "manifest.json", "manifest chain broken: previous_manifest is not the "
			"sha256 of run '%s''s manifest.json", prev->run);
}

/* One recorded value agrees in the store, the manifest and merge.json. */
static const char *agree(struct audit *a, const char *what, const char *stored, const char *key)
{
	const char *m = a->manifest ? jstr(a->manifest, key) : NULL;
	const char *mj = a->merge ? jstr(a->merge, key) : NULL;

	if (a->manifest && !same(stored, m))
		finding(a, "manifest.json", "%s differs: store says %.12s, manifest says %.12s",
			what, stored ? stored : "(none)", m ? m : "(none)");
	if (a->merge && !same(stored, mj))
		finding(a, "merge.json", "%s differs: store says %.12s, merge.json says %.12s", what,
			stored ? stored : "(none)", mj ? mj : "(none)");
	return stored;
}

/* diff.patch is what git computes now from the recorded base and head. */
static void check_diff(struct audit *a, const char *base, const char *head)
{
	const char *tmp = getenv("TMPDIR");
	struct sl_err err = SL_ERR_INIT;
	char *dir = NULL, *now = NULL, *patch = NULL, h1[65], h2[65];

	if (!base || !head)
		return;
	if (asprintf(&dir, "%s/sluice-audit.XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0)
		dir = NULL;
	if (!dir || !mkdtemp(dir)) {
		finding(a, "diff.patch", "cannot make a temporary folder to recompute the diff");
		goto out;
	}
	now = sl_path_join(dir, "diff.patch");
	patch = sl_path_join(a->dir, "diff.patch");
	if (worktree_diff_patch(a->ctx->repo.root, base, head, now, &err) != 0)
		finding(a, "diff.patch", "git cannot compute the diff %.12s..%.12s now: %s", base,
			head, err.msg);
	else if (sl_sha256_file(h1, patch, &err) != 0 || sl_sha256_file(h2, now, &err) != 0 ||
		 strcmp(h1, h2))
		finding(a, "diff.patch", "diff.patch is not the diff git computes now from %.12s to "
			"%.12s", base, head);
	sl_rm_rf(dir, &err);
out:
	free(dir);
	free(now);
	free(patch);
}

static void check_trailers(struct audit *a, const git_commit *c, const char *mc)
{
	git_message_trailer_array arr = { 0 };
	const char *want[3][2] = { { "Work-Order", a->run->work_order_id },
				   { MERGE_TRAILER_RUN, a->run->id },
				   { "Reviewed-by", a->run->reviewer } };
	size_t i;

	if (git_message_trailers(&arr, git_commit_message(c)) != 0) {
		finding(a, mc, "merge commit message has no trailers");
		return;
	}
	for (i = 0; i < 3; i++) {
		const char *got = artifact_trailer(&arr, want[i][0]);
		if (!got)
			finding(a, mc, "merge commit lacks the %s: trailer", want[i][0]);
		else if (want[i][1] && strcmp(got, want[i][1]))
			finding(a, mc, "merge commit says %s: %s, the run says %s", want[i][0], got,
				want[i][1]);
	}
	git_message_trailer_array_free(&arr);
}

/* The tree of the merged head is the tree the reviewer approved. */
static void check_tree(struct audit *a, const git_commit *head, const char *mc)
{
	char tree[GIT_OID_HEXSZ + 1];
	json_t *req = a->dir ? read_json(a->dir, "review-request.json") : NULL;
	json_t *rev = a->dir ? read_json(a->dir, "review.json") : NULL;
	const char *approved = agree(a, "approved tree", a->run->approved_tree, "approved_tree");
	const char *seen = req ? jstr(req, "tree") : NULL, *said = rev ? jstr(rev, "tree") : NULL;

	git_oid_tostr(tree, sizeof(tree), git_commit_tree_id(head));
	if (!same(approved, tree))
		finding(a, mc, "the merged head's tree %.12s is not the approved tree %.12s", tree,
			approved ? approved : "(none)");
	if (req && !same(seen, tree))
		finding(a, "review-request.json",
			"the reviewer was shown tree %.12s, but %.12s was merged",
			seen ? seen : "(none)", tree);
	if (said && strcmp(said, tree))
		finding(a, "review.json", "the verdict approved tree %.12s, but %.12s was merged",
			said, tree);
	json_decref(req);
	json_decref(rev);
}

static int reachable(struct audit *a, const git_oid *mc)
{
	git_oid tip;

	if (git_reference_name_to_id(&tip, a->git, a->run->target) != 0)
		return 0;
	return git_oid_equal(&tip, mc) || git_graph_descendant_of(a->git, &tip, mc) == 1;
}

/*
 * 1 when `c`'s tree is what sluice's merge of its two parents makes (the
 * merge stays in memory: nothing is written). A forged merge commit with
 * the run's parents and trailers but a tree of its own is found here.
 */
static int tree_is_merge(struct audit *a, const git_commit *c)
{
	git_commit *p1 = NULL, *p2 = NULL;
	git_index *idx = NULL;
	git_tree *tree = NULL;
	git_diff *diff = NULL;
	git_merge_options mo;
	int yes = 0;

	git_merge_options_init(&mo, GIT_MERGE_OPTIONS_VERSION);
	if (git_commit_parent(&p1, c, 0) == 0 && git_commit_parent(&p2, c, 1) == 0 &&
	    git_merge_commits(&idx, a->git, p1, p2, &mo) == 0 && !git_index_has_conflicts(idx) &&
	    git_commit_tree(&tree, c) == 0 &&
	    git_diff_tree_to_index(&diff, a->git, tree, idx, NULL) == 0)
		yes = git_diff_num_deltas(diff) == 0;
	git_error_clear();
	git_diff_free(diff);
	git_tree_free(tree);
	git_index_free(idx);
	git_commit_free(p2);
	git_commit_free(p1);
	return yes;
}

/* s cut to 12 characters when it is an object id in hex, else a word saying it is not. */
static const char *oid_or(char out[13], const char *s)
{
	size_t n = s ? strspn(s, "0123456789abcdef") : 0;

	if (!s)
		return "(none)";
	if (n != GIT_OID_HEXSZ || s[n])
		return "(not an object id)";
	memcpy(out, s, 12);
	out[12] = 0;
	return out;
}

/* A gate's name when it is short plain text, for a message. */
static const char *gate_name(json_t *g)
{
	const char *n = json_string_value(json_object_get(g, "name")), *p;

	for (p = n; p && *p; p++)
		if (*p <= ' ' || *p > '~')
			return "(unnamed)";
	return n && *n && p - n <= 64 ? n : "(unnamed)";
}

/* The gates of a record that did not pass; n counts them. */
static size_t red_gates(json_t *gates, void (*fn)(void *, const char *), void *arg)
{
	char what[256];
	size_t i, n = 0;
	json_t *g, *ex;

	json_array_foreach(gates, i, g) {
		ex = json_object_get(g, "exit_code");
		if (json_is_true(json_object_get(g, "passed")) && json_is_integer(ex) &&
		    !json_integer_value(ex) && !json_is_true(json_object_get(g, "timed_out")))
			continue;
		if (json_is_true(json_object_get(g, "timed_out")))
			snprintf(what, sizeof(what), "red gate %s (timed out)", gate_name(g));
		else if (json_is_integer(ex))
			snprintf(what, sizeof(what), "red gate %s (exit %lld)", gate_name(g),
				 (long long)json_integer_value(ex));
		else
			snprintf(what, sizeof(what), "red gate %s (no exit status)", gate_name(g));
		fn(arg, what);
		n++;
	}
	return n;
}

size_t artifact_train_record_check(json_t *t, const struct artifact_landing *l,
				   void (*fn)(void *arg, const char *what), void *arg)
{
	static const char *const key[4] = { "commit", "tree", "base", "head" };
	static const char *const is[4] = { "the merge commit is", "the merge commit's tree is",
					   "its first parent is", "its second parent is" };
	const char *want[4] = { l->commit, l->tree, l->base, l->head }, *got;
	char what[256], g[13], w[13];
	size_t i, n = 0;

	if (!json_is_object(t)) {
		fn(arg, "the gate record does not parse as a JSON object");
		return 1;
	}
	for (i = 0; i < 4; i++) {
		if (same(got = json_string_value(json_object_get(t, key[i])), want[i]))
			continue;
		snprintf(what, sizeof(what), "%s differs: the gate record says %s, %s %s", key[i],
			 oid_or(g, got), is[i], oid_or(w, want[i]));
		fn(arg, what);
		n++;
	}
	/* what was tested is what landed, when the record says what was tested */
	for (i = 0; i < 2; i++) {
		json_t *v = json_object_get(t, i ? "tested_base" : "tested_commit");
		/* a batch's covered landing: its tested commit is a later one (check_covered());
		 * a lane's, one on another tip (check_lanes()) */
		if (!v || same(json_string_value(v), want[i ? 2 : 0]) ||
		    (!i && json_is_string(json_object_get(t, "covered_by"))) ||
		    (!i && json_array_size(json_object_get(t, "lane_paths"))))
			continue;
		snprintf(what, sizeof(what), "the tested %s %s is not %s %s", i ? "base" : "commit",
			 oid_or(g, json_string_value(v)), i ? "its first parent" : "the merge commit",
			 oid_or(w, want[i ? 2 : 0]));
		fn(arg, what);
		n++;
	}
	if (!json_is_true(json_object_get(t, "green"))) {
		fn(arg, "the gate record is not green");
		n++;
	}
	if (!json_is_array(json_object_get(t, "gates"))) {
		fn(arg, "the gate record has no list of gates");
		return n + 1;
	}
	return n + red_gates(json_object_get(t, "gates"), fn, arg);
}

static void train_problem(void *arg, const char *what)
{
	finding(arg, "train.json", "%s", what);
}

/* The store's store_meta train_since_ms, or -1 (a store without it: every landing is older). */
static int64_t train_since(struct sl_ctx *ctx)
{
	struct sl_err err = SL_ERR_INIT;
	char *v = NULL, *end = NULL;
	int64_t ms = -1;

	if (store_meta_get(ctx->st, "train_since_ms", &v, &err) == 0 && v && *v)
		ms = strtoll(v, &end, 10);
	if (end && *end)
		ms = -1;
	free(v);
	return ms;
}

/*
 * A landing a batch's green covered (docs/audit.md): the tested commit
 * holds the merge commit on its first-parent line, a few cars behind it
 * (at most merge.batch's bound). 0, or 1 with a finding.
 */
static int check_covered(struct audit *a, json_t *t, const git_commit *c)
{
	const char *tested = json_string_value(json_object_get(t, "tested_commit"));
	git_commit *at = NULL, *up;
	git_oid oid;
	int steps, found = 0;

	if (!json_is_string(json_object_get(t, "covered_by")))
		return 0;
	if (tested && git_oid_fromstr(&oid, tested) == 0 &&
	    git_commit_lookup(&at, a->git, &oid) == 0)
		for (steps = 0; at && steps <= SL_TRAIN_BATCH_MAX && !found; steps++) {
			found = git_oid_equal(git_commit_id(at), git_commit_id(c));
			up = NULL;
			if (!found && git_commit_parentcount(at) > 0)
				git_commit_parent(&up, at, 0);
			git_commit_free(at);
			at = up;
		}
	git_commit_free(at);
	if (found)
		return 0;
	finding(a, "train.json", "the covering tested commit %.12s does not hold the merge commit "
		"%s on its first-parent line within %d commits", tested ? tested : "(none)",
		git_oid_tostr_s(git_commit_id(c)), SL_TRAIN_BATCH_MAX);
	return 1;
}

/* 1 when path matches one of the record's lane_paths globs. */
static int in_lane_paths(json_t *globs, const char *path)
{
	size_t i;
	json_t *g;

	json_array_foreach(globs, i, g)
		if (json_is_string(g) && sl_path_glob(json_string_value(g), path))
			return 1;
	return 0;
}

/*
 * The paths trees a and b differ on (old and new names) whose being in
 * lane_paths is `inside`: at most one named in a finding; the count.
 */
static int lane_paths_off(struct audit *a, json_t *globs, const git_tree *ta, const git_tree *tb,
			  int inside, const char *what)
{
	git_diff *diff = NULL;
	size_t i, n;
	int bad = 0;

	if (git_diff_tree_to_tree(&diff, a->git, (git_tree *)ta, (git_tree *)tb, NULL) != 0) {
		finding(a, "train.json", "cannot compare the trees of %s", what);
		return 1;
	}
	for (i = 0, n = git_diff_num_deltas(diff); i < n; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		const char *p = in_lane_paths(globs, d->old_file.path) == inside ? d->old_file.path :
				in_lane_paths(globs, d->new_file.path) == inside ? d->new_file.path : NULL;
		if (p && !bad++)
			finding(a, "train.json", "%s: '%.200s' %s", what, p, inside ?
				"is in the lane's paths" : "is outside the lane's paths");
	}
	git_diff_free(diff);
	return bad;
}

/*
 * A lane's landing tested on another tip (docs/audit.md): the tested
 * commit's tree and the landed one are the same on the lane's paths, and
 * the landing changed nothing outside them. 0, or 1 with findings.
 */
static int check_lanes(struct audit *a, json_t *t, const git_commit *c)
{
	const char *tested = json_string_value(json_object_get(t, "tested_commit"));
	json_t *globs = json_object_get(t, "lane_paths");
	git_commit *tc = NULL, *parent = NULL;
	git_tree *tt = NULL, *ct = NULL, *pt = NULL;
	git_oid oid;
	int bad = 0;

	if (!tested || !strcmp(tested, git_oid_tostr_s(git_commit_id(c))) ||
	    json_is_string(json_object_get(t, "covered_by")))
		return 0;
	if (!json_array_size(globs))
		return 0; /* no lane: artifact_train_record_check() found it */
	if (git_oid_fromstr(&oid, tested) || git_commit_lookup(&tc, a->git, &oid) ||
	    git_commit_tree(&tt, tc) || git_commit_tree(&ct, c) ||
	    git_commit_parent(&parent, c, 0) || git_commit_tree(&pt, parent)) {
		finding(a, "train.json", "the lane's tested commit %.12s cannot be read", tested);
		bad = 1;
	} else {
		bad = lane_paths_off(a, globs, tt, ct, 1, "the tested tree and the landed one differ "
				     "in the lane") +
		      lane_paths_off(a, globs, pt, ct, 0, "the landing changed a path outside its "
				     "lanes");
	}
	git_tree_free(tt);
	git_tree_free(ct);
	git_tree_free(pt);
	git_commit_free(parent);
	git_commit_free(tc);
	return bad != 0;
}

/*
 * The gate record of the landing `c`: train.json (the manifest already
 * verified its hash) describes exactly this merge commit, green. A run that
 * landed before the train is a note instead.
 */
static void check_train(struct audit *a, const git_commit *c, const char *mc)
{
	char commit[GIT_OID_HEXSZ + 1], tree[GIT_OID_HEXSZ + 1], base[GIT_OID_HEXSZ + 1],
		head[GIT_OID_HEXSZ + 1];
	struct artifact_landing l = { commit, tree, base, head };
	char *path = sl_path_join(a->dir, "train.json");
	int present = path && sl_path_exists(path);
	int before = a->train_since_ms < 0 || a->run->finished_ms < a->train_since_ms;
	json_t *t;

	free(path);
	if (before)
		add_note(a, "before_train", a->run->id, mc, present ?
			 "landed before the merge train: its gate record is not required" :
			 "landed before the merge train: no gate record");
	if (!present) {
		if (!before)
			finding(a, "train.json", "missing gate record: no green gate record for the "
				"tree %.12s of merge commit %.12s", git_oid_tostr_s(git_commit_tree_id(c)),
				mc);
		return;
	}
	git_oid_tostr(commit, sizeof(commit), git_commit_id(c));
	git_oid_tostr(tree, sizeof(tree), git_commit_tree_id(c));
	git_oid_tostr(base, sizeof(base), git_commit_parent_id(c, 0));
	git_oid_tostr(head, sizeof(head), git_commit_parent_id(c, 1));
	t = read_json(a->dir, "train.json");
	if (artifact_train_record_check(t, &l, train_problem, a) + check_covered(a, t, c) +
		    check_lanes(a, t, c) == 0 &&
	    !before)
		a->res->gated++;
	json_decref(t);
}

/* The merge commit: exists, on the target, second parent = head, trailers, tree. */
static void check_merge_commit(struct audit *a, const char *head)
{
	const char *mc = agree(a, "merge commit", a->run->merge_commit, "merge_commit");
	git_commit *c = NULL, *p2 = NULL;
	git_oid oid;

	if (!mc || git_oid_fromstr(&oid, mc) != 0 || git_commit_lookup(&c, a->git, &oid) != 0) {
		finding(a, mc ? mc : "runs.merge_commit", "merge commit does not exist");
		goto out;
	}
	if (!reachable(a, &oid))
		finding(a, a->run->target, "merge commit %.12s is not reachable from the target "
			"(history rewritten?)", mc);
	check_trailers(a, c, mc);
	if (git_commit_parentcount(c) != 2 || git_commit_parent(&p2, c, 1) != 0) {
		finding(a, mc, "merge commit does not have two parents");
		goto out;
	}
	if (head && strncmp(git_oid_tostr_s(git_commit_id(p2)), head, GIT_OID_HEXSZ))
		finding(a, mc, "the merge commit's second parent %.12s is not the run head %.12s",
			git_oid_tostr_s(git_commit_id(p2)), head);
	check_tree(a, p2, mc);
	if (!tree_is_merge(a, c))
		finding(a, mc, "the merge commit's tree %.12s is not the merge of its parents (sluice "
			"did not make it: changed content beside the reviewed head)",
			git_oid_tostr_s(git_commit_tree_id(c)));
	if (a->dir && sl_is_dir(a->dir))
		check_train(a, c, mc);
out:
	git_commit_free(p2);
	git_commit_free(c);
}

/* work_order.md holds the bytes of the revision the store says was run. */
static void check_work_order(struct audit *a)
{
	struct sl_err err = SL_ERR_INIT;
	char *path = sl_path_join(a->dir, "work_order.md"), h[65];

	if (path && sl_sha256_file(h, path, &err) == 0 && !same(h, a->run->wo_content_hash))
		finding(a, "work_order.md", "work order bytes are not the revision run (sha256 "
			"%.12s, the store says %.12s)", h, a->run->wo_content_hash);
	free(path);
}

static void audit_one(struct audit *a, const struct store_run *run)
{
	char *tomb = artifact_tombstone_path(&a->ctx->repo, run->id);
	const char *base, *head;

	a->run = run;
	a->dir = sl_repo_run_path(&a->ctx->repo, run->id, NULL);
	a->res->runs++;
	if (a->dir && !sl_is_dir(a->dir) && tomb && sl_path_exists(tomb)) {
		a->res->removed++;
		free(a->dir);
		a->dir = NULL;
		check_chain(a);
		check_merge_commit(a, run->head_commit);
		goto out;
	}
	if (a->dir && !sl_is_dir(a->dir)) {
		finding(a, a->dir, "run folder missing (and no gc tombstone says gc removed it)");
		check_merge_commit(a, run->head_commit);
		goto out;
	}
	if (check_manifest(a) == 0)
		check_artifacts(a);
	a->merge = read_json(a->dir, "merge.json");
	check_chain(a);
	base = agree(a, "base commit", run->base_commit, "base");
	head = agree(a, "head commit", run->head_commit, "head");
	check_diff(a, base, head);
	check_merge_commit(a, head);
	check_work_order(a);
out:
	json_decref(a->manifest);
	json_decref(a->merge);
	a->manifest = a->merge = NULL;
	free(a->dir);
	a->dir = NULL;
	free(tomb);
}

struct red_ctx {
	struct audit *a;
	const char *run, *hex;
};

static void red_finding(void *arg, const char *what)
{
	struct red_ctx *r = arg;

	target_finding(r->a, r->run, r->hex, "the merge train tested run %s red (train/gates.json): "
		       "%s", r->run, what);
}

/* A Sluice-Run merge that is no landing: what the train said of the run (`run`: a stored id). */
static void no_gate_record(struct audit *a, const char *run, const char *hex, const git_oid *tree)
{
	struct red_ctx r = { a, run, hex };
	char *dir = run ? sl_repo_run_path(&a->ctx->repo, run, NULL) : NULL;
	json_t *g = dir && sl_is_dir(dir) ? read_json_any(dir, "train/gates.json") : NULL;

	target_finding(a, run, hex, "no green gate record for the tree %.12s of this merge commit: "
		       "it did not land through the merge train", git_oid_tostr_s(tree));
	if (json_is_array(g))
		red_gates(g, red_finding, &r);
	json_decref(g);
	free(dir);
}

/* A Sluice-Run merge on the target: the store has it as that run's landing, the chain has its manifest. */
static void check_sluice_merge(struct audit *a, const git_commit *c, const char *hex,
			       const char *run_id)
{
	struct store_run r;
	struct sl_err err = SL_ERR_INIT;
	const char *t = a->ctx->cfg->target;
	int landing = 0;
	size_t i;

	memset(&r, 0, sizeof(r));
	if (store_run_get(a->ctx->st, run_id, &r, &err) != 0 || strcmp(r.id, run_id))
		target_finding(a, run_id, hex, "merge commit on '%s' carries Sluice-Run: %s, but the "
			       "store has no run %s (a landing deleted from the store?)", t, run_id,
			       run_id);
	else if (r.state != RUN_MERGED)
		target_finding(a, run_id, hex, "merge commit on '%s' carries Sluice-Run: %s, but the "
			       "store says run %s is %s, not merged", t, run_id, run_id,
			       run_state_name(r.state));
	else if (!same(r.merge_commit, hex))
		target_finding(a, run_id, hex, "merge commit on '%s' carries Sluice-Run: %s, but the "
			       "store records merge commit %.12s for that run", t, run_id,
			       r.merge_commit ? r.merge_commit : "(none)");
	else
		landing = 1;
	/* a landing in the store: the run's own audit checks its manifest and the chain */
	for (i = 0; !landing && i < a->chain.n; i++)
		if (!strcmp(a->chain.v[i].run, run_id))
			landing = 1;
	if (!landing)
		target_finding(a, run_id, hex, "merge commit on '%s' of run %s is not in the "
			       "manifest chain (no manifest.json or gc tombstone of that run)", t,
			       run_id);
	if (!same(r.merge_commit, hex) || r.state != RUN_MERGED)
		no_gate_record(a, same(r.id, run_id) ? r.id : NULL, hex, git_commit_tree_id(c));
	store_run_release(&r);
}

/* 1 if the commit is a landing in the store or recorded as the user's. */
static int accounted(struct audit *a, const char *hex)
{
	struct sl_err err = SL_ERR_INIT;
	char *run = NULL;
	int rc = store_landing_run(a->ctx->st, hex, &run, &err);

	free(run);
	if (rc == 0)
		return 1;
	return store_user_commit_has(a->ctx->st, a->ctx->target_ref, hex, &err) == 1;
}

/* A commit on the line without Sluice-Run: 1 when it came from a run sluice did not land. */
static int unreviewed(struct audit *a, const struct artifact_runset *set, const git_commit *c,
		      const char *hex)
{
	const char *t = a->ctx->cfg->target, *run;
	char phex[GIT_OID_HEXSZ + 1];
	unsigned int i;
	int found = 0;

	if (accounted(a, hex))
		return 0;
	if ((run = artifact_runset_owner(set, git_commit_id(c)))) {
		target_finding(a, run, hex, "commit on '%s' came from run %s, and sluice did not land "
			       "it (unreviewed): reset '%s' to before it or 'sluice accept-target "
			       "%s'", t, run, t, hex);
		return 1;
	}
	for (i = 1; i < git_commit_parentcount(c); i++) {
		git_oid_tostr(phex, sizeof(phex), git_commit_parent_id(c, i));
		if (accounted(a, phex) ||
		    !(run = artifact_runset_owner(set, git_commit_parent_id(c, i))))
			continue;
		target_finding(a, run, hex, "merge on '%s' brings commit %.12s of run %s, which "
			       "sluice did not land (unreviewed): reset '%s' to before it or "
			       "'sluice accept-target %s'", t, phex, run, t, hex);
		found = 1;
	}
	return found;
}

/*
 * One commit of the target's first-parent line. from_runs: also check that
 * it is not from a run (only after the first tip sluice observed); person:
 * then a commit that is neither a landing nor from a run is a person's (a
 * note: no gate record, no failure).
 */
static void check_line_commit(struct audit *a, const struct artifact_runset *set,
			      const struct merge_line_commit *lc, int from_runs, int person)
{
	if (lc->run)
		check_sluice_merge(a, lc->commit, lc->hex, lc->run);
	else if (from_runs && !unreviewed(a, set, lc->commit, lc->hex) && person)
		add_note(a, "person", a->ctx->cfg->target, lc->hex,
			 "a person's commit (no " MERGE_TRAILER_RUN ": trailer): no gate record");
	git_error_clear();
}

/* Where the line's Sluice-Run check may stop: the oldest run's base, when there is one. */
static int oldest_base(struct audit *a, git_oid *out)
{
	struct store_run *runs = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0, i;
	int found = 0;

	if (store_runs_list(a->ctx->st, RUN_STATES_ALL, NULL, &runs, &n, &err) == 0)
		for (i = n; i-- > 0 && !found;) /* newest first: the oldest is last */
			found = runs[i].base_commit && git_oid_fromstr(out, runs[i].base_commit) == 0;
	store_runs_free(runs, n);
	return found;
}

/*
 * The target's first-parent line, from its tip back to the oldest run's base
 * (or the whole line): every Sluice-Run merge is a landing the store and the
 * chain know; and back to the first tip sluice observed (the root), every
 * commit is a landing, the user's, or from no run at all.
 */
static int audit_target(struct audit *a, struct sl_err *err)
{
	struct artifact_runset set = ARTIFACT_RUNSET_INIT;
	struct merge_line_opts lo = MERGE_LINE_OPTS_INIT;
	struct merge_line line = MERGE_LINE_INIT;
	struct merge_line_commit lc;
	char *root = NULL, *last = NULL;
	git_oid tip, rid, stop;
	int error, have_root = 0, from_runs = 1;

	if ((error = git_reference_name_to_id(&tip, a->git, a->ctx->target_ref)) != 0) {
		git_error_clear();
		return 0; /* no target: the per-run checks say what is missing */
	}
	if (store_target_get(a->ctx->st, a->ctx->target_ref, &root, &last, err) == 0)
		have_root = git_oid_fromstr(&rid, root) == 0;
	sl_err_clear(err);
	/*
	 * What precedes both the oldest run's base and the root was there
	 * before any run and before sluice watched: the walk ends once both
	 * were walked (or the one there is; the whole line when neither is).
	 */
	lo.tip = &tip;
	lo.until[0] = oldest_base(a, &stop) ? &stop : NULL;
	lo.until[1] = have_root ? &rid : NULL;
	if ((error = artifact_runset_load(a->ctx, a->git, have_root ? &rid : NULL, &set, err)) != 0)
		goto out;
	if ((error = merge_line_open(&line, a->git, &lo)) != 0) {
		error = sl_err_git(err, error, "cannot walk the target '%s'", a->ctx->cfg->target);
		goto out;
	}
	while (merge_line_next(&line, &lc)) {
		if (have_root && git_oid_equal(lc.id, &rid))
			from_runs = 0;
		check_line_commit(a, &set, &lc, from_runs, from_runs && have_root);
		a->res->line++;
	}
	git_error_clear();
out:
	merge_line_close(&line);
	artifact_runset_release(&set);
	free(root);
	free(last);
	return error;
}

/* The runs to audit: the named ones (each must be merged), or every merged run, oldest first. */
static int pick_runs(struct sl_ctx *ctx, const char *const *names, size_t nn,
		     struct store_run **out, size_t *n, struct sl_err *err)
{
	size_t i;
	int error;

	if (!nn) {
		if ((error = store_runs_list(ctx->st, RUN_SET(RUN_MERGED), NULL, out, n, err)) != 0)
			return error;
		for (i = 0; i < *n / 2; i++) {
			struct store_run t = (*out)[i];
			(*out)[i] = (*out)[*n - 1 - i];
			(*out)[*n - 1 - i] = t;
		}
		return 0;
	}
	if (!(*out = calloc(nn, sizeof(**out))))
		return sl_err_set(err, SL_ERROR, "out of memory");
	for (*n = 0; *n < nn; (*n)++) {
		if ((error = store_run_get(ctx->st, names[*n], &(*out)[*n], err)) != 0)
			return error;
		if ((*out)[*n].state != RUN_MERGED)
			return sl_err_set(err, SL_EINVALID, "run '%s' is %s, not merged; audit "
					  "verifies merged runs only", (*out)[*n].id,
					  run_state_name((*out)[*n].state));
	}
	return 0;
}

int artifact_audit(struct sl_ctx *ctx, const char *const *runs, size_t nruns,
		 struct artifact_audit_result *res, struct sl_err *err)
{
	struct audit a;
	struct store_run *list = NULL;
	size_t n = 0, i;
	int error;

	memset(&a, 0, sizeof(a));
	memset(res, 0, sizeof(*res));
	a.ctx = ctx;
	a.res = res;
	a.train_since_ms = train_since(ctx);
	if ((error = pick_runs(ctx, runs, nruns, &list, &n, err)) != 0)
		goto out;
	if ((error = git_repository_open(&a.git, ctx->repo.root)) != 0) {
		error = sl_err_git(err, error, "cannot open the repository '%s'", ctx->repo.root);
		goto out;
	}
	if ((error = artifact_chain_load(&ctx->repo, NULL, &a.chain, err)) != 0)
		goto out;
	for (i = 0; i < n; i++)
		audit_one(&a, &list[i]);
	if (!nruns)
		error = audit_target(&a, err);
out:
	artifact_chain_release(&a.chain);
	git_repository_free(a.git);
	store_runs_free(list, nruns ? nruns : n);
	return error;
}

void artifact_audit_result_release(struct artifact_audit_result *res)
{
	size_t i;

	for (i = 0; i < res->n; i++) {
		free(res->v[i].run);
		free(res->v[i].what);
		free(res->v[i].where);
	}
	free(res->v);
	for (i = 0; i < res->nnotes; i++) {
		free(res->notes[i].kind);
		free(res->notes[i].run);
		free(res->notes[i].commit);
		free(res->notes[i].what);
	}
	free(res->notes);
	memset(res, 0, sizeof(*res));
}
