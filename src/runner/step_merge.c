/* The merging and resolving states: the merge, the conflict context, the resolution. */
#include "runner/runner_int.h"
#include "store/store.h"
#include "worktree/worktree.h"
#include "artifact/artifact.h"
#include "runner/runner.h"
#include "merge/merge.h"
#include "core/fs.h"
#include "core/fault.h"
#include "core/id.h"
#include "core/template.h"
#include "core/log.h"
#include "core/time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONTEXT_DIFF_MAX ((size_t)256 << 10)

static json_t *wo_fields(struct step *s, const char *wo_id, char **title)
{
	struct store_wo wo = STORE_WO_INIT;
	struct store_wo_fields f = { 0 };
	struct sl_err err = SL_ERR_INIT;
	json_t *j;

	if (store_wo_get(s->ctx->st, wo_id, &wo, &err) != 0)
		return json_object();
	store_wo_fields_parse(wo.id, wo.fields_json, &f, &err); /* logged there */
	j = f.all ? json_incref(f.all) : json_object();
	if (title)
		*title = wo.title ? strdup(wo.title) : NULL;
	store_wo_fields_release(&f);
	store_wo_release(&wo);
	return j;
}

static char *read_run_file(struct sl_ctx *ctx, const char *run_id, const char *name)
{
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	char *path = sl_repo_run_path(&ctx->repo, run_id, name), *out = NULL;

	if (path && sl_read_file(&b, path, CONTEXT_DIFF_MAX, &err) == 0)
		out = sl_buf_detach(&b);
	sl_buf_release(&b);
	free(path);
	return out;
}

/*
 * currentRun / conflictingRun of the seed's ConflictContext. The diff is
 * base..head as git computes it (at most CONTEXT_DIFF_MAX of it), never a
 * run folder's diff.patch, which a builder or gate can rewrite.
 */
static json_t *run_context(struct step *s, const struct store_run *r, const char *base,
			   const char *head)
{
	struct sl_buf diff;
	struct sl_err err = SL_ERR_INIT;
	char *summary = read_run_file(s->ctx, r->id, "summary.md");
	size_t total = 0;
	json_t *j;

	sl_buf_init(&diff, CONTEXT_DIFF_MAX);
	if (!base || !head ||
	    worktree_diff_patch_mem(s->ctx->repo.root, base, head, &diff, &total, &err) != 0)
		sl_buf_reset(&diff);
	/* text that need not be UTF-8 (a file's bytes) is kept with U+FFFD, not refused */
	j = json_pack("{s:s, s:o, s:o, s:o}", "id", r->id, "workOrder",
		      wo_fields(s, r->work_order_id, NULL), "diff",
		      worktree_diff_json_text(sl_buf_cstr(&diff), diff.len), "builderSummary",
		      worktree_diff_json_text(summary ? summary : "", summary ? strlen(summary) : 0));

	if (j && r->state == RUN_MERGED) {
		char when[40];
		sl_time_iso(when, sizeof(when), r->finished_ms);
		json_object_set_new(j, "mergedAt", json_string(when));
		if (r->merge_commit)
			json_object_set_new(j, "mergeCommit", json_string(r->merge_commit));
	}
	sl_buf_release(&diff);
	free(summary);
	return j;
}

/* The first parent of `commit` (hex) into parent (41 bytes); 0 or -1 (none, or not found). */
static int parent_of(struct step *s, const char *commit, char *parent)
{
	git_repository *repo = NULL;
	git_commit *c = NULL;
	git_oid id;
	int error = -1;

	if (git_oid_fromstr(&id, commit) == 0 && git_repository_open(&repo, s->ctx->repo.root) == 0 &&
	    git_commit_lookup(&c, repo, &id) == 0 && git_commit_parentcount(c) > 0) {
		git_oid_tostr(parent, GIT_OID_HEXSZ + 1, git_commit_parent_id(c, 0));
		error = 0;
	}
	git_error_clear();
	git_commit_free(c);
	git_repository_free(repo);
	return error;
}

/*
 * A person's commit as a rival of conflictingRuns: who and what ("person":
 * commit, author, subject) and its diff against its first parent, from git.
 */
static json_t *person_context(struct step *s, json_t *person)
{
	const char *commit = json_string_value(json_object_get(person, "commit"));
	char parent[GIT_OID_HEXSZ + 1];
	struct sl_buf diff;
	struct sl_err err = SL_ERR_INIT;
	size_t total = 0;
	json_t *j;

	sl_buf_init(&diff, CONTEXT_DIFF_MAX);
	if (!commit || parent_of(s, commit, parent) != 0 ||
	    worktree_diff_patch_mem(s->ctx->repo.root, parent, commit, &diff, &total, &err) != 0)
		sl_buf_reset(&diff);
	j = json_pack("{s:n, s:O, s:n, s:o, s:s}", "id", "person", person, "workOrder", "diff",
		      worktree_diff_json_text(sl_buf_cstr(&diff), diff.len), "builderSummary", "");
	sl_buf_release(&diff);
	return j;
}

