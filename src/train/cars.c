/*
 * The merge train's cars outside the decision (docs/design.md, The merge
 * train): a car's ref refs/sluice/train/<run-id>, the record a landing
 * leaves (train.json), and the tidying at the start of a tick (cars of
 * runs no longer approved or merging leave, refs' lock files a killed
 * sluice left go).
 */
#include "train/train.h"
#include "merge/merge.h"
#include "store/store.h"
#include "core/ctx.h"
#include "core/fs.h"
#include "core/git.h"
#include "core/log.h"

#include <dirent.h>
#include <git2.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * refs/sluice/train/<run-id> at `commit`, or deleted (commit NULL): git gc
 * keeps the car. Only sluice writes these refs, always under the
 * repository lock (which the caller holds): a lock file of one is what a
 * killed sluice left, and is removed first.
 */
int train_car_ref(struct sl_ctx *ctx, const char *run_id, const char *commit, struct sl_err *err)
{
	git_repository *repo = NULL;
	git_reference *ref = NULL;
	char *name = sl_path_fmt("refs/sluice/train/%s", run_id);
	char *lock = sl_path_fmt("%s/refs/sluice/train/%s.lock", ctx->repo.gitdir, run_id);
	git_oid oid;
	int rc;

	if (!name || !lock) {
		free(name);
		free(lock);
		return sl_err_set(err, SL_ERROR, "out of memory");
	}
	if (unlink(lock) == 0)
		sl_log(SL_LOG_WARN, "removed '%s', left by a killed sluice", lock);
	free(lock);
	if ((rc = git_repository_open(&repo, ctx->repo.root)) == 0) {
		if (commit && (rc = git_oid_fromstr(&oid, commit)) == 0)
			rc = git_reference_create(&ref, repo, name, &oid, 1, "sluice: merge train car");
		else if (!commit && (rc = git_reference_lookup(&ref, repo, name)) == 0)
			rc = git_reference_delete(ref);
		if (rc == GIT_ENOTFOUND && !commit)
			rc = 0;
	}
	git_reference_free(ref);
	git_repository_free(repo);
	free(name);
	return rc < 0 ? sl_err_git(err, rc, "cannot %s the merge train's ref of run '%s'",
				   commit ? "write" : "delete", run_id)
		      : 0;
}

/* train.json: what was tested and landed (docs/design.md, The merge train), from the car's record. */
/*
 * merge.lanes: a car of lanes records them and their paths; one whose test
 * stood through a rebuild (lane_commit) has them checked by the audit: the
 * tested tree and the landed one are the same on those paths.
 */
static int lanes_json(json_t *j, const struct sl_config *cfg, const struct store_car *c)
{
	json_t *names = json_array(), *paths = json_array();
	size_t i, k;

	for (i = 0; i < cfg->merge.nlanes; i++)
		if (c->lanes & ((int64_t)1 << i)) {
			json_array_append_new(names, json_string(cfg->merge.lanes[i].name));
			for (k = 0; cfg->merge.lanes[i].paths[k]; k++)
				json_array_append_new(paths, json_string(cfg->merge.lanes[i].paths[k]));
		}
	return json_object_set_new(j, "lanes", names) || json_object_set_new(j, "lane_paths", paths);
}

json_t *train_record_json(const struct sl_config *cfg, const struct store_car *c,
			  const struct merge_commit_result *mr)
{
	char commit[41], tree[41], base[41];
	struct store_gates g = { 0 };
	struct sl_err ignored = SL_ERR_INIT;
	json_t *gates, *j;
	int64_t ms = 0;
	size_t i;

	store_gates_parse(c->run_id, c->gates_json, &g, &ignored); /* logged there */
	gates = g.all ? json_incref(g.all) : json_array();
	for (i = 0; i < g.n; i++) {
		ms += g.v[i].duration_ms;
		json_object_del(g.v[i].json, "output");
	}
	store_gates_release(&g);
	git_oid_tostr(commit, sizeof(commit), &mr->commit);
	git_oid_tostr(tree, sizeof(tree), &mr->tree);
	git_oid_tostr(base, sizeof(base), &mr->tip);
	/* merge.batch: green by the test of a later car of its batch, which holds this commit */
	j = json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:s?, s:s*, s:s*, s:o, s:b, s:I, s:I, s:I}",
			 "commit", commit, "tree", tree, "base", base, "head", c->head, "ahead",
			 c->ahead, "tested_commit", c->covered_commit ? c->covered_commit :
			 c->lane_commit ? c->lane_commit : c->commit,
			 "covered_by", c->covered_by, "tested_base",
			 c->covered_commit || c->lane_commit ? NULL : c->base, "gates",
			 gates ? gates : json_array(), "green",
			 c->status == TRAIN_GREEN && !strcmp(c->commit ? c->commit : "", commit),
			 "tested_ms", (json_int_t)c->tested_ms, "started_ms",
			 (json_int_t)c->started_ms, "gates_ms", (json_int_t)ms);
	if (j && c->lanes && cfg->merge.nlanes && lanes_json(j, cfg, c)) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

/* Lock files under refs/sluice/train/: a killed sluice's (the repository lock is held). */
static void remove_car_ref_locks(struct sl_ctx *ctx)
{
	char *dir = sl_path_join(ctx->repo.gitdir, "refs/sluice/train"), *path;
	struct dirent *de;
	DIR *d;

	if (dir && (d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			size_t len = strlen(de->d_name);
			if (len > 5 && !strcmp(de->d_name + len - 5, ".lock") &&
			    (path = sl_path_join(dir, de->d_name)) != NULL) {
				if (unlink(path) == 0)
					sl_log(SL_LOG_WARN, "removed '%s', left by a killed sluice", path);
				free(path);
			}
		}
		closedir(d);
	}
	free(dir);
}

void train_tidy(struct sl_ctx *ctx, const struct store_run *runs, size_t n)
{
	struct store_car *cars = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t nc = 0, i, j;

	remove_car_ref_locks(ctx);
	if (store_train_list(ctx->st, ctx->target_ref, &cars, &nc, &err) != 0) {
		sl_log(SL_LOG_WARN, "cannot read the merge train: %s", err.msg);
		return;
	}
	for (i = 0; i < nc; i++) {
		for (j = 0; j < n && strcmp(runs[j].id, cars[i].run_id); j++)
			;
		if (j < n && (runs[j].state == RUN_APPROVED || runs[j].state == RUN_MERGING))
			continue;
		if (store_train_leave(ctx->st, cars[i].run_id, &err) != 0 ||
		    train_car_ref(ctx, cars[i].run_id, NULL, &err) != 0)
			sl_log(SL_LOG_WARN, "cannot take run %s out of the merge train: %s",
			       cars[i].run_id, err.msg);
		else
			sl_log(SL_LOG_INFO, "took run %s out of the merge train (%s)", cars[i].run_id,
			       j < n ? run_state_name(runs[j].state) : "no such run");
		sl_err_clear(&err);
	}
	store_cars_free(cars, nc);
}
