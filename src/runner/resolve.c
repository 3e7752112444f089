/*
 * A conflict handed on: to a resolving builder (the conflict recorded, its
 * ConflictContext rebuilt from the store and git) or to a person (the
 * worktree made clean at the run's head). The merge, the train and the
 * builder's steps all end here when a merge does not go through.
 */
#include "runner/runner_int.h"
#include "store/store.h"
#include "worktree/worktree.h"
#include "artifact/artifact.h"
#include "merge/merge.h"
#include "train/train.h"
#include "core/fs.h"
#include "core/fault.h"
#include "core/id.h"
#include "core/log.h"
#include "core/time.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONTEXT_DIFF_MAX ((size_t)256 << 10)

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
		      step__wo_fields(s, r->work_order_id, NULL), "diff",
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

/*
 * Whether a conflict goes to a person: no resolver, its attempts used up,
 * or a revert run (docs/watch.md: no agent rewrites what a revert undoes).
 */
static int no_resolver(struct step *s)
{
	struct step_revert rv;

	return !strcmp(s->ctx->cfg->merge.resolver, "none") ||
	       s->run.resolve_attempts >= s->ctx->cfg->merge.resolve_attempts ||
	       step__revert_of(s, &rv);
}

static int semantic_move(struct step *s, const char *gates, const char *const *rivals,
			 struct sl_err *err)
{
	char who[512];

	rival_names(s, rivals, who, sizeof(who));
	if (no_resolver(s))
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
	struct step_revert rv;
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
	if (no_resolver(s))
		error = step__move(s, RUN_MERGE_CONFLICT, err,
				   "merge conflict with %s in %zu file%s (%s); %s: see 'sluice show %s'",
				   rival ? rival : s->ctx->cfg->target, ci.paths.n,
				   ci.paths.n == 1 ? "" : "s", why, step__revert_of(s, &rv) ?
				   "the revert no longer applies (later landings built on what it "
				   "undoes); a person must decide" : "a person must decide",
				   s->run.id);
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
		char runs[128];
		if (g->passed || used >= n)
			continue;
		train_red_runs_words((int)json_integer_value(json_object_get(g->json, "red_runs")),
				     json_string_value(json_object_get(g->json, "tree")), runs,
				     sizeof(runs));
		used += (size_t)snprintf(buf + used, n - used, "%s%s (exit %d%s%s)", used ? ", " : "",
					 g->name ?: "?", g->exit_code, runs[0] ? "; " : "", runs);
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