/*
 * conflictingRuns: a context for each rival (artifact_conflict_rivals), a
 * run's (run_context) or a person's commit's, with where it clashed
 * ("lines": path, line, lines, by). *first: the first run rival's id (NULL:
 * none), the caller's.
 */
static json_t *rival_contexts(struct step *s, json_t *rivals, char **first)
{
	struct sl_err err = SL_ERR_INIT;
	json_t *out = json_array(), *rv, *j;
	size_t i;

	*first = NULL;
	json_array_foreach(rivals, i, rv) {
		struct store_run r;
		const char *id = json_string_value(json_object_get(rv, "run"));

		memset(&r, 0, sizeof(r));
		if (!id)
			j = person_context(s, json_object_get(rv, "person"));
		else if (store_run_get(s->ctx->st, id, &r, &err) == 0)
			j = run_context(s, &r, r.base_commit, r.head_commit);
		else
			j = NULL;
		sl_err_clear(&err);
		if (id && j && !*first)
			*first = strdup(r.id);
		store_run_release(&r);
		if (!j)
			continue;
		json_object_set_new(j, "lines", json_pack("{s:O?, s:O?, s:O?, s:O?}", "path",
			json_object_get(rv, "path"), "line", json_object_get(rv, "line"), "lines",
			json_object_get(rv, "lines"), "by", json_object_get(rv, "by")));
		json_array_append_new(out, j);
	}
	return out;
}

/* The rivals: who last changed the conflicting lines (docs/builders.md "The rival"). */
static json_t *conflict_rivals(struct step *s, const char *tip, const char *run_head,
			       const struct merge_conflict_info *ci)
{
	struct sl_err warn = SL_ERR_INIT;
	json_t *rivals = artifact_conflict_rivals(s->ctx, s->run.id, tip, run_head,
						  (const char *const *)ci->paths.v, ci->paths.n,
						  s->run.created_ms, &warn);

	if (warn.code)
		sl_log(SL_LOG_WARN, "run %s: %s; the rivals are the runs that changed the files",
		       s->run.id, warn.msg);
	return rivals;
}

/*
 * The ConflictContext of merging `run_head` (based on `base`) into `tip`:
 * the conflicted files and git's output (ci); the rivals, who last changed
 * the conflicting lines on the target, each with its work order and diff
 * (conflictingRuns; rivalRuns: the ids of the runs among them); conflictingRun
 * the first run rival, else `rival_id` (a semantic conflict's); both runs'
 * diffs from git. *rival_out (may be NULL) gets conflictingRun's id.
 */
static int conflict_context(struct step *s, const char *tip, const char *run_head,
			    const char *base, const struct merge_conflict_info *ci,
			    const char *rival_id, char **rival_out, json_t **out, struct sl_err *err)
{
	json_t *ctx = NULL, *files = json_array(), *rivals, *ids = json_array(), *rv;
	char *first = NULL;
	struct store_run rival;
	size_t i;
	int error = 0;

	*out = NULL;
	memset(&rival, 0, sizeof(rival));
	for (i = 0; i < ci->paths.n; i++)
		json_array_append_new(files, worktree_diff_json_text(ci->paths.v[i],
								   strlen(ci->paths.v[i])));
	rivals = conflict_rivals(s, tip, run_head, ci);
	json_array_foreach(rivals, i, rv)
		if (json_is_string(json_object_get(rv, "run")))
			json_array_append(ids, json_object_get(rv, "run"));
	ctx = json_pack("{s:o, s:O, s:o, s:s, s:s, s:s, s:s, s:O, s:o}", "currentRun",
			run_context(s, &s->run, base, run_head), "conflictFiles", files,
			"gitConflictOutput",
			worktree_diff_json_text(sl_buf_cstr(&ci->output), ci->output.len), "target",
			s->ctx->cfg->target, "targetTip", tip, "runHead", run_head,
			"originalBase", base, "rivalRuns", ids, "conflictingRuns",
			rival_contexts(s, rivals, &first));
	if (!ctx) {
		error = sl_err_set(err, SL_ERROR, "cannot build the conflict context");
		goto out;
	}
	if (first)
		rival_id = first;
	if (rival_id && store_run_get(s->ctx->st, rival_id, &rival, err) == 0) {
		json_object_set_new(ctx, "conflictingRun", run_context(s, &rival, rival.base_commit,
								       rival.head_commit));
		if (rival_out)
			*rival_out = strdup(rival.id);
	} else {
		sl_err_clear(err);
		json_object_set_new(ctx, "conflictingRun", json_null());
	}
	*out = ctx;
	ctx = NULL;
out:
	free(first);
	store_run_release(&rival);
	json_decref(ctx);
	json_decref(files);
	json_decref(rivals);
	json_decref(ids);
	return error;
}

static int write_conflict(struct step *s, const char *tip, const struct merge_conflict_info *ci,
			  char **rival_out, struct sl_err *err)
{
	json_t *ctx = NULL;
	int error;

	if ((error = conflict_context(s, tip, s->run.head_commit, s->run.base_commit, ci, NULL,
				      rival_out, &ctx, err)) == 0) {
		json_object_set_new(ctx, "kind", json_string(conflict_kind_name(CONFLICT_TEXTUAL)));
		error = step__write_json(s, "conflict.json", ctx, err);
	}
	json_decref(ctx);
	return error;
}

