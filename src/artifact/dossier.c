/* sluice show: one run's dossier as a JSON document (schema/show.schema.json). */
#include "artifact/artifact_int.h"
#include "worktree/worktree.h"
#include "store/store.h"
#include "merge/merge.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define ARTIFACT_JSON_MAX ((size_t)16 << 20)
#define PATCH_MAX ((size_t)256 << 20)

json_t *artifact__iso_or_null(int64_t ms)
{
	char when[40];

	if (ms <= 0)
		return json_null();
	sl_time_iso(when, sizeof(when), ms);
	return json_string(when);
}

json_t *artifact__str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *json_or_empty(json_t *s)
{
	return s ? s : json_string("");
}

static json_t *read_json_file(const char *dir, const char *name)
{
	struct sl_err err = SL_ERR_INIT;
	char *path = sl_path_join(dir, name);
	json_t *j = NULL;

	if (path)
		sl_json_read(path, ARTIFACT_JSON_MAX, &j, &err);
	free(path);
	return j;
}

/* The work order from the store (SELECT only). */
static json_t *wo_json(struct sl_ctx *ctx, const char *wo_id)
{
	sqlite3_stmt *s = NULL;
	json_t *j = json_pack("{s:s, s:n, s:n, s:n, s:n}", "id", wo_id, "title", "path", "state",
			      "reason");

	if (sqlite3_prepare_v2(store_db(ctx->st),
			       "SELECT title, path, state, reason FROM work_orders WHERE id = ?1",
			       -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_bind_text(s, 1, wo_id, -1, SQLITE_STATIC) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW) {
		static const char *const keys[] = { "title", "path", "state", "reason" };
		int i;
		for (i = 0; i < 4; i++)
			json_object_set_new(j, keys[i],
					    json_string((const char *)sqlite3_column_text(s, i)));
	}
	sqlite3_finalize(s);
	return j;
}

static json_t *timeline_json(struct sl_ctx *ctx, const char *run_id)
{
	struct store_event *ev = NULL;
	struct sl_err err = SL_ERR_INIT;
	json_t *a = json_array();
	size_t n = 0, i;

	if (store_events_list(ctx->st, run_id, 0, &ev, &n, &err) != 0)
		return a;
	for (i = 0; i < n; i++)
		json_array_append_new(
			a, json_pack("{s:o, s:I, s:o, s:o, s:s, s:I}", "at", artifact__iso_or_null(ev[i].at_ms), "at_ms",
				     (json_int_t)ev[i].at_ms, "from", artifact__str_or_null(ev[i].from_state),
				     "to", artifact__str_or_null(ev[i].to_state), "reason",
				     ev[i].reason ? ev[i].reason : "", "after_ms",
				     (json_int_t)(i ? ev[i].at_ms - ev[i - 1].at_ms : 0)));
	store_events_free(ev, n);
	return a;
}

static json_t *attempt_json(sqlite3_stmt *s, const char *run_dir)
{
	int n = sqlite3_column_int(s, 0);
	char prompt[64], gates[64], review[64], *ppath;
	json_t *j;

	snprintf(prompt, sizeof(prompt), "attempts/%d/prompt.md", n);
	snprintf(gates, sizeof(gates), "attempts/%d/gates.json", n);
	snprintf(review, sizeof(review), "attempts/%d/review.json", n);
	ppath = sl_path_join(run_dir, prompt);
	j = json_pack("{s:i, s:s, s:o, s:o, s:o, s:s, s:o, s:o, s:o, s:o}", "n", n, "mode",
		      (const char *)sqlite3_column_text(s, 1), "started_at",
		      artifact__iso_or_null(sqlite3_column_int64(s, 2)), "finished_at", artifact__iso_or_null(sqlite3_column_int64(s, 3)),
		      "builder_exit", sqlite3_column_type(s, 4) == SQLITE_NULL
					      ? json_null() : json_integer(sqlite3_column_int(s, 4)),
		      "outcome", (const char *)sqlite3_column_text(s, 5), "head",
		      artifact__str_or_null((const char *)sqlite3_column_text(s, 6)), "prompt",
		      ppath && sl_path_exists(ppath) ? json_string(ppath) : json_null(), "gates",
		      json_null(), "review", json_null());
	if (j) {
		json_t *g = read_json_file(run_dir, gates), *r = read_json_file(run_dir, review);
		json_object_set_new(j, "gates", g ? g : json_null());
		json_object_set_new(j, "review", r ? r : json_null());
		json_object_set_new(j, "agent", artifact__str_or_null(
						    (const char *)sqlite3_column_text(s, 7)));
		json_object_set_new(j, "session", artifact__str_or_null(
						      (const char *)sqlite3_column_text(s, 8)));
		if (sqlite3_column_type(s, 3) != SQLITE_NULL)
			json_object_set_new(j, "duration_ms",
					    json_integer(sqlite3_column_int64(s, 3) -
							 sqlite3_column_int64(s, 2)));
	}
	free(ppath);
	return j;
}

/* The run's jobs on an engine (executor, docs/scale-out.md), oldest first: [] with none. */
static json_t *jobs_json(struct sl_ctx *ctx, const char *run_id)
{
	struct store_job *v = NULL;
	struct sl_err err = SL_ERR_INIT;
	json_t *a = json_array();
	size_t n = 0;

	if (store_jobs_of_run(ctx->st, run_id, &v, &n, &err) != 0)
		return a;
	for (size_t i = 0; a && i < n; i++)
		json_array_append_new(a, json_pack("{s:s, s:s, s:i, s:o, s:o, s:o, s:s}", "handle",
						   v[i].handle, "purpose", v[i].purpose, "attempt",
						   v[i].attempt, "submitted_at",
						   artifact__iso_or_null(v[i].submitted_at), "ended_at",
						   artifact__iso_or_null(v[i].ended_at), "outcome",
						   artifact__str_or_null(v[i].outcome), "refs",
						   v[i].refs));
	store_jobs_free(v, n);
	return a;
}

static json_t *attempts_json(struct sl_ctx *ctx, const char *run_id, const char *run_dir)
{
	sqlite3_stmt *s = NULL;
	json_t *a = json_array();

	if (sqlite3_prepare_v2(store_db(ctx->st),
			       "SELECT n, mode, started_ms, finished_ms, builder_exit, outcome, "
			       "head_commit, agent, session FROM attempts WHERE run_id = ?1 "
			       "ORDER BY n",
			       -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_bind_text(s, 1, run_id, -1, SQLITE_STATIC) == SQLITE_OK)
		while (sqlite3_step(s) == SQLITE_ROW)
			json_array_append_new(a, attempt_json(s, run_dir));
	sqlite3_finalize(s);
	return a;
}

/* One file's section of diff.patch: "diff --git a/X b/Y" up to the next. */
struct stat_file {
	json_t *j;
	json_int_t add, del;
};

static void stat_flush(struct stat_file *f, json_t *files, json_int_t *add, json_int_t *del)
{
	if (!f->j)
		return;
	json_object_set_new(f->j, "insertions", json_integer(f->add));
	json_object_set_new(f->j, "deletions", json_integer(f->del));
	json_array_append_new(files, f->j);
	*add += f->add;
	*del += f->del;
	f->j = NULL;
	f->add = f->del = 0;
}

static void stat_line(struct stat_file *f, const char *line, size_t len, int *in_hunk)
{
	if (len > 11 && !strncmp(line, "diff --git ", 11)) {
		const char *b = memmem(line, len, " b/", 3);
		f->j = json_pack("{s:s%, s:b}", "path", b ? b + 3 : line + 11,
				 b ? (size_t)(line + len - b - 3) : len - 11, "binary", 0);
		*in_hunk = 0;
	} else if (!f->j) {
		return;
	} else if (len >= 2 && !strncmp(line, "@@", 2)) {
		*in_hunk = 1;
	} else if (!strncmp(line, "GIT binary patch", len < 16 ? len : 16) && len >= 16) {
		json_object_set_new(f->j, "binary", json_true());
	} else if (*in_hunk && len && line[0] == '+') {
		f->add++;
	} else if (*in_hunk && len && line[0] == '-') {
		f->del++;
	}
}

/* A `git diff --stat`-like summary of diff.patch. */
static json_t *diffstat_of_patch(const char *run_dir)
{
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	struct stat_file f = { NULL, 0, 0 };
	json_t *files = json_array();
	json_int_t add = 0, del = 0;
	char *path = sl_path_join(run_dir, "diff.patch");
	const char *p, *end, *nl;
	int in_hunk = 0;

	if (!path || sl_read_file(&b, path, PATCH_MAX, &err) != 0) {
		free(path);
		sl_buf_release(&b);
		json_decref(files);
		return json_null();
	}
	for (p = sl_buf_cstr(&b), end = p + b.len; p < end; p = nl + 1) {
		if (!(nl = memchr(p, '\n', (size_t)(end - p))))
			nl = end;
		stat_line(&f, p, (size_t)(nl - p), &in_hunk);
		if (f.j && nl < end && !strncmp(nl + 1, "diff --git ", 11))
			stat_flush(&f, files, &add, &del);
	}
	stat_flush(&f, files, &add, &del);
	free(path);
	sl_buf_release(&b);
	return json_pack("{s:I, s:I, s:I, s:o, s:s}", "files_changed",
			 (json_int_t)json_array_size(files), "insertions", add, "deletions", del,
			 "files", files, "source", "diff.patch");
}

/*
 * The diff stat of the recorded base and head, from git objects: diff.patch
 * lies in the run folder, where builders and gates write. Only when git no
 * longer has the commits (a branch deleted, then git gc) is diff.patch read,
 * and the stat says so ("source").
 */
static json_t *diffstat_json(struct sl_ctx *ctx, const struct store_run *r, const char *run_dir)
{
	struct sl_err err = SL_ERR_INIT;
	json_t *j = NULL;

	if (!r->base_commit || !r->head_commit)
		return json_null();
	if (worktree_diff_stat(ctx->repo.root, r->base_commit, r->head_commit, &j, &err) == 0) {
		json_object_set_new(j, "source", json_string("git"));
		return j;
	}
	return diffstat_of_patch(run_dir);
}

/* Bounded conflict markers (cut at a character boundary). */
static json_t *markers_json(json_t *j, const char *markers)
{
	size_t len, cut;

	len = cut = markers ? strlen(markers) : 0;
	if (len > ARTIFACT_DOSSIER_HUNKS_MAX)
		for (cut = ARTIFACT_DOSSIER_HUNKS_MAX; cut && (markers[cut] & 0xC0) == 0x80; cut--)
			;
	json_object_set_new(j, "markers", json_stringn(markers ? markers : "", cut));
	json_object_set_new(j, "markers_truncated", json_boolean(len > ARTIFACT_DOSSIER_HUNKS_MAX));
	return j;
}

/* A text file of a run folder as a JSON string (bounded; U+FFFD for bytes not UTF-8). */
static json_t *read_text_file(const char *dir, const char *name)
{
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	char *path = sl_path_join(dir, name);
	json_t *j = NULL;

	if (path && sl_read_file(&b, path, ARTIFACT_DOSSIER_MARKERS_MAX * 4, &err) == 0)
		j = worktree_diff_json_text(sl_buf_cstr(&b), b.len);
	sl_buf_release(&b);
	free(path);
	return j;
}

/* The rival run of a conflict, from the store; its summary from its run folder. */
static json_t *rival_json(struct sl_ctx *ctx, const char *id)
{
	struct store_run r;
	struct store_wo wo = STORE_WO_INIT;
	struct sl_err err = SL_ERR_INIT;
	char *path = NULL;
	json_t *j = json_null(), *summary;

	memset(&r, 0, sizeof(r));
	if (!id || store_run_get(ctx->st, id, &r, &err) != 0)
		return j;
	if (store_wo_get(ctx->st, r.work_order_id, &wo, &err) != 0)
		sl_err_clear(&err);
	path = sl_repo_run_path(&ctx->repo, r.id, NULL);
	summary = path ? read_text_file(path, "summary.md") : NULL;
	json_decref(j);
	j = json_pack("{s:s, s:s, s:s?, s:o, s:o}", "run", r.id, "work_order", r.work_order_id,
		      "title", wo.title, "summary", summary ? summary : json_string(""), "merged_at",
		      r.state == RUN_MERGED ? artifact__iso_or_null(r.finished_ms) : json_null());
	free(path);
	store_wo_release(&wo);
	store_run_release(&r);
	return j ? j : json_null();
}

/*
 * The rivals of a textual conflict (artifact_conflict_rivals): each run's as
 * rival_json shows it, a person's commit as is, with where it clashed; the
 * runs' ids also go to `ids` (rival_runs).
 */
static json_t *rivals_json(struct sl_ctx *ctx, const struct store_run *r,
			   const struct store_conflict *sc, json_t *ids)
{
	json_t *all = artifact_conflict_rivals(ctx, r->id, sc->target_tip, sc->run_head,
					       (const char *const *)sc->paths, sc->npaths,
					       r->created_ms, NULL);
	json_t *out = json_array(), *rv, *j;
	size_t i;

	json_array_foreach(all, i, rv) {
		json_t *run = json_object_get(rv, "run");
		if (json_is_string(run)) {
			json_array_append(ids, run);
			j = rival_json(ctx, json_string_value(run));
		} else {
			j = json_pack("{s:O?}", "person", json_object_get(rv, "person"));
		}
		if (!json_is_object(j)) {
			json_decref(j);
			continue;
		}
		json_object_set_new(j, "lines", json_pack("{s:O?, s:O?, s:O?, s:O?}", "path",
			json_object_get(rv, "path"), "line", json_object_get(rv, "line"), "lines",
			json_object_get(rv, "lines"), "by", json_object_get(rv, "by")));
		json_array_append_new(out, j);
	}
	json_decref(all);
	return out;
}

/*
 * The conflict, from what the store recorded when the merge conflicted (the
 * files, the target tip, the rival) and git (the markers, recomputed from
 * the recorded tip and head): conflict.json is in the run folder, where the
 * resolving builder writes. A run with no conflict in the store (one of an
 * older build) shows conflict.json, marked as such.
 */
static json_t *conflict_json(struct sl_ctx *ctx, const struct store_run *r, const char *run_dir)
{
	struct store_conflict sc = { 0 };
	struct merge_conflict_info ci = MERGE_CONFLICT_INFO_INIT;
	struct merge_opts mo = MERGE_OPTS_INIT;
	struct sl_err err = SL_ERR_INIT;
	json_t *c, *rival, *j, *files, *rivals, *all;
	size_t i;

	if (store_conflict_get(ctx->st, r->id, &sc, &err) == 0) {
		files = json_array();
		rivals = json_array();
		for (i = 0; i < sc.npaths; i++)
			json_array_append_new(files, worktree_diff_json_text(sc.paths[i],
									   strlen(sc.paths[i])));
		all = rivals_json(ctx, r, &sc, rivals);
		if (merge_conflict_info(ctx->repo.root, sc.target_tip, sc.run_head, ctx->cfg->target,
					r->branch_name ? r->branch_name : r->id, &mo, &ci, &err) != 0)
			sl_buf_reset(&ci.output);
		j = json_pack("{s:o, s:o, s:o, s:s, s:s}", "files", files, "rival_runs", rivals,
			      "rivals", all, "target_tip", sc.target_tip, "source", "store");
		if (j) {
			markers_json(j, sl_buf_cstr(&ci.output));
			json_t *rv = rival_json(ctx, r->conflict_with_run_id);

			if (json_is_object(rv))
				json_object_set_new(j, "rival", rv);
			else
				json_decref(rv);
		}
		merge_conflict_info_release(&ci);
		store_conflict_release(&sc);
		return j ? j : json_null();
	}
	if (!(c = read_json_file(run_dir, "conflict.json")))
		return json_null();
	rival = json_object_get(c, "conflictingRun");
	j = json_pack("{s:O?, s:O?, s:O?, s:s}", "files", json_object_get(c, "conflictFiles"),
		      "rival_runs", json_object_get(c, "rivalRuns"), "target_tip",
		      json_object_get(c, "targetTip"), "source", "conflict.json");
	if (j)
		markers_json(j, json_string_value(json_object_get(c, "gitConflictOutput")));
	if (j && json_is_object(rival)) {
		json_t *wo = json_object_get(rival, "workOrder");
		json_object_set_new(j, "rival", json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?}", "run",
			json_object_get(rival, "id"), "work_order", json_object_get(wo, "id"),
			"title", json_object_get(wo, "title"), "summary",
			json_object_get(rival, "builderSummary"), "merged_at",
			json_object_get(rival, "mergedAt")));
	}
	json_decref(c);
	return j ? j : json_null();
}

