/* The reviewing state: the review package, the reviewer, the verdict. */
#include "runner/runner_int.h"
#include "store/store.h"
#include "worktree/worktree.h"
#include "reviewer/reviewer.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/fault.h"

#include <fcntl.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SUMMARY_MAX ((size_t)1 << 20)
#define ARTIFACT_JSON_MAX ((size_t)16 << 20)
#define REASON_COMMENTS_MAX 900

/*
 * A JSON artifact the builder or a gate may have rewritten, read only for
 * the numbers of the gate results, bounded; NULL when missing, too large or
 * malformed.
 */
static json_t *read_json_bounded(struct step *s, const char *name)
{
	struct sl_err err = SL_ERR_INIT;
	char *path = step__path(s, name);
	json_t *j = NULL;

	if (path)
		sl_json_read(path, ARTIFACT_JSON_MAX, &j, &err);
	free(path);
	return j;
}

static int argv_equal(json_t *a, sl_strv want)
{
	size_t i, n = 0;

	while (want && want[n])
		n++;
	if (!json_is_array(a) || json_array_size(a) != n)
		return 0;
	for (i = 0; i < n; i++)
		if (!json_is_string(json_array_get(a, i)) ||
		    strcmp(json_string_value(json_array_get(a, i)), want[i]))
			return 0;
	return 1;
}

/*
 * The gate results shown to the reviewer: the configured gates, in order,
 * with their names, commands and logs from the config. gates.json lies in
 * the run folder, where a process a gate left behind can rewrite it: only
 * the outcome of an entry with the same name and command is taken from it
 * (a run reaches review only once every gate passed), so it adds no gate
 * and changes no command. A gate without such an entry is shown without a
 * result.
 */
static json_t *gates_for_review(struct step *s)
{
	json_t *file = read_json_bounded(s, "gates.json"), *out = json_array(), *e, *g;
	const struct sl_config *cfg = s->ctx->cfg;
	const char *keep[] = { "exit_code", "passed", "duration_ms", "timed_out", NULL };
	char *log;
	size_t i, k;

	for (i = 0; out && i < cfg->ngates; i++) {
		const struct sl_gate *gate = &cfg->gates[i];
		json_t *argv = json_array();
		sl_strv a;

		for (a = gate->argv; argv && a && *a; a++)
			json_array_append_new(argv, json_string(*a));
		log = sl_path_fmt("gates/%s.log", gate->name);
		g = log ? json_pack("{s:s, s:o, s:s}", "name", gate->name, "argv", argv, "log", log)
			: NULL;
		free(log);
		if (!g)
			continue;
		json_array_foreach(json_is_array(file) ? file : NULL, k, e) {
			const char *name = json_string_value(json_object_get(e, "name"));
			const char **f;

			if (!name || strcmp(name, gate->name) ||
			    !argv_equal(json_object_get(e, "argv"), gate->argv))
				continue;
			for (f = keep; *f; f++)
				if (json_is_integer(json_object_get(e, *f)) ||
				    json_is_boolean(json_object_get(e, *f)))
					json_object_set(g, *f, json_object_get(e, *f));
			break;
		}
		if (!json_object_get(g, "passed"))
			json_object_set_new(g, "error", json_string("no result recorded for this "
								    "gate's command"));
		json_array_append_new(out, g);
	}
	json_decref(file);
	return out;
}

/* A resolution's conflict context, from the store and git (step__conflict_context). */
static json_t *conflict_for_review(struct step *s)
{
	struct sl_err err = SL_ERR_INIT;
	json_t *c = NULL;

	if (step__conflict_context(s, &c, &err) != 0 || !c)
		c = json_pack("{s:s}", "error", err.msg[0] ? err.msg : "no conflict context");
	return c;
}