/*
 * The kind of the conflict in its context; for a semantic one the failed
 * merge gates (with their output, from the store) and the rival runs: the
 * runs landed on the target since the run's branch point.
 */
static int context_kind(struct step *s, const struct store_conflict *c, const char *base,
			json_t *ctx, struct sl_err *err)
{
	struct store_gates g = { 0 };
	struct sl_err ignored = SL_ERR_INIT;
	json_t *rivals;
	char **ids = NULL;
	size_t i;
	int error;

	json_object_set_new(ctx, "kind", json_string(conflict_kind_name(c->kind)));
	if (c->kind != CONFLICT_SEMANTIC)
		return 0;
	store_gates_parse(s->run.id, c->gates_json, &g, &ignored); /* logged there */
	json_object_set_new(ctx, "failedGates", g.all ? json_incref(g.all) : json_array());
	store_gates_release(&g);
	if ((error = step__rivals_between(s, c->target_tip, base, &ids, err)) != 0)
		return error;
	rivals = json_array();
	for (i = 0; ids[i]; i++) {
		json_array_append_new(rivals, json_string(ids[i]));
		free(ids[i]);
	}
	free(ids);
	json_object_set_new(ctx, "rivalRuns", rivals);
	return 0;
}

int step__conflict_context(struct step *s, json_t **out, struct sl_err *err)
{
	struct merge_conflict_info ci = MERGE_CONFLICT_INFO_INIT;
	struct merge_opts mo = MERGE_OPTS_INIT;
	struct store_conflict c = { 0 };
	git_repository *repo = NULL;
	git_oid tip, head, base;
	char base_hex[GIT_OID_HEXSZ + 1];
	size_t i;
	int error;

	*out = NULL;
	if ((error = store_conflict_get(s->ctx->st, s->run.id, &c, err)) != 0)
		goto out;
	if ((error = git_repository_open(&repo, s->ctx->repo.root)) != 0 ||
	    (error = git_oid_fromstr(&tip, c.target_tip)) != 0 ||
	    (error = git_oid_fromstr(&head, c.run_head)) != 0 ||
	    (error = git_merge_base(&base, repo, &tip, &head)) != 0) {
		error = sl_err_git(err, error, "cannot read the conflict of run '%s'", s->run.id);
		goto out;
	}
	git_oid_tostr(base_hex, sizeof(base_hex), &base);
	if ((error = merge_conflict_info(s->ctx->repo.root, c.target_tip, c.run_head,
					 s->ctx->cfg->target, s->run.branch_name, &mo, &ci,
					 err)) != 0)
		goto out;
	/* the conflicted paths recorded when the merge conflicted */
	merge_paths_release(&ci.paths);
	for (i = 0; i < c.npaths; i++)
		if (merge_paths_add(&ci.paths, c.paths[i]) != 0) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			goto out;
		}
	error = conflict_context(s, c.target_tip, c.run_head, base_hex, &ci,
				 s->run.conflict_with_run_id, NULL, out, err);
	if (!error)
		error = context_kind(s, &c, base_hex, *out, err);
out:
	git_repository_free(repo);
	merge_conflict_info_release(&ci);
	store_conflict_release(&c);
	return error;
}

/* "WO-1, WO-2" of the rival runs (at most a few), or the target's name. */
static void rival_names(struct step *s, const char *const *rivals, char *buf, size_t n)
{
	struct sl_err err = SL_ERR_INIT;
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; rivals && rivals[i] && i < 5 && used < n; i++) {
		struct store_run r;
		if (store_run_get(s->ctx->st, rivals[i], &r, &err) != 0) {
			sl_err_clear(&err);
			continue;
		}
		used += (size_t)snprintf(buf + used, n - used, "%s%s (run %s)", used ? ", " : "",
					 r.work_order_id, r.id);
		store_run_release(&r);
	}
	if (!buf[0])
		snprintf(buf, n, "the commits on %s", s->ctx->cfg->target);
}

static int semantic_move(struct step *s, const char *gates, const char *const *rivals,
			 struct sl_err *err)
{
	char who[512];

	rival_names(s, rivals, who, sizeof(who));
	if (!strcmp(s->ctx->cfg->merge.resolver, "none") ||
	    s->run.resolve_attempts >= s->ctx->cfg->merge.resolve_attempts)
		return step__move(s, RUN_MERGE_CONFLICT, err,
				  "semantic conflict: the merge gates failed on top of %s (gate %s); "
				  "a person must decide: see 'sluice show %s'",
				  who, gates, s->run.id);
	return step__move(s, RUN_RESOLVING, err,
			  "semantic conflict: the merge gates failed on top of %s (gate %s); the "
			  "builder resolves it",
			  who, gates);
}

