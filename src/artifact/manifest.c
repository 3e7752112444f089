/* manifest.json: the hashes of a merged run's artifacts, chained in merge order. */
#include "artifact/artifact.h"
#include "store/store.h"
#include "core/fault.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/sha256.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MANIFEST_MAX ((size_t)16 << 20)
#define ARTIFACTS_MAX 100000

int artifact_manifest_is_artifact(const char *rel)
{
	/* worktree/ and worktree.broken-<time>/ (set aside after a crash) are work trees */
	if (!strcmp(rel, "lock") || !strcmp(rel, "manifest.json") || !strcmp(rel, "child.owner") ||
	    !strncmp(rel, "worktree", 8))
		return 0;
	return strstr(rel, ".tmp.") == NULL;
}

static int push_hash(struct artifact_hashes *a, const char *rel, const char *abs,
		     long long size, struct sl_err *err)
{
	struct artifact_hash *v;
	int error;

	if (a->n >= ARTIFACTS_MAX)
		return sl_err_set(err, SL_ETOOBIG, "more than %d artifacts in one run folder",
				  ARTIFACTS_MAX);
	if (!(v = realloc(a->v, (a->n + 1) * sizeof(*v))))
		return sl_err_set(err, SL_ERROR, "out of memory");
	a->v = v;
	v = &a->v[a->n];
	memset(v, 0, sizeof(*v));
	if ((error = sl_sha256_file(v->sha256, abs, err)) != 0)
		return error;
	if (!(v->path = strdup(rel)))
		return sl_err_set(err, SL_ERROR, "out of memory");
	v->size = size;
	a->n++;
	return 0;
}

static int walk(const char *dir, const char *prefix, struct artifact_hashes *a,
		struct sl_err *err);

static int walk_entry(const char *dir, const char *prefix, const char *name,
		      struct artifact_hashes *a, struct sl_err *err)
{
	char *abs = sl_path_join(dir, name), *rel = NULL;
	struct stat st;
	int error = 0;