/*
 * The kind of the run's conflict, and for a semantic one its failing gates
 * and the target tip they failed on: the store's; conflict.json's kind for a
 * run the store has no conflict of.
 */
static char *conflict_kind_of(struct sl_ctx *ctx, const char *run_id, json_t *cj, json_t **gates,
			      char **tip)
{
	struct store_conflict sc = { 0 };
	struct sl_err err = SL_ERR_INIT;
	const char *k = json_string_value(json_object_get(cj, "kind"));
	char *kind = NULL;

	*gates = NULL;
	*tip = NULL;
	if (store_conflict_get(ctx->st, run_id, &sc, &err) == 0) {
		struct store_gates g;
		kind = strdup(conflict_kind_name(sc.kind));
		store_gates_parse(run_id, sc.gates_json, &g, &err); /* logged there */
		*gates = g.all ? json_incref(g.all) : NULL;
		store_gates_release(&g);
		*tip = sc.target_tip ? strdup(sc.target_tip) : NULL;
		store_conflict_release(&sc);
	} else {
		kind = strdup(k && !strcmp(k, "semantic") ? "semantic" : "textual");
	}
	return kind;
}

/* A failing merge gate: its exit status and the end of its output (else of its log). */
static json_t *failed_gate_json(const char *dir, const char *name, json_t *from)
{
	json_t *ex = json_object_get(from, "exit_code");
	const char *o = json_string_value(json_object_get(from, "output"));
	size_t len = o ? strlen(o) : 0, cut = 0;

	if (len > ARTIFACT_DOSSIER_MARKERS_MAX) /* keep the tail, from a character boundary */
		for (cut = len - ARTIFACT_DOSSIER_MARKERS_MAX; cut < len &&
		     (o[cut] & 0xC0) == 0x80; cut++)
			;
	return json_pack("{s:s, s:O?, s:o}", "name", name, "exit_code",
			 json_is_integer(ex) ? ex : NULL, "output",
			 o && *o ? json_string(o + cut) :
			 json_or_empty(artifact_gate_log_tail(dir, name,
							      ARTIFACT_DOSSIER_MARKERS_MAX)));
}