int step__on_conflict(struct step *s, const char *tip, const char *why, struct sl_err *err)
{
	struct merge_conflict_info ci = MERGE_CONFLICT_INFO_INIT;
	struct merge_opts mo = MERGE_OPTS_INIT;
	char *rival = NULL;
	int error;

	if ((error = merge_conflict_info(s->ctx->repo.root, tip, s->run.head_commit,
					 s->ctx->cfg->target, s->run.branch_name, &mo, &ci,
					 err)) != 0 ||
	    /* what the resolution starts from, where no resolver can rewrite it */
	    (error = store_conflict_set(s->ctx->st, s->run.id, tip, s->run.head_commit,
					(const char *const *)ci.paths.v, ci.paths.n, err)) != 0 ||
	    (error = write_conflict(s, tip, &ci, &rival, err)) != 0)
		goto out;
	if ((error = step__set(s, err, "merge_status",
			       run_merge_status_name(RUN_MERGE_STATUS_CONFLICT),
			       "conflict_with_run_id", rival, NULL)) != 0)
		goto out;
	if (!strcmp(s->ctx->cfg->merge.resolver, "none") ||
	    s->run.resolve_attempts >= s->ctx->cfg->merge.resolve_attempts)
		error = step__move(s, RUN_MERGE_CONFLICT, err,
				   "merge conflict with %s in %zu file%s (%s); a person must "
				   "decide: see 'sluice show %s'",
				   rival ? rival : s->ctx->cfg->target, ci.paths.n,
				   ci.paths.n == 1 ? "" : "s", why, s->run.id);
	else
		error = step__move(s, RUN_RESOLVING, err,
				   "merge conflict with %s in %zu file%s; the builder resolves it",
				   rival ? rival : s->ctx->cfg->target, ci.paths.n,
				   ci.paths.n == 1 ? "" : "s");
out:
	free(rival);
	merge_conflict_info_release(&ci);
	return error;
}

/* "test (exit 2), lint (exit 1)": the failed gates of a car's results. */
static void failed_names(const struct store_gates *gates, char *buf, size_t n)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < gates->n; i++) {
		const struct store_gate *g = &gates->v[i];
		if (g->passed || used >= n)
			continue;
		used += (size_t)snprintf(buf + used, n - used, "%s%s (exit %d)", used ? ", " : "",
					 g->name ?: "?", g->exit_code);
	}
	if (!buf[0])
		snprintf(buf, n, "a merge gate");
}

int step__on_semantic(struct step *s, const char *tip, const char *gates_json,
		      struct sl_err *err)
{
	struct store_gates all = { 0 };
	struct sl_err ignored = SL_ERR_INIT;
	json_t *failed = json_array(), *ctx = NULL;
	char names[512], *text = NULL, **rivals = NULL;
	size_t i;
	int error;

	store_gates_parse(s->run.id, gates_json, &all, &ignored); /* logged there */
	for (i = 0; i < all.n; i++)
		if (!all.v[i].passed)
			json_array_append(failed, all.v[i].json);
	failed_names(&all, names, sizeof(names));
	if (!(text = json_dumps(failed, JSON_COMPACT | JSON_SORT_KEYS))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = store_conflict_set_semantic(s->ctx->st, s->run.id, tip, s->run.head_commit,
						 text, err)) != 0 ||
	    (error = step__rivals_between(s, tip, s->run.base_commit, &rivals, err)) != 0 ||
	    (error = step__conflict_context(s, &ctx, err)) != 0 ||
	    (error = step__write_json(s, "conflict.json", ctx, err)) != 0 ||
	    (error = step__set(s, err, "merge_status",
			       run_merge_status_name(RUN_MERGE_STATUS_CONFLICT),
			       "conflict_with_run_id", rivals[0], NULL)) != 0)
		goto out;
	error = semantic_move(s, names, (const char *const *)rivals, err);
out:
	for (i = 0; rivals && rivals[i]; i++)
		free(rivals[i]);
	free(rivals);
	free(text);
	json_decref(ctx);
	json_decref(failed);
	store_gates_release(&all);
	return error;
}

int step__person_resolved(struct step *s)
{
	char *agent = store_attempt_agent(s->ctx->st, s->run.id, s->run.attempt);
	int yes = agent && !strncmp(agent, STEP_PERSON_AGENT, strlen(STEP_PERSON_AGENT));

	free(agent);
	return yes;
}

/* Where `a` and `b` meet, into out (hex); "" when they do not. */
static void meet(struct step *s, const char *a, const char *b, char out[GIT_OID_HEXSZ + 1])
{
	git_repository *repo = NULL;
	git_oid x, y, m;

	out[0] = '\0';
	if (git_oid_fromstr(&x, a) == 0 && git_oid_fromstr(&y, b) == 0 &&
	    git_repository_open(&repo, s->ctx->repo.root) == 0 &&
	    git_merge_base(&m, repo, &x, &y) == 0)
		git_oid_tostr(out, GIT_OID_HEXSZ + 1, &m);
	git_error_clear();
	git_repository_free(repo);
}