/* summary.md is the builder's own words: up to SUMMARY_MAX of them. */
static char *read_summary(struct step *s)
{
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	char *path = step__path(s, "summary.md"), *out = NULL;
	int error;

	if (!path)
		return NULL;
	error = sl_read_file(&b, path, SUMMARY_MAX, &err);
	if (error == SL_ETOOBIG)
		out = strdup("[summary.md is over 1 MiB; sluice did not include it]");
	else if (!error)
		out = sl_buf_detach(&b);
	sl_buf_release(&b);
	free(path);
	return out;
}

/*
 * 1 when `path` is a regular file of one link holding exactly data[0..len):
 * opened under the guard (never through a link), bounded by len.
 */
static int holds(const char *path, const char *data, size_t len)
{
	struct sl_buf cur = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	struct stat st;
	int fd = -1, same = 0;

	if (sl_open_file(path, O_RDONLY | O_NONBLOCK, 0, &fd, &err) != 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
	    (size_t)st.st_size == len && sl_read_fd(&cur, fd, path, len, &err) == 0)
		same = cur.len == len && (!len || !memcmp(cur.ptr, data, len));
	close(fd);
	sl_buf_release(&cur);
	return same;
}

/*
 * Write an artifact the reviewer is shown, atomically, unless the file
 * holds those very bytes already (the build step wrote it moments before):
 * the same bytes are sealed either way, without two fsyncs for nothing.
 */
static int write_unless_same(const char *path, const char *data, size_t len,
			     struct sl_err *err)
{
	if (holds(path, data, len))
		return 0;
	return sl_write_file_atomic(path, data, len, err);
}

/*
 * The diff under review, computed now from the base and head recorded in
 * the store (git objects, never diff.patch or files_changed.json: a gate
 * runs the project's code with $SLUICE_RUN_DIR and may have rewritten
 * them), or the build's kept in this process's memory (step__diff_kept()).
 * The two artifacts are written again from the same objects, so that what
 * people read and what is sealed in the manifest is what the reviewer saw.
 * `patch` holds at most its max; *total is the full size.
 */
static int diff_now(struct step *s, struct sl_buf *patch, size_t *total, json_t **files,
		    struct sl_err *err)
{
	struct worktree_file_changes fc = WORKTREE_FILE_CHANGES_INIT;
	const char *root = s->ctx->repo.root, *base = s->run.base_commit, *head = s->run.head_commit;
	char *patch_path = step__path(s, "diff.patch");
	char *files_path = step__path(s, "files_changed.json"), *text = NULL;
	int error;

	*files = NULL;
	if (!patch_path || !files_path) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((!step__diff_kept(s, base, head, patch, total) &&
	     (error = worktree_diff_patch_mem(root, base, head, patch, total, err)) != 0) ||
	    (error = worktree_diff_files(root, base, head, &fc, err)) != 0)
		goto out;
	if (!(*files = worktree_file_changes_to_json(&fc))) {
		error = sl_err_set(err, SL_ERROR, "out of memory listing the files of run '%s'",
				   s->run.id);
		goto out;
	}
	if (!(text = sl_json_format(*files))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = write_unless_same(files_path, text, strlen(text), err)) != 0)
		goto out;
	if (*total == patch->len) /* all of it is here: no second git diff */
		error = write_unless_same(patch_path, patch->ptr ? patch->ptr : "", patch->len,
					  err);
	else
		error = worktree_diff_patch(root, base, head, patch_path, err);
out:
	if (error) {
		json_decref(*files);
		*files = NULL;
	}
	worktree_file_changes_release(&fc);
	free(text);
	free(patch_path);
	free(files_path);
	return error;
}

/*
 * The reviewed diff is base..head. A resolution's base comes from the
 * conflict context, a file the resolving builder could rewrite: the base
 * must be the head's ancestor (or the head itself) and, for a resolution,
 * a commit of the target branch, or the diff shown would not be what the
 * merge lands. SL_EINVALID when it is not (final); other errors are git's.
 */
