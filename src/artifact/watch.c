/*
 * What the watch did about a run (docs/watch.md), for its dossier (`sluice
 * show`, the desk's run page): the reverts of watch_reverts that name the
 * run's landing as a culprit, or its work order as a revert or a fix-up.
 */
#include "artifact/artifact_int.h"
#include "store/store.h"
#include "core/ctx.h"
#include "core/time.h"

#include <stdio.h>
#include <string.h>

/* The state of work order `id` as the queue says it, or NULL when the store does not know it. */
static json_t *wo_state(struct sl_ctx *ctx, const char *id)
{
	struct store_wo wo = STORE_WO_INIT;
	struct sl_err err = SL_ERR_INIT;
	json_t *j = NULL;

	if (store_wo_get(ctx->st, id, &wo, &err) == 0 && wo.state)
		j = json_string(wo.state);
	sl_err_clear(&err);
	store_wo_release(&wo);
	return j ? j : json_null();
}

/* The role the run plays in revert row w: culprit, revert, fix, or NULL. */
static const char *role_of(const struct store_watch_revert *w, const char *run_id,
			   const char *wo_id)
{
	if (!strcmp(w->culprit_run, run_id))
		return "culprit";
	if (!strcmp(w->revert_wo, wo_id))
		return "revert";
	if (!strcmp(w->fix_wo, wo_id))
		return "fix";
	return NULL;
}

static void add_rows(struct sl_ctx *ctx, json_t *a, const char *key, const char *run_id,
		     const char *wo_id)
{
	struct store_watch_revert *v = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0, i, k;
	const char *role;
	json_t *e;

	if (store_watch_revert_list(ctx->st, ctx->target_ref, key, &v, &n, &err) != 0)
		sl_err_clear(&err);
	for (i = 0; i < n; i++) {
		if (!(role = role_of(&v[i], run_id, wo_id)))
			continue;
		json_array_foreach(a, k, e) /* the run id and the work order found the same row */
			if (!strcmp(json_string_value(json_object_get(e, "culprit")), v[i].culprit))
				break;
		if (k < json_array_size(a))
			continue;
		json_array_append_new(
			a, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:o, s:o}",
				     "role", role, "gate", v[i].gate, "culprit", v[i].culprit,
				     "culprit_run", v[i].culprit_run, "culprit_work_order",
				     v[i].culprit_wo, "red_tip", v[i].tip, "revert_work_order",
				     v[i].revert_wo, "revert_state", wo_state(ctx, v[i].revert_wo),
				     "fix_work_order", v[i].fix_wo, "fix_state",
				     wo_state(ctx, v[i].fix_wo), "named_at",
				     artifact__iso_or_null(v[i].created_ms)));
	}
	store_watch_reverts_free(v, n);
}

json_t *artifact__watch_json(struct sl_ctx *ctx, const char *run_id, const char *wo_id)
{
	json_t *a = json_array();

	if (!a)
		return json_null();
	add_rows(ctx, a, run_id, run_id, wo_id);
	add_rows(ctx, a, wo_id, run_id, wo_id);
	return a;
}

void artifact_watch_line(json_t *e, char *out, size_t n)
{
	const char *role = json_string_value(json_object_get(e, "role"));
	const char *gate = json_string_value(json_object_get(e, "gate"));
	const char *culprit = json_string_value(json_object_get(e, "culprit"));
	const char *crun = json_string_value(json_object_get(e, "culprit_run"));
	const char *cwo = json_string_value(json_object_get(e, "culprit_work_order"));
	const char *rwo = json_string_value(json_object_get(e, "revert_work_order"));
	const char *fwo = json_string_value(json_object_get(e, "fix_work_order"));
	const char *rs = json_string_value(json_object_get(e, "revert_state"));
	const char *fs = json_string_value(json_object_get(e, "fix_state"));

	if (!strcmp(role, "culprit"))
		snprintf(out, n, "this landing (%.12s) broke the watch gate '%s'; reverted by work "
			 "order %s (%s), done again by %s (%s)", culprit, gate, rwo,
			 rs ? rs : "not read yet", fwo, fs ? fs : "not read yet");
	else if (!strcmp(role, "revert"))
		snprintf(out, n, "the revert of %.12s, the landing of run %s (work order %s), which "
			 "broke the watch gate '%s'; %s does that work again (%s)", culprit, crun,
			 cwo, gate, fwo, fs ? fs : "not read yet");
	else
		snprintf(out, n, "the fix-up of work order %s, whose landing %.12s (run %s) broke "
			 "the watch gate '%s'; it starts once the revert %s has landed (%s)", cwo,
			 culprit, crun, gate, rwo, rs ? rs : "not read yet");
}