/*
 * A semantic conflict (issue 12): the merge was clean, the merge gates
 * failed on it. The failing gates (the store's, else conflict.json's) with
 * their exit status and output's end; the rival runs: the landings the tip
 * it failed on holds and the run's base does not.
 */
static void semantic_json(struct sl_ctx *ctx, const struct store_run *r, json_t *j,
			  const char *dir, json_t *cj, json_t *gates, const char *tip)
{
	json_t *from = json_is_array(gates) ? gates : json_object_get(cj, "failedGates");
	json_t *failed = json_array(), *g, *rivals;
	size_t i;

	json_array_foreach(from, i, g)
		if (json_is_string(json_object_get(g, "name")) &&
		    !json_is_true(json_object_get(g, "passed")))
			json_array_append_new(failed, failed_gate_json(
				dir, json_string_value(json_object_get(g, "name")), g));
	json_object_set_new(j, "failed_gates", failed);
	if (json_array_size(json_object_get(j, "rival_runs")))
		return;
	rivals = artifact_rivals_between(ctx, tip, r->base_commit);
	if (json_array_size(rivals))
		json_object_set_new(j, "rival_runs", rivals);
	else
		json_decref(rivals);
}

static void conflict_kind(struct sl_ctx *ctx, const struct store_run *r, const char *dir,
			  json_t *j)
{
	json_t *cj = read_json_file(dir, "conflict.json"), *gates = NULL;
	char *kind, *tip = NULL;

	if (!json_is_object(j))
		goto out;
	kind = conflict_kind_of(ctx, r->id, json_is_object(cj) ? cj : NULL, &gates, &tip);
	json_object_set_new(j, "kind", json_string(kind ? kind : "textual"));
	if (kind && !strcmp(kind, "semantic"))
		semantic_json(ctx, r, j, dir, json_is_object(cj) ? cj : NULL, gates, tip);
	free(kind);
	free(tip);
out:
	json_decref(gates);
	json_decref(cj);
}