static int check_base(struct step *s, struct sl_err *err)
{
	git_repository *repo = NULL;
	git_oid base, head, tip;
	char tip_hex[41];
	int rc, error = 0, resolution = s->run.mode == RUN_MODE_RESOLVE;

	if (!s->run.base_commit || !s->run.head_commit)
		return sl_err_set(err, SL_EINVALID, "run '%s' has no recorded base or head commit",
				  s->run.id);
	if (resolution && (error = step__target_tip(s, tip_hex, err)) != 0)
		return error;
	if ((rc = git_repository_open(&repo, s->ctx->repo.root)) < 0 ||
	    (rc = git_oid_fromstr(&base, s->run.base_commit)) < 0 ||
	    (rc = git_oid_fromstr(&head, s->run.head_commit)) < 0 ||
	    (resolution && (rc = git_oid_fromstr(&tip, tip_hex)) < 0)) {
		error = sl_err_git(err, rc, "cannot read the commits of run '%s'", s->run.id);
		goto out;
	}
	if (!git_oid_equal(&base, &head) && (rc = git_graph_descendant_of(repo, &head, &base)) != 1) {
		error = rc < 0 ? sl_err_git(err, rc, "cannot read the history of run '%s'", s->run.id)
			       : sl_err_set(err, SL_EINVALID,
					    "the run's head %.12s does not descend from its base "
					    "%.12s; nothing is reviewed against a base the head "
					    "does not build on",
					    s->run.head_commit, s->run.base_commit);
		goto out;
	}
	if (resolution && !git_oid_equal(&base, &tip) &&
	    (rc = git_graph_descendant_of(repo, &tip, &base)) != 1)
		error = rc < 0 ? sl_err_git(err, rc, "cannot read the history of '%s'",
					    s->ctx->cfg->target)
			       : sl_err_set(err, SL_EINVALID,
					    "the resolution's base %.12s is not a commit of '%s' "
					    "(was conflict.json changed?); nothing is reviewed "
					    "against it",
					    s->run.base_commit, s->ctx->cfg->target);
out:
	git_repository_free(repo);
	return error;
}

int step__review_request(struct step *s, const char *tree, json_t **out, struct sl_err *err)
{
	struct reviewer_input in;
	struct store_wo wo = STORE_WO_INIT;
	struct sl_buf patch;
	struct store_wo_fields fields = { 0 };
	struct sl_err ignored = SL_ERR_INIT;
	json_t *files = NULL, *gates = NULL, *conflict = NULL;
	char *summary = NULL;
	size_t total = 0;
	int error;

	memset(&in, 0, sizeof(in));
	sl_buf_init(&patch, REVIEWER_DIFF_MAX_DEFAULT);
	if ((error = diff_now(s, &patch, &total, &files, err)) != 0 ||
	    (error = store_wo_get(s->ctx->st, s->run.work_order_id, &wo, err)) != 0)
		goto out;
	store_wo_fields_parse(wo.id, wo.fields_json, &fields, &ignored); /* logged there */
	gates = gates_for_review(s);
	summary = read_summary(s);
	in.run_id = s->run.id;
	in.kind = s->run.mode == RUN_MODE_RESOLVE ? "resolution" : "build";
	if (step__worktree_mode(s) != SL_WORKTREE_READ_WRITE) {
		/* a read-only or none run: its report, in place of the (empty) diff */
		in.kind = "report";
		in.report = summary;
		in.worktree = sl_worktree_mode_name(step__worktree_mode(s));
	}
	in.wo_fields = fields.all;
	in.wo_body = wo.body;
	in.criteria = fields.criteria;
	in.base = s->run.base_commit;
	in.head = s->run.head_commit;
	in.tree = tree;
	in.diff = sl_buf_cstr(&patch);
	in.diff_len = total; /* patch holds min(total, diff_max) bytes */
	in.diff_max = REVIEWER_DIFF_MAX_DEFAULT;
	in.files_changed = files;
	in.builder_summary = summary;
	in.gates = gates;
	in.attempt = s->run.attempt;
	if (!strcmp(in.kind, "resolution")) {
		conflict = conflict_for_review(s);
		in.conflict = json_is_object(conflict) ? conflict : NULL;
		in.rival_run_id = s->run.conflict_with_run_id;
	}
	if ((error = reviewer_request_new(out, &in, err)) == 0) {
		reviewer_redact_json(*out, s->ctx->cfg);
		error = step__write_json(s, "review-request.json", *out, err);
	}
out:
	store_wo_release(&wo);
	sl_buf_release(&patch);
	store_wo_fields_release(&fields);
	json_decref(files);
	json_decref(gates);
	json_decref(conflict);
	free(summary);
	return error;
}