/*
 * The head the person's worktree is put back at (see step__to_person()),
 * and with from_conflict the base that goes with it: where the run head
 * meets the conflicted tip (the resolution had set the base to the tip).
 */
static char *person_head(struct step *s, int from_conflict, char base[GIT_OID_HEXSZ + 1])
{
	struct store_conflict c = { 0 };
	struct sl_err ignored = SL_ERR_INIT;
	char *head = NULL;

	base[0] = '\0';
	if (from_conflict && store_conflict_get(s->ctx->st, s->run.id, &c, &ignored) == 0) {
		head = strdup(c.run_head);
		meet(s, c.run_head, c.target_tip, base);
	} else if (s->run.head_commit) {
		head = strdup(s->run.head_commit);
	}
	store_conflict_release(&c);
	return head;
}

int step__to_person(struct step *s, int from_conflict, const char *why, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	char base[GIT_OID_HEXSZ + 1], *head = person_head(s, from_conflict, base);
	int error = 0;

	if (head && sl_path_exists(s->wt) && step__worktree_mode(s) == SL_WORKTREE_READ_WRITE) {
		/* a half merge or a refused resolution left by the builder: never the person's */
		if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
			goto out;
		error = worktree_reset(s->wt, head, step__excluded(s), err);
		sl_lock_release(&lock);
		if (!error && (!s->run.head_commit || strcmp(head, s->run.head_commit)))
			error = step__set(s, err, "head_commit", head, NULL);
		if (!error && base[0])
			error = step__set(s, err, "base_commit", base, NULL);
		if (error)
			goto out;
	}
	error = step__move(s, RUN_MERGE_CONFLICT, err, "%s", why);
out:
	free(head);
	return error;
}

static int write_merge_json(struct step *s, const struct merge_commit_result *mr,
			    struct sl_err *err)
{
	char commit[41], tip[41], tree[41], when[40];
	json_t *j;
	int error;

	git_oid_tostr(commit, sizeof(commit), &mr->commit);
	git_oid_tostr(tip, sizeof(tip), &mr->tip);
	git_oid_tostr(tree, sizeof(tree), &mr->tree);
	sl_time_iso(when, sizeof(when), sl_now_ms());
	j = json_pack("{s:s, s:[s,s], s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:b, s:s?, s:b, s:s}",
		      "merge_commit",
		      commit, "parents", tip, s->run.head_commit, "target", s->ctx->target_ref,
		      "base", s->run.base_commit, "head", s->run.head_commit, "tree", tree,
		      "approved_tree", s->run.approved_tree, "merged_at", when, "attempts",
		      mr->attempts, "checkout_updated", mr->checkout_updated, "resolved_with",
		      s->run.mode == RUN_MODE_RESOLVE ? s->run.conflict_with_run_id : NULL, "tested",
		      1, "train", "train.json");
	if (!j)
		return sl_err_set(err, SL_ERROR, "cannot build merge.json");
	error = step__write_json(s, "merge.json", j, err);
	sl_fault(error ? NULL : "merge.after_merge_json");
	json_decref(j);
	return error;
}

static void cleanup_after_merge(struct step *s)
{
	struct sl_err err = SL_ERR_INIT;
	int deleted = 0;

	if (sl_path_exists(s->wt) &&
	    runner__retire_worktree(s->ctx, s->run.id, step__excluded(s), 0, 1, &deleted,
				    &err) != 0)
		sl_log(SL_LOG_WARN, "run %s merged, but its worktree stays: %s", s->run.id, err.msg);
	/* the worktree gone before, or on a detached HEAD: the store names the branch */
	if (!deleted)
		runner__delete_merged_branch(s->ctx, NULL, &s->run);
}

static int merged(struct step *s, const struct merge_commit_result *mr, struct sl_err *err)
{
	char commit[41], why[256], reason[512];
	int error;

	git_oid_tostr(commit, sizeof(commit), &mr->commit);
	if (mr->attempts && runner_target_landed(s->ctx, commit, err) != 0) {
		/* the next observation finds this landing in the store (or pending) */
		sl_log(SL_LOG_WARN, "run %s: cannot record the landing as the target's tip: %s",
		       s->run.id, err->msg);
		sl_err_clear(err);
	}
	if ((error = step__train_landed(s, mr, err)) != 0 ||
	    (error = write_merge_json(s, mr, err)) != 0 ||
	    (error = step__set(s, err, "merge_commit", commit, "merge_status",
			       run_merge_status_name(RUN_MERGE_STATUS_MERGED), NULL)) != 0)
		return error;
	snprintf(reason, sizeof(reason), "merged into %s as %.12s%s", s->ctx->cfg->target, commit,
		 mr->checkout_updated ? " (checkout updated)" : "");
	snprintf(why, sizeof(why), "merged by run %s as %.12s", s->run.id, commit);
	if ((error = step__finish(s, RUN_MERGED, WO_DONE, reason, why, err)) != 0)
		return error;
	sl_fault("merge.after_store");
	if (artifact_manifest_write(&s->ctx->repo, s->ctx->st, s->run.id, err) != 0) {
		/* the next tick's reconciliation seals it */
		sl_log(SL_LOG_ERROR, "run %s merged, but its manifest.json could not be written: %s",
		       s->run.id, err->msg);
		sl_err_clear(err);
	}
	sl_fault("merge.after_manifest");
	return STEP_STOP;
}