static json_t *artifacts_json(const char *run_dir)
{
	struct artifact_hashes h = ARTIFACT_HASHES_INIT;
	struct sl_err err = SL_ERR_INIT;
	json_t *a = json_array();
	char *m = sl_path_join(run_dir, "manifest.json");
	size_t i;

	if (artifact_hash_files(run_dir, &h, &err) == 0)
		for (i = 0; i < h.n; i++) {
			char *p = sl_path_join(run_dir, h.v[i].path);
			json_array_append_new(a, json_pack("{s:s, s:s, s:I}", "name", h.v[i].path,
							   "path", p ? p : "", "bytes",
							   (json_int_t)h.v[i].size));
			free(p);
		}
	if (m && sl_path_exists(m))
		json_array_append_new(a, json_pack("{s:s, s:s, s:n}", "name", "manifest.json",
						   "path", m, "bytes"));
	artifact_hashes_release(&h);
	free(m);
	return a;
}

/* `path` as the shell reads it: as it is when it holds no special character, else in '...'. */
static const char *shell_word(char *out, size_t n, const char *path)
{
	size_t o = 0;

	if (!strpbrk(path, " \t\n'\"\\$`;&|<>()*?[]#~!{}"))
		return path;
	out[o++] = '\'';
	for (; *path && o + 5 < n; path++) {
		if (*path == '\'') {
			memcpy(out + o, "'\\''", 4);
			o += 4;
		} else
			out[o++] = *path;
	}
	out[o++] = '\'';
	out[o] = '\0';
	return out;
}