static int record_verdict(struct step *s, const struct reviewer_verdict *v, struct sl_err *err)
{
	json_t *j = reviewer_verdict_to_json(v);
	char name[64];
	int error;

	if (!j)
		return sl_err_set(err, SL_ERROR, "out of memory");
	reviewer_redact_json(j, s->ctx->cfg);
	error = step__write_json(s, "review.json", j, err);
	snprintf(name, sizeof(name), "attempts/%d/review.json", s->run.attempt);
	if (!error)
		error = step__write_json(s, name, j, err);
	json_decref(j);
	return error;
}

/*
 * The reviewer's comments as part of a run's reason: one line (newlines and
 * tabs become spaces, other control bytes '?', so that `sluice runs`, `log`
 * and `tick` print no escape code or fake line), at most REASON_COMMENTS_MAX
 * bytes, cut at a character. review.json keeps them whole.
 */
static void reason_text(char *out, size_t n, const char *s)
{
	size_t len = strlen(s), i, k = 0;
	int cut = len > REASON_COMMENTS_MAX;

	if (cut) /* back to the start of a character */
		for (len = REASON_COMMENTS_MAX; len && ((unsigned char)s[len] & 0xc0) == 0x80; len--)
			;
	for (i = 0; i < len && k + 4 < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n' || c == '\r' || c == '\t')
			out[k++] = ' ';
		else
			out[k++] = c < 0x20 || c == 0x7f ? '?' : s[i];
	}
	snprintf(out + k, n - k, "%s", cut ? "..." : "");
}

static int apply_verdict(struct step *s, const struct reviewer_verdict *v, const char *tree,
			 struct sl_err *err)
{
	const char *review_failed[] = { "review", NULL };
	char why[1200], comments[1000];
	int error;

	if ((error = record_verdict(s, v, err)) != 0)
		return error;
	sl_fault("review.after_record");
	if (step__worktree_mode(s) != SL_WORKTREE_READ_WRITE) {
		reason_text(comments, sizeof(comments), v->comments);
		return step__report_verdict(s, v, tree, comments, err);
	}
	if (!strcmp(v->verdict, "approve") && reviewer_verdict_approves_tree(v, tree)) {
		if ((error = step__set(s, err, "approved_tree", tree, "reviewer", v->reviewer,
				       "merge_status", run_merge_status_name(RUN_MERGE_STATUS_PENDING),
				       NULL)) != 0)
			return error;
		return step__move(s, RUN_APPROVED, err, "approved by %s (tree %.12s)", v->reviewer,
				  tree);
	}
	reason_text(comments, sizeof(comments), v->comments);
	if (!strcmp(v->verdict, "reject"))
		return step__fail(s, RUN_REJECTED, err, "rejected by %s: %s", v->reviewer, comments);
	snprintf(why, sizeof(why), "%s asked for changes: %s", v->reviewer, comments);
	return step__retry_or_fail(s, review_failed, 0, why, err);
}

/*
 * A revert run (docs/watch.md): watch.revert_review auto approves only an
 * exact revert the watch made (the head's tree is the landing's first
 * parent's, on the landing); anything else, and `person`, waits for a
 * person: a `revert:` a person wrote is reviewed by a person.
 */
static int review_revert(struct step *s, const struct step_revert *rv, const char *tree,
			 struct sl_err *err)
{
	struct reviewer_verdict v = REVIEWER_VERDICT_INIT;
	const char *why = "person";
	char comments[256];
	json_t *j;
	int exact = 0, error;

