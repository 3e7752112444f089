/*
 * The rivals of a conflict: the runs (or a person's commits) that last
 * changed the conflicting lines on the target (docs/builders.md, "The
 * rival"). git blame names the landings (merge/blame.c); the store says which
 * run landed each.
 */
#include "artifact/artifact_int.h"
#include "store/store.h"
#include "merge/merge.h"

#include <stdlib.h>
#include <string.h>

/* One landing as a rival: the run that landed it, or the person's commit. */
static json_t *landing_json(struct sl_ctx *ctx, const struct merge_landing *l)
{
	struct sl_err err = SL_ERR_INIT;
	char *run = NULL;
	json_t *j;

	if (store_run_by_landing(ctx->st, l->commit, &run, &err) != 0)
		sl_err_clear(&err);
	if (run)
		j = json_pack("{s:s, s:s, s:s}", "run", run, "landing", l->commit, "by", "lines");
	else
		j = json_pack("{s:{s:s, s:s, s:s}, s:s}", "person", "commit", l->commit, "author",
			      l->author, "subject", l->subject, "by", "lines");
	if (j) {
		json_object_set_new(j, "path", json_string(l->path));
		json_object_set_new(j, "line", json_integer((json_int_t)l->line));
		json_object_set_new(j, "lines", json_integer((json_int_t)l->lines));
	}
	free(run);
	return j;
}

/* The fallback: the runs the store says merged since `since_ms` and changed the files. */
static void file_rivals(struct sl_ctx *ctx, const char *run_id, const char *const *paths,
			size_t npaths, int64_t since_ms, json_t *out)
{
	struct sl_err err = SL_ERR_INIT;
	char **ids = NULL;
	size_t i;

	if (store_rivals(ctx->st, run_id, paths, npaths, since_ms, &ids, &err) != 0) {
		sl_err_clear(&err);
		return;
	}
	for (i = 0; ids && ids[i]; i++) {
		json_array_append_new(out, json_pack("{s:s, s:s}", "run", ids[i], "by", "file"));
		free(ids[i]);
	}
	free(ids);
}

json_t *artifact_conflict_rivals(struct sl_ctx *ctx, const char *run_id, const char *tip,
				 const char *head, const char *const *paths, size_t npaths,
				 int64_t since_ms, struct sl_err *warn)
{
	struct merge_landing *v = NULL;
	struct sl_err err = SL_ERR_INIT;
	json_t *out = json_array();
	size_t n = 0, i;

	if (tip && head && npaths &&
	    merge_blame_landings(ctx->repo.root, tip, head, paths, npaths, &v, &n, &err) != 0) {
		if (warn)
			sl_err_set(warn, SL_ERROR, "cannot blame the conflicting lines: %s", err.msg);
		sl_err_clear(&err);
	}
	for (i = 0; i < n; i++)
		json_array_append_new(out, landing_json(ctx, &v[i]));
	merge_landings_free(v, n);
	if (!json_array_size(out))
		file_rivals(ctx, run_id, paths, npaths, since_ms, out);
	return out;
}
