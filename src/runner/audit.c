/* sluice audit: verify merged runs' artifacts against their manifests, the chain and git. */
#include "runner/audit.h"
#include "runner/diff.h"
#include "runner/manifest.h"
#include "store/runs.h"
#include "core/fs.h"
#include "core/sha256.h"

#include <git2.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX ((size_t)16 << 20)

struct audit {
	struct runner_ctx *ctx;
	struct runner_audit_result *res;
	git_repository *git;
	struct runner_chain chain;
	const struct store_run *run;
	char *dir;
	json_t *manifest;  /* NULL when missing or malformed */
	json_t *merge;     /* merge.json, NULL when missing */
};

static void finding(struct audit *a, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void finding(struct audit *a, const char *where, const char *fmt, ...)
{
	struct runner_audit_finding *v;
	char what[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (!(v = realloc(a->res->v, (a->res->n + 1) * sizeof(*v))))
		return;
	a->res->v = v;
	v[a->res->n].run = strdup(a->run->id);
	v[a->res->n].what = strdup(what);
	v[a->res->n].where = strdup(where ? where : "");
	a->res->n++;
}

static json_t *read_json(const char *dir, const char *name)
{
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	char *path = sl_path_join(dir, name);
	json_t *j = NULL;

	if (path && sl_read_file(&b, path, JSON_MAX, &err) == 0)
		j = json_loadb(sl_buf_cstr(&b), b.len, 0, NULL);
	sl_buf_release(&b);
	free(path);
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
	return strcmp(key, ((const struct runner_artifact_hash *)elem)->path);
}

/* Every file listed with its hash; every file present is listed. */
static void check_artifacts(struct audit *a)
{
	struct runner_artifact_hashes h = RUNNER_ARTIFACT_HASHES_INIT;
	struct sl_err err = SL_ERR_INIT;
	json_t *arts = json_object_get(a->manifest, "artifacts"), *v;
	const char *path;
	size_t i;

	if (!json_is_object(arts)) {
		finding(a, "manifest.json", "manifest lists no artifacts");
		return;
	}
	if (runner_artifacts_hash(a->dir, &h, &err) != 0) {
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
	runner_artifact_hashes_release(&h);
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
	if (json_integer_value(json_object_get(a->manifest, "version")) != RUNNER_MANIFEST_VERSION)
		finding(a, "manifest.json", "manifest version is not %d", RUNNER_MANIFEST_VERSION);
	return 0;
}

/* The chain: this link points at the link before it in merge order. */
static void check_chain(struct audit *a)
{
	const struct runner_chain_link *l = NULL, *prev = NULL;
	size_t i;

	for (i = 0; i < a->chain.n && !l; i++)
		if (!strcmp(a->chain.v[i].run, a->run->id)) {
			l = &a->chain.v[i];
			prev = i ? &a->chain.v[i - 1] : NULL;
		}
	if (!l)
		return; /* no manifest: reported already */
	a->res->manifests++;
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
	char tmpl[] = "/tmp/sluice-audit.XXXXXX", *now = NULL, *patch = NULL;
	char h1[65], h2[65];
	const char *tmpdir = getenv("TMPDIR");
	struct sl_err err = SL_ERR_INIT;
	char *dir = NULL;

	if (!base || !head)
		return;
	if (tmpdir && *tmpdir && asprintf(&dir, "%s/sluice-audit.XXXXXX", tmpdir) < 0)
		dir = NULL;
	if (!mkdtemp(dir ? dir : tmpl)) {
		finding(a, "diff.patch", "cannot make a temporary folder to recompute the diff");
		goto out;
	}
	now = sl_path_join(dir ? dir : tmpl, "diff.patch");
	patch = sl_path_join(a->dir, "diff.patch");
	if (runner_diff_patch(a->ctx->repo.root, base, head, now, &err) != 0)
		finding(a, "diff.patch", "git cannot compute the diff %.12s..%.12s now: %s", base,
			head, err.msg);
	else if (sl_sha256_file(h1, patch, &err) != 0 || sl_sha256_file(h2, now, &err) != 0 ||
		 strcmp(h1, h2))
		finding(a, "diff.patch", "diff.patch is not the diff git computes now from %.12s to "
			"%.12s", base, head);
	sl_rm_rf(dir ? dir : tmpl, &err);
out:
	free(dir);
	free(now);
	free(patch);
}