/* What a person types next, for runs that wait on one. */
static json_t *next_json(const struct store_run *r, const char *path, const char *target,
			 json_t *conflict)
{
	const char *kind = json_string_value(json_object_get(conflict, "kind"));
	char buf[1024], quoted[768];
	const char *wt = shell_word(quoted, sizeof(quoted), path);

	/* each command works as printed: the worktree waits clean at the run's head */
	if (r->state == RUN_MERGE_CONFLICT && kind && !strcmp(kind, "semantic"))
		snprintf(buf, sizeof(buf), "cd %s && git merge --no-commit %s; make the merge gates "
			 "pass; git commit -a --no-edit; then: sluice retry %s, or sluice abandon %s",
			 wt, target, r->id, r->id);
	else if (r->state == RUN_MERGE_CONFLICT)
		snprintf(buf, sizeof(buf), "cd %s && git merge %s; fix the conflicted files; "
			 "git commit -a --no-edit; then: sluice retry %s, or sluice abandon %s", wt,
			 target, r->id, r->id);
	else if (r->state == RUN_AWAITING_REVIEW)
		snprintf(buf, sizeof(buf), "read review-request.json (the diff: sluice diff %s), "
			 "then: sluice approve %s, sluice request-changes %s -m TEXT, or sluice "
			 "reject %s -m TEXT", r->id, r->id, r->id, r->id);
	else if (r->state == RUN_FAILED || r->state == RUN_REJECTED)
		snprintf(buf, sizeof(buf), "sluice retry %s, or sluice abandon %s", r->id, r->id);
	else
		return json_null();
	return json_string(buf);
}