#define WATCH_HTML_RUNS 30 /* the newest runs of the watch gates a page lists */

static void html_runs(struct sl_ctx *ctx, struct artifact_page *p)
{
	struct store_watch_run *v = NULL;
	struct sl_err err = SL_ERR_INIT;
	char at[40];
	size_t n = 0, i;

	if (store_watch_recent(ctx->st, ctx->target_ref, WATCH_HTML_RUNS, &v, &n, &err) != 0)
		sl_err_clear(&err);
	if (n)
		artifact_put(p, "<table id=\"watch-runs\"><tr><th>gate</th><th>commit</th>"
			     "<th>why</th><th>result</th><th>how</th><th>ended</th><th>first red "
			     "named</th></tr>\n");
	for (i = 0; i < n; i++) {
		sl_time_iso(at, sizeof(at), v[i].finished_ms);
		artifact_put(p, "<tr><td>");
		artifact_put_esc(p, v[i].gate);
		artifact_putf(p, "</td><td><code>%.12s</code></td><td>", v[i].commit);
		artifact_put_esc(p, !strcmp(v[i].purpose, "bisect") ? "bisection step"
				    : !strcmp(v[i].purpose, "again")  ? "tip, run again"
								      : "tip");
		artifact_putf(p, "</td><td>%s</td><td>", v[i].passed ? "green" : "red");
		artifact_put_esc(p, v[i].how);
		artifact_putf(p, "</td><td>%s</td><td>", at);
		if (v[i].culprit) {
			artifact_putf(p, "<code>%.12s</code> ", v[i].culprit);
			artifact_put_esc(p, v[i].culprit_run ? v[i].culprit_run : "a person's commit");
		}
		artifact_put(p, "</td></tr>\n");
	}
	if (n)
		artifact_put(p, "</table>\n");
	store_watch_runs_free(v, n);
}

static void html_reverts(struct sl_ctx *ctx, struct artifact_page *p)
{
	struct store_watch_revert *v = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0, i;
	json_t *rs, *fs;

	if (store_watch_revert_list(ctx->st, ctx->target_ref, NULL, &v, &n, &err) != 0)
		sl_err_clear(&err);
	if (n)
		artifact_put(p, "<table id=\"watch-reverts\"><tr><th>gate</th><th>landing</th>"
			     "<th>run</th><th>work order</th><th>revert</th><th>fix-up</th></tr>\n");
	for (i = 0; i < n; i++) {
		rs = wo_state(ctx, v[i].revert_wo);
		fs = wo_state(ctx, v[i].fix_wo);
		artifact_put(p, "<tr><td>");
		artifact_put_esc(p, v[i].gate);
		artifact_putf(p, "</td><td><code>%.12s</code></td><td>", v[i].culprit);
		artifact_put_esc(p, v[i].culprit_run);
		artifact_put(p, "</td><td>");
		artifact_put_esc(p, v[i].culprit_wo);
		artifact_put(p, "</td><td>");
		artifact_put_esc(p, v[i].revert_wo);
		artifact_put(p, " ");
		artifact_put_esc(p, json_is_string(rs) ? json_string_value(rs) : "(not read yet)");
		artifact_put(p, "</td><td>");
		artifact_put_esc(p, v[i].fix_wo);
		artifact_put(p, " ");
		artifact_put_esc(p, json_is_string(fs) ? json_string_value(fs) : "(not read yet)");
		artifact_put(p, "</td></tr>\n");
		json_decref(rs);
		json_decref(fs);
	}
	if (n)
		artifact_put(p, "</table>\n");
	store_watch_reverts_free(v, n);
}

void artifact_watch_html(struct sl_ctx *ctx, struct artifact_page *p)
{
	if (!ctx->cfg->watch.ngates)
		return;
	artifact_put(p, "<h2>Watch</h2>\n<p class=\"muted\">The watch gates on the target's "
		     "tip (sluice watch; docs/watch.md): each run, a bisection's steps, and the "
		     "landings reverted through the train with their fix-ups.</p>\n");
	html_runs(ctx, p);
	html_reverts(ctx, p);
}