	if (s->ctx->cfg->watch.revert_auto && !step__revert_by_watch(s, rv))
		why = "auto, but the watch did not make this revert";
	else if (s->ctx->cfg->watch.revert_auto &&
		 (exact = step__revert_exact(s, rv, tree, err)) < 0)
		return exact;
	else if (s->ctx->cfg->watch.revert_auto && !exact)
		why = "auto, but it is not an exact revert";
	if (!exact) {
		error = step__move(s, RUN_AWAITING_REVIEW, err,
				   "a revert of %.12s waits for a person (watch.revert_review: %s): "
				   "'sluice approve %s' or 'sluice reject %s -m TEXT' (diff.patch "
				   "has what it undoes)",
				   rv->commit, why, s->run.id, s->run.id);
		return error ? error : STEP_STOP;
	}
	snprintf(comments, sizeof(comments), "an exact revert of %s: the tree of its first "
		 "parent, on it (watch.revert_review: auto)", rv->commit);
	if (!(j = json_pack("{s:s, s:s, s:s}", "verdict", "approve", "comments", comments,
			    "reviewer", "sluice (exact revert)")))
		return sl_err_set(err, SL_ERROR, "out of memory");
	if ((error = reviewer_verdict_from_json(&v, j, tree, err)) == 0)
		error = apply_verdict(s, &v, tree, err);
	reviewer_verdict_release(&v);
	json_decref(j);
	return error;
}

int step_review(struct step *s, struct sl_err *err)
{
	struct reviewer_verdict v = REVIEWER_VERDICT_INIT;
	struct step_revert rv;
	struct reviewer_log log;
	json_t *req = NULL;
	char tree[41], n[16];
	int error;

	memset(&log, 0, sizeof(log));
	step__sanitize_run_dir(s);
	if ((error = check_base(s, err)) == SL_EINVALID) {
		error = step__fail(s, RUN_FAILED, err, "cannot review: %s", err->msg);
		goto out;
	}
	/* the tree under review is the head's, from git: the approval binds to it */
	if (error || (error = step__tree_of(s, s->run.head_commit, tree, err)) != 0 ||
	    (error = step__review_request(s, tree, &req, err)) != 0)
		goto out;
	if (step__revert_of(s, &rv)) {
		error = review_revert(s, &rv, tree, err);
		goto out;
	}
	if (s->ctx->cfg->reviewer.mode == SL_REVIEWER_MANUAL) {
		error = step__move(s, RUN_AWAITING_REVIEW, err,
				   "waiting for a person: 'sluice approve %s', 'sluice "
				   "request-changes %s -m TEXT' or 'sluice reject %s -m TEXT' "
				   "(review-request.json has the package)",
				   s->run.id, s->run.id, s->run.id);
		if (!error)
			error = STEP_STOP;
		goto out;
	}
	sl_fault("review.before_request");
	if ((error = reviewer_review(s->ctx->cfg, req, &v, &log, err)) != 0) {
		/* fail closed: the run stays reviewing with the reason */
		char why[SL_ERR_MSG_MAX + 64], msg[SL_ERR_MSG_MAX + 8];
		snprintf(n, sizeof(n), "%d", s->run.review_tries + 1);
		reason_text(msg, sizeof(msg), err->msg); /* a parser's message may quote the reply */
		snprintf(why, sizeof(why), "%s (review try %d; tried again next tick)", msg,
			 s->run.review_tries + 1);
		sl_err_clear(err);
		if ((error = step__set(s, err, "review_tries", n, NULL)) == 0 &&
		    (error = store_run_set_reason(s->ctx->st, s->run.id, why, err)) == 0)
			error = STEP_STOP;
		goto out;
	}
	step__record_review_usage(s, json_object_get(v.raw, "usage"), log.elapsed_ms);
	sl_fault("review.after_verdict");
	error = apply_verdict(s, &v, tree, err);
out:
	reviewer_verdict_release(&v);
	json_decref(req);
	return error;
}