static json_t *dossier_doc(struct sl_ctx *ctx, const struct store_run *r, const char *dir)
{
	char *wt = sl_path_join(dir, "worktree"), *tomb = artifact_tombstone_path(&ctx->repo, r->id);
	const char *target = ctx->cfg->target ? ctx->cfg->target : "main";
	json_t *review = read_json_file(dir, "review.json"), *merge = read_json_file(dir, "merge.json");
	json_t *gates = read_json_file(dir, "gates.json"), *j, *summary;
	json_t *conflict = conflict_json(ctx, r, dir);

	conflict_kind(ctx, r, dir, conflict);
	j = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:b, "
		      "s:o}",
		      "run", store_run_json(r, STORE_RUN_JSON_ALIASES), "work_order",
		      wo_json(ctx, r->work_order_id), "timeline",
		      timeline_json(ctx, r->id), "attempts", attempts_json(ctx, r->id, dir),
		      "gates", gates ? gates : json_null(), "verdict", review ? review : json_null(),
		      "diffstat", diffstat_json(ctx, r, dir), "conflict", conflict, "merge",
		      merge ? merge : json_null(), "worktree",
		      wt && sl_is_dir(wt) ? json_string(wt) : json_null(), "next",
		      next_json(r, wt ? wt : "", target, conflict), "artifacts_dir", dir, "artifacts",
		      artifacts_json(dir), "removed_by_gc",
		      !sl_is_dir(dir) && tomb && sl_path_exists(tomb), "train",
		      artifact_train_json(ctx, r->id, dir));
	json_object_set_new(j, "jobs", jobs_json(ctx, r->id));
	json_object_set_new(j, "usage", artifact__usage_json(ctx, r->id));
	json_object_set_new(j, "watch", artifact__watch_json(ctx, r->id, r->work_order_id));
	/* the builder's summary (its final answer, or what it wrote to summary.md) */
	summary = read_text_file(dir, "summary.md");
	json_object_set_new(j, "summary", summary ? summary : json_null());
	free(wt);
	free(tomb);
	return j;
}

int artifact_dossier(struct sl_ctx *ctx, const char *run, json_t **out, struct sl_err *err)
{
	struct store_run r;
	char *dir = NULL;
	int error;

	*out = NULL;
	memset(&r, 0, sizeof(r));
	if ((error = store_run_get(ctx->st, run, &r, err)) != 0)
		goto out;
	if (!(dir = sl_repo_run_path(&ctx->repo, r.id, NULL)) ||
	    !(*out = dossier_doc(ctx, &r, dir)))
		error = sl_err_set(err, SL_ERROR, "cannot build the dossier of run '%s'", r.id);
out:
	free(dir);
	store_run_release(&r);
	return error;
}