/* mr->commit is a merge made earlier: take its first parent and tree from it. */
static int found_merge(struct step *s, struct merge_commit_result *mr, struct sl_err *err)
{
	git_repository *repo = NULL;
	git_commit *c = NULL;
	int rc, error = 0;

	if ((rc = git_repository_open(&repo, s->ctx->repo.root)) < 0 ||
	    (rc = git_commit_lookup(&c, repo, &mr->commit)) < 0 || git_commit_parentcount(c) != 2)
		error = sl_err_git(err, rc < 0 ? rc : GIT_ERROR, "cannot read the earlier merge of "
				   "run '%s'", s->run.id);
	else {
		git_oid_cpy(&mr->tip, git_commit_parent_id(c, 0));
		git_oid_cpy(&mr->tree, git_commit_tree_id(c));
		mr->attempts = 0;
	}
	git_commit_free(c);
	git_repository_free(repo);
	return error;
}

struct message_vars {
	struct step *s;
	json_t *fields;
	char buf[64];
};

static const char *message_var(const char *name, void *data)
{
	struct message_vars *v = data;
	json_t *f;

	if (!strcmp(name, "run.id"))
		return v->s->run.id;
	if (!strcmp(name, "run.short"))
		return sl_id_short(v->s->run.id) ? sl_id_short(v->s->run.id) : "";
	if (!strcmp(name, "run.branch"))
		return v->s->run.branch_name ? v->s->run.branch_name : "";
	if (!strcmp(name, "reviewer"))
		return v->s->run.reviewer ? v->s->run.reviewer : "";
	if (strncmp(name, "work_order.", 11))
		return NULL;
	f = json_object_get(v->fields, name + 11);
	if (json_is_string(f))
		return json_string_value(f);
	if (json_is_integer(f)) {
		snprintf(v->buf, sizeof(v->buf), "%lld", (long long)json_integer_value(f));
		return v->buf;
	}
	return ""; /* a field the work order does not have, or a list */
}

/* merge.message rendered for this run (the subject of the merge commit), or NULL. */
static int render_subject(struct step *s, json_t *fields, struct sl_buf *out, struct sl_err *err)
{
	struct message_vars v = { s, fields, { 0 } };
	const char *t = s->ctx->cfg->merge.message;
	int error;

	if (!t || !*t)
		return 0;
	if ((error = sl_template_render(out, t, message_var, &v, err)) != 0)
		return error;
	while (out->len && (out->ptr[out->len - 1] == '\n' || out->ptr[out->len - 1] == ' '))
		out->ptr[--out->len] = '\0';
	return 0;
}

/*
 * The approval is of the recorded head. If the run branch moved on, or its
 * worktree holds new changes (someone worked there after the review), they
 * are committed and recorded, and the run goes through gates and review
 * again: nothing unreviewed is merged, and nothing is lost by deleting the
 * branch after the merge. Returns 0 when nothing changed, SENT_BACK when it
 * sent the run back, STEP_STOP when the run failed, or an error.
 */
#define SENT_BACK STEP_SENT_BACK
static int unchanged_since_review(struct step *s, struct sl_err *err)
{
	char head[41];
	int error, committed = 0;

	if (!sl_path_exists(s->wt))
		return 0;
	error = step__snapshot(s, "sluice snapshot: changes after the review", STEP_SNAP_LOCK,
			       head, &committed, err);
	if (error == SL_ECONFLICT || error == SL_EINVALID)
		return step__fail(s, RUN_FAILED, err, "before the merge: %s", err->msg);
	if (error) /* locked, busy: the run stays approved and the next tick tries again */
		return error;
	if (!strcmp(head, s->run.head_commit))
		return 0;
	if ((error = step__set(s, err, "head_commit", head, "approved_tree", NULL, NULL)) != 0 ||
	    (error = step__record_diff(s, head, err)) != 0)
		return error;
	error = step__move(s, RUN_GATING, err,
			   "the run branch changed after the review (now %.12s); gating and "
			   "reviewing again",
			   head);
	return error ? error : SENT_BACK;
}

/* What the guard of a landing needs: the run, and the car's commit it lands (or NULL). */
struct landing_guard {
	struct step *s;
	const char *commit;
};

/*
 * Right before each landing, under the repository lock, with the tip the
 * target moves from: no landing while the target carries a commit from a
 * run that sluice did not land (runner/target.h). Then the intent: the
 * store names the car's commit as the one sluice lands now, before the
 * compare-and-swap, so that a crash right after it is told from a move by
 * someone else onto the same car (docs/RELIABILITY.md).
 */
