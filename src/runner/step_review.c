/* The reviewing state: the review package, the reviewer, the verdict. */
#include "runner/pipeline.h"
#include "store/workorders.h"
#include "reviewer/reviewer.h"
#include "core/fs.h"
#include "core/fault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIFF_READ_MAX ((size_t)256 << 20)

static const char **criteria_of(json_t *fields)
{
	json_t *list = json_object_get(fields, "acceptance_criteria"), *v;
	const char **out;
	size_t i, n = json_is_array(list) ? json_array_size(list) : 0, k = 0;

	if (!(out = calloc(n + 1, sizeof(*out))))
		return NULL;
	json_array_foreach(list, i, v)
		if (json_is_string(v))
			out[k++] = json_string_value(v);
	return out;
}

/* Build review-request.json for the current head. */
static int build_request(struct step *s, const char *tree, json_t **out, struct sl_err *err)
{
	struct reviewer_input in;
	struct store_wo wo = STORE_WO_INIT;
	json_t *fields = NULL, *files = NULL, *gates = NULL, *conflict = NULL;
	const char **criteria = NULL;
	char *diff = step__read(s, "diff.patch", DIFF_READ_MAX);
	char *summary = step__read(s, "summary.md", (size_t)1 << 20);
	int error;

	memset(&in, 0, sizeof(in));
	if (!diff) {
		/* fail closed: never ask for a review of a diff we do not have */
		error = sl_err_set(err, SL_ENOTFOUND,
				   "diff.patch of run '%s' is missing or unreadable", s->run.id);
		goto out;
	}
	if ((error = store_wo_get(s->ctx->st, s->run.work_order_id, &wo, err)) != 0)
		goto out;
	fields = json_loads(wo.fields_json ? wo.fields_json : "{}", 0, NULL);
	files = step__read_json(s, "files_changed.json");
	gates = step__read_json(s, "gates.json");
	criteria = criteria_of(fields);
	in.run_id = s->run.id;
	in.kind = strcmp(s->run.mode, "resolve") ? "build" : "resolution";
	in.wo_fields = fields;
	in.wo_body = wo.body;
	in.criteria = criteria;
	in.base = s->run.base_commit;
	in.head = s->run.head_commit;
	in.tree = tree;
	in.diff = diff ? diff : "";
	in.diff_len = diff ? strlen(diff) : 0;
	in.files_changed = files;
	in.builder_summary = summary;
	in.gates = gates;
	in.attempt = s->run.attempt;
	if (!strcmp(in.kind, "resolution")) {
		conflict = step__read_json(s, "conflict.json");
		in.conflict = conflict;
		in.rival_run_id = s->run.conflict_with_run_id;
	}
	if ((error = reviewer_request_new(out, &in, err)) == 0) {
		reviewer_redact_json(*out, s->ctx->cfg);
		error = step__write_json(s, "review-request.json", *out, err);
	}
out:
	store_wo_release(&wo);
	json_decref(fields);
	json_decref(files);
	json_decref(gates);
	json_decref(conflict);
	free(criteria);
	free(diff);
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

static int apply_verdict(struct step *s, const struct reviewer_verdict *v, const char *tree,
			 struct sl_err *err)
{
	const char *review_failed[] = { "review", NULL };
	char why[1200];
	int error;

	if ((error = record_verdict(s, v, err)) != 0)
		return error;
	sl_fault("review.after_record");
	if (!strcmp(v->verdict, "approve") && reviewer_verdict_approves_tree(v, tree)) {
		if ((error = step__set(s, err, "approved_tree", tree, "reviewer", v->reviewer,
				       "merge_status", "pending", NULL)) != 0)
			return error;
		return step__move(s, "approved", err, "approved by %s (tree %.12s)", v->reviewer,
				  tree);
	}
	if (!strcmp(v->verdict, "reject"))
		return step__fail(s, "rejected", err, "rejected by %s: %.900s", v->reviewer,
				  v->comments);
	snprintf(why, sizeof(why), "%s asked for changes: %.900s", v->reviewer, v->comments);
	return step__retry_or_fail(s, review_failed, 0, why, err);
}

int step_review(struct step *s, struct sl_err *err)
{
	struct reviewer_verdict v = REVIEWER_VERDICT_INIT;
	struct reviewer_log log;
	json_t *req = NULL;
	char tree[41], n[16];
	int error;

	memset(&log, 0, sizeof(log));
	step__sanitize_run_dir(s);
	if ((error = step__tree_of(s, s->run.head_commit, tree, err)) != 0 ||
	    (error = build_request(s, tree, &req, err)) != 0)
		goto out;
	if (s->ctx->cfg->reviewer.mode == SL_REVIEWER_MANUAL) {
		error = step__move(s, "awaiting_review", err,
				   "waiting for a person: 'sluice approve %s' or 'sluice reject %s "
				   "-m TEXT' (review-request.json has the package)",
				   s->run.id, s->run.id);
		if (!error)
			error = STEP_STOP;
		goto out;
	}
	sl_fault("review.before_request");
	if ((error = reviewer_review(s->ctx->cfg, req, &v, &log, err)) != 0) {
		/* fail closed: the run stays reviewing with the reason */
		char why[SL_ERR_MSG_MAX + 64];
		snprintf(n, sizeof(n), "%d", s->run.review_tries + 1);
		snprintf(why, sizeof(why), "%s (review try %d; tried again next tick)", err->msg,
			 s->run.review_tries + 1);
		sl_err_clear(err);
		if ((error = step__set(s, err, "review_tries", n, NULL)) == 0 &&
		    (error = store_run_set_reason(s->ctx->st, s->run.id, why, err)) == 0)
			error = STEP_STOP;
		goto out;
	}
	sl_fault("review.after_verdict");
	error = apply_verdict(s, &v, tree, err);
out:
	reviewer_verdict_release(&v);
	json_decref(req);
	return error;
}