	if (!abs || asprintf(&rel, "%s%s", prefix, name) < 0) {
		rel = NULL;
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if (!artifact_manifest_is_artifact(rel) || lstat(abs, &st) < 0)
		goto out;
	if (S_ISDIR(st.st_mode)) {
		char *sub = NULL;
		if (asprintf(&sub, "%s/", rel) < 0)
			error = sl_err_set(err, SL_ERROR, "out of memory");
		else
			error = walk(abs, sub, a, err);
		free(sub);
	} else if (S_ISREG(st.st_mode)) {
		error = push_hash(a, rel, abs, (long long)st.st_size, err);
	}
out:
	free(abs);
	free(rel);
	return error;
}

static int walk(const char *dir, const char *prefix, struct artifact_hashes *a,
		struct sl_err *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int error = 0;

	if (!d)
		return sl_err_sys(err, errno, "cannot read run folder '%s'", dir);
	while (!error && (e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		error = walk_entry(dir, prefix, e->d_name, a, err);
	}
	closedir(d);
	return error;
}

static int cmp_hash(const void *x, const void *y)
{
	return strcmp(((const struct artifact_hash *)x)->path,
		      ((const struct artifact_hash *)y)->path);
}

int artifact_hash_files(const char *run_dir, struct artifact_hashes *out,
			  struct sl_err *err)
{
	int error;

	out->v = NULL;
	out->n = 0;
	if (!sl_is_dir(run_dir))
		return sl_err_set(err, SL_ENOTFOUND, "run folder '%s' does not exist", run_dir);
	if ((error = walk(run_dir, "", out, err)) != 0) {
		artifact_hashes_release(out);
		return error;
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_hash);
	return 0;
}

void artifact_hashes_release(struct artifact_hashes *a)
{
	size_t i;

	for (i = 0; a && i < a->n; i++)
		free(a->v[i].path);
	if (a) {
		free(a->v);
		a->v = NULL;
		a->n = 0;
	}
}

char *artifact_tombstone_path(const struct sl_repo *repo, const char *run_id)
{
	char *p = NULL;

	if (asprintf(&p, "%s/%s.gc", repo->runs_dir, run_id) < 0)
		return NULL;
	return p;
}

/* A JSON file (bounded) and the SHA-256 of its bytes; NULL when missing or malformed. */
static json_t *load_json(const char *path, char sha[65])
{
	struct sl_err err = SL_ERR_INIT;
	json_t *j = NULL;

	sl_json_read_sha(path, MANIFEST_MAX, &j, sha, &err);
	if (j && !json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

static char *jdup(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? strdup(s) : NULL;
}

static int link_from(struct artifact_chain_link *l, json_t *j, const char *run, const char *sha_key,
		     const char *merged_at)
{
	memset(l, 0, sizeof(*l));
	l->run = strdup(run);
	l->merged_at = strdup(merged_at ? merged_at : "");
	l->previous_run = jdup(j, "previous_run");
	l->previous_manifest = jdup(j, "previous_manifest");
	if (sha_key) {
		const char *s = json_string_value(json_object_get(j, sha_key));
		snprintf(l->sha256, sizeof(l->sha256), "%s", s ? s : "");
		l->removed = 1;
	}
	return l->run && l->merged_at ? 0 : -1;
}

/* The link of one entry of runs_dir: a run folder or a tombstone; 1 if none. */
static int load_link(const struct sl_repo *repo, const char *name, struct artifact_chain_link *l)
{
	char *path = NULL, sha[65], *run = NULL;
	json_t *j = NULL, *mj = NULL;
	size_t len = strlen(name);
	int rc = 1;

	if (len > 3 && !strcmp(name + len - 3, ".gc")) {
		if (!(path = sl_path_join(repo->runs_dir, name))) {
			rc = -1;
			goto out;
		}
		/* only merged runs that had a manifest are links of the chain */
		if ((j = load_json(path, NULL)) && (run = jdup(j, "run")) &&
		    json_string_value(json_object_get(j, "manifest_sha256")))
			rc = link_from(l, j, run, "manifest_sha256",
				       json_string_value(json_object_get(j, "merged_at")));
		goto out;
	}
	if (!(path = sl_path_fmt("%s/%s/manifest.json", repo->runs_dir, name))) {
		rc = -1;
		goto out;
	}
	if (!(j = load_json(path, sha)))
		goto out;
	free(path);
	if (!(path = sl_path_fmt("%s/%s/merge.json", repo->runs_dir, name))) {
		rc = -1;
		goto out;
	}
	mj = load_json(path, NULL);
	rc = link_from(l, j, name, NULL,
		       json_string_value(json_object_get(mj ? mj : j, "merged_at")));
	memcpy(l->sha256, sha, sizeof(sha));
out:
	free(path);
	free(run);
	json_decref(j);
	json_decref(mj);
	return rc;
}

static void link_release(struct artifact_chain_link *l)
{
	free(l->run);
	free(l->merged_at);
	free(l->previous_run);
	free(l->previous_manifest);
}

static int cmp_link(const void *x, const void *y)
{
	const struct artifact_chain_link *a = x, *b = y;
	int c = strcmp(a->merged_at, b->merged_at);

	return c ? c : strcmp(a->run, b->run);
}

int artifact_chain_load(const struct sl_repo *repo, const char *skip_run, struct artifact_chain *out,
		      struct sl_err *err)
{
	DIR *d = opendir(repo->runs_dir);
	struct dirent *e;
	struct artifact_chain_link l, *v;

	out->v = NULL;
	out->n = 0;
	if (!d)
		return sl_err_sys(err, errno, "cannot read '%s'", repo->runs_dir);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || load_link(repo, e->d_name, &l) != 0)
			continue;
		if ((skip_run && !strcmp(l.run, skip_run)) ||
		    !(v = realloc(out->v, (out->n + 1) * sizeof(*v)))) {
			link_release(&l);
			continue;
		}
		out->v = v;
		out->v[out->n++] = l;
	}
	closedir(d);
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_link);
	return 0;
}

void artifact_chain_release(struct artifact_chain *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++)
		link_release(&c->v[i]);
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

/* A commit field of merge.json, or the store's value. */
static const char *pick(json_t *mj, const char *key, const char *fallback)
{
	const char *s = json_string_value(json_object_get(mj, key));

	return s ? s : fallback;
}

static json_t *artifacts_json(const struct artifact_hashes *h)
{
	json_t *o = json_object();
	size_t i;

	for (i = 0; o && i < h->n; i++)
		json_object_set_new(o, h->v[i].path, json_string(h->v[i].sha256));
	return o;
}

static json_t *manifest_doc(const struct store_run *run, json_t *mj,
			    const struct artifact_hashes *h, const struct store_chain_link *prev)
{
	int first = !prev->run_id;

	return json_pack("{s:i, s:s, s:s, s:s?, s:s?, s:s?, s:s?, s:s?, s:s?, s:o, s:s?, s:s?}",
			 "version", ARTIFACT_MANIFEST_VERSION, "run", run->id, "work_order",
			 run->work_order_id, "base", pick(mj, "base", run->base_commit), "head",
			 pick(mj, "head", run->head_commit), "approved_tree",
			 pick(mj, "approved_tree", run->approved_tree), "merge_commit",
			 pick(mj, "merge_commit", run->merge_commit), "target",
			 pick(mj, "target", run->target), "merged_at", pick(mj, "merged_at", NULL),
			 "artifacts", artifacts_json(h), "previous_manifest",
			 first ? NULL : prev->sha256, "previous_run", first ? NULL : prev->run_id);
}

/*
 * A database that had runs before migration 006: record the chain the
 * files hold, once (the writer holds the repository lock).
 */
static int backfill(const struct sl_repo *repo, struct store *st, struct sl_err *err)
{
	struct artifact_chain c = ARTIFACT_CHAIN_INIT;
	struct store_chain_link *v = NULL;
	size_t i;
	int pending = 0, error;

	if ((error = store_chain_backfill_pending(st, &pending, err)) != 0 || !pending)
		return error;
	if ((error = artifact_chain_load(repo, NULL, &c, err)) != 0)
		return error;
	if (c.n && !(v = calloc(c.n, sizeof(*v)))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	for (i = 0; i < c.n; i++) { /* borrowed from c */
		v[i].run_id = c.v[i].run;
		v[i].merged_at = c.v[i].merged_at;
		v[i].previous_run = c.v[i].previous_run;
		memcpy(v[i].sha256, c.v[i].sha256, sizeof(v[i].sha256));
	}
	error = store_chain_backfill(st, v, c.n, err);
out:
	free(v);
	artifact_chain_release(&c);
	return error;
}

/* The previous link: the store's last one but this run's (prev->run_id NULL: none). */
static int previous_link(const struct sl_repo *repo, struct store *st, const char *run_id,
			 struct store_chain_link *prev, struct sl_err *err)
{
	int error = backfill(repo, st, err);

	memset(prev, 0, sizeof(*prev));
	if (!error && (error = store_chain_last(st, run_id, prev, err)) == SL_ENOTFOUND) {
		sl_err_clear(err);
		error = 0;
	}
	return error;
}

/*
 * The link first, then the file: a process killed between the two leaves a
 * merged run without manifest.json, which the next merge (or tick) seals
 * again with the same previous link (runner__seal_newest), replacing the row.
 */
static int seal(const struct sl_repo *repo, struct store *st, const struct store_run *run,
		json_t *doc, const struct store_chain_link *prev, const char *merged_at,
		struct sl_err *err)
{
	struct store_chain_link l;
	char *text = sl_json_format(doc), *path = sl_repo_run_path(repo, run->id, "manifest.json");
	int error;

	memset(&l, 0, sizeof(l));
	l.run_id = run->id;
	l.merged_at = (char *)(merged_at ? merged_at : "");
	l.previous_run = prev->run_id;
	if (!text || !path) {
		error = sl_err_set(err, SL_ERROR, "cannot build the manifest of run '%s'", run->id);
		goto out;
	}
	sl_sha256_hex(l.sha256, text, strlen(text));
	if ((error = store_chain_record(st, &l, err)) != 0)
		goto out;
	sl_fault("merge.after_chain");
	error = sl_write_file_atomic(path, text, strlen(text), err);
out:
	free(text);
	free(path);
	return error;
}

int artifact_manifest_write(const struct sl_repo *repo, struct store *st, const char *run_id,
			  struct sl_err *err)
{
	struct artifact_hashes h = ARTIFACT_HASHES_INIT;
	struct store_chain_link prev;
	struct store_run run;
	char *dir = NULL, *path = NULL;
	json_t *mj = NULL, *doc = NULL;
	int error;

	memset(&run, 0, sizeof(run));
	memset(&prev, 0, sizeof(prev));
	if ((error = store_run_get(st, run_id, &run, err)) != 0)
		goto out;
	dir = sl_repo_run_path(repo, run.id, NULL);
	path = sl_repo_run_path(repo, run.id, "merge.json");
	if (!dir || !path) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if (!(mj = load_json(path, NULL))) {
		error = sl_err_set(err, SL_ENOTFOUND,
				   "run '%s' has no readable merge.json; a manifest is written "
				   "only after the merge", run.id);
		goto out;
	}
	if ((error = artifact_hash_files(dir, &h, err)) != 0 ||
	    (error = previous_link(repo, st, run.id, &prev, err)) != 0)
		goto out;
	if (!(doc = manifest_doc(&run, mj, &h, &prev)))
		error = sl_err_set(err, SL_ERROR, "cannot build the manifest of run '%s'", run.id);
	else
		error = seal(repo, st, &run, doc, &prev, pick(mj, "merged_at", NULL), err);
out:
	artifact_hashes_release(&h);
	store_chain_link_release(&prev);
	store_run_release(&run);
	json_decref(mj);
	json_decref(doc);
	free(dir);
	free(path);
	return error;
}