static int target_guard(void *data, const git_oid *tip, char *why, size_t n)
{
	struct landing_guard *g = data;
	struct step *s = g->s;
	struct runner_target_alert a;
	struct sl_err err = SL_ERR_INIT;
	int rc = runner_target_watch(s->ctx, tip, 1, &a, &err);

	if (rc == 0 && g->commit &&
	    (rc = store_train_landing_set(s->ctx->st, s->run.id, g->commit, &err)) != 0) {
		snprintf(why, n, "cannot record the landing of %.12s: %s", g->commit, err.msg);
		return rc;
	}

	if (rc == 1)
		snprintf(why, n, "merge held: the target '%s' carries commit %.12s from run %s that "
			 "sluice did not land (unreviewed); reset '%s' to before it or run "
			 "'sluice accept-target %s'", s->ctx->cfg->target, a.commit,
			 a.run[0] ? a.run : "(unknown)", s->ctx->cfg->target, a.commit);
	else if (rc < 0)
		snprintf(why, n, "cannot check the target's tip before landing: %s", err.msg);
	return rc;
}

/* The options of this run's merge commit; the strings stay the caller's. */
static void fill_merge_opts(struct step *s, struct merge_commit_opts *o,
			    struct step_merge_msg *mm)
{
	const struct sl_buf *subject = &mm->subject;
	const char *title = mm->title;

	memset(o, 0, sizeof(*o));
	sl_repo_identity(&mm->who, s->ctx->repo.root, s->ctx->cfg->commit.name,
			 s->ctx->cfg->commit.email);
	o->name = mm->who.name;
	o->email = mm->who.email;
	o->subject = subject->len ? subject->ptr : NULL;
	o->target = s->ctx->cfg->target;
	o->head = s->run.head_commit;
	o->work_order_id = s->run.work_order_id;
	o->title = title ? title : s->run.work_order_id;
	o->run_id = s->run.id;
	o->reviewer = s->run.reviewer ? s->run.reviewer : "unknown";
	o->resolved_with = s->run.mode == RUN_MODE_RESOLVE ? s->run.conflict_with_run_id : NULL;
	o->journal = mm->journal;
}

/*
 * The merge, under the repository lock; *rc is merge_commit()'s. When it
 * landed (*rc 0) it is recorded (merged()) still under the lock: the
 * manifest chain follows merge order.
 */
static int merge_locked(struct step *s, const struct merge_commit_opts *o,
			struct merge_commit_result *mr, int *rc, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	int error = 0;

	if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
		return error;
	runner__seal_newest(s->ctx); /* a merge killed before its manifest: the chain first */
	*rc = merge_commit(s->ctx->repo.root, o, mr, err);
	if (*rc == SL_EEXISTS && !git_oid_is_zero(&mr->commit)) {
		/* merged before a crash, the store did not hear of it: record that merge */
		sl_err_clear(err);
		*rc = found_merge(s, mr, err);
	}
	if (*rc == 0) {
		sl_fault("merge.before_store");
		error = merged(s, mr, err);
		if (error >= 0)
			cleanup_after_merge(s);
	}
	sl_lock_release(&lock);
	return error;
}

/* The merge did not land (rc): nothing to merge, a conflict, or wait for the next tick. */
static int not_landed(struct step *s, int rc, const struct merge_commit_result *mr,
		      struct sl_err *err)
{
	char why[SL_ERR_MSG_MAX];
	int error;

	if (rc == SL_EEXISTS)
		return step__fail(s, RUN_FAILED, err, "nothing to merge: %s", err->msg);
	if (rc == SL_ECONFLICT && mr->status == MERGE_CONFLICT) {
		char tip[41];
		sl_err_clear(err);
		git_oid_tostr(tip, sizeof(tip), &mr->tip);
		return step__on_conflict(s, tip, mr->reason, err);
	}
	if (rc == SL_ETRANSIENT && mr->status == MERGE_MOVED) {
		/* not on the base it was tested on: the train builds and tests it again */
		sl_err_clear(err);
		return step__move(s, RUN_APPROVED, err, "in the train: '%s' moved before the landing; "
				  "the car is built and tested again", s->ctx->cfg->target);
	}
	/* deferred (the user's checkout), locked, target missing: wait, retry next tick */
	snprintf(why, sizeof(why), "%s", mr->reason[0] ? mr->reason : err->msg);
	sl_err_clear(err);
	error = step__move(s, RUN_APPROVED, err, "merge deferred: %s; retried next tick", why);
	return error ? error : STEP_STOP;
}

int step__merge_msg(struct step *s, struct step_merge_msg *mm, struct merge_commit_opts *o,
		    struct sl_err *err)
{
	json_t *fields = wo_fields(s, s->run.work_order_id, &mm->title);
	int error;

	sl_buf_init(&mm->subject, 0);
	mm->journal = sl_path_join(s->ctx->repo.sysdir, RUNNER_MERGE_JOURNAL);
	error = render_subject(s, fields, &mm->subject, err);
	json_decref(fields);
	if (!error && !mm->journal)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	if (!error)
		fill_merge_opts(s, o, mm);
	return error;
}

void step__merge_msg_release(struct step_merge_msg *mm)
{
	sl_buf_release(&mm->subject);
	free(mm->title);
	free(mm->journal);
	memset(mm, 0, sizeof(*mm));
}

int step__approval_holds(struct step *s, struct sl_err *err)
{
	char tree[41];
	int error;

	if ((error = unchanged_since_review(s, err)) != 0)
		return error;
	if ((error = step__tree_of(s, s->run.head_commit, tree, err)) != 0)
		return error;
	if (!s->run.approved_tree || strcmp(tree, s->run.approved_tree)) {
		error = step__move(s, RUN_REVIEWING, err,
				   "the tree changed after the approval (%.12s); reviewing again",
				   tree);
		return error ? error : SENT_BACK;
	}
	return 0;
}

/* merging: land the run's tested car of the merge train (runner/step_train.c). */
int step_merge(struct step *s, struct sl_err *err)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result mr = MERGE_COMMIT_RESULT_INIT;
	struct step_merge_msg mm = STEP_MERGE_MSG_INIT;
	struct store_car car;
	struct landing_guard guard = { s, NULL };
	int error, rc = 0;

	if ((error = step__landing_car(s, &car, err)) != 0)
		return error == STEP_SENT_BACK ? STEP_NEXT : error;
	guard.commit = car.commit;
	if ((error = step__merge_msg(s, &mm, &o, err)) != 0)
		goto out;
	o.commit = car.commit;
	o.find_only = car.commit == NULL; /* a landing cut short: record it, merge nothing */
	o.guard = target_guard;
	o.guard_data = &guard;
	sl_fault("train.before_land");
	if ((error = merge_locked(s, &o, &mr, &rc, err)) == 0 && rc != 0)
		error = not_landed(s, rc, &mr, err);
out:
	merge_commit_result_release(&mr);
	step__merge_msg_release(&mm);
	store_car_release(&car);
	return error;
}

int step__holds(struct step *s, const char *head, const char *tip)
{
	git_repository *repo = NULL;
	git_oid h, t;
	int yes = 0;

	if (head && tip && git_oid_fromstr(&h, head) == 0 && git_oid_fromstr(&t, tip) == 0 &&
	    git_repository_open(&repo, s->ctx->repo.root) == 0)
		yes = git_oid_equal(&h, &t) || git_graph_descendant_of(repo, &h, &t) == 1;
	git_repository_free(repo);
	return yes;
}

/*
 * A person's resolution of this conflict (`sluice retry`, human.c): the
 * run's head holds the conflicted tip. Its gates run, as on a builder's;
 * so also when a tick was interrupted while they ran.
 */
static int resolved_by_person(struct step *s, const struct store_conflict *c, int *moved,
			      struct sl_err *err)
{
	*moved = step__person_resolved(s) && step__holds(s, s->run.head_commit, c->target_tip);
	if (!*moved)
		return 0;
	return step__move(s, RUN_GATING, err, "attempt %d: the resolution a person made "
			  "(%.12s); running the gates on it", s->run.attempt, s->run.head_commit);
}

int step_resolve(struct step *s, struct sl_err *err)
{
	struct merge_paths conflicted = MERGE_PATHS_INIT;
	struct sl_lock lock = SL_LOCK_INIT;
	/* the tip and head recorded when the merge conflicted (store), not conflict.json */
	struct store_conflict c = { 0 };
	const char *tip, *run_head;
	char n[16];
	int error, moved = 0;

	if ((error = store_conflict_get(s->ctx->st, s->run.id, &c, err)) != 0) {
		if (error != SL_ENOTFOUND)
			goto out;
		sl_err_clear(err);
		error = step__move(s, RUN_MERGE_CONFLICT, err,
				   "no merge conflict is recorded for this run; a person must decide");
		goto out;
	}
	tip = c.target_tip;
	run_head = c.run_head;
	if ((error = resolved_by_person(s, &c, &moved, err)) != 0 || moved)
		goto out;
	if ((error = runner__lock_repo(s->ctx, &lock, err)) != 0)
		goto out;
	/* start from the run's own head again (a failed resolution may have left a half merge) */
	if ((error = worktree_reset(s->wt, run_head, step__excluded(s), err)) == 0)
		error = merge_into_worktree(s->wt, tip, &conflicted, err);
	sl_lock_release(&lock);
	if (error)
		goto out;
	sl_fault("resolve.after_markers");
	snprintf(n, sizeof(n), "%d", s->run.attempt + 1);
	if ((error = step__set(s, err, "mode", run_mode_name(RUN_MODE_RESOLVE), "base_commit", tip,
			       "head_commit", run_head, "attempt", n, NULL)) != 0)
		goto out;
	if (c.kind == CONFLICT_SEMANTIC)
		error = step__move(s, RUN_BUILDING, err, "attempt %d: resolving the semantic "
				   "conflict with the builder (the merge gates failed)",
				   s->run.attempt);
	else
		error = step__move(s, RUN_BUILDING, err,
				   "attempt %d: resolving %zu conflicted file%s with the builder",
				   s->run.attempt, conflicted.n, conflicted.n == 1 ? "" : "s");
out:
	merge_paths_release(&conflicted);
	store_conflict_release(&c);
	return error;
}
