/*
 * Revert runs (docs/watch.md, "Reverts through the train"): a work order
 * with `revert: {commit, run, gate}` is built by sluice, not by an agent.
 * Its branch starts at the landing to revert and its one commit holds the
 * tree of that landing's first parent, so its diff is the exact inverse of
 * the landing and the train's merge onto the tip is git's `revert -m 1`:
 * clean when nothing landed since touches the same lines, a conflict for a
 * person otherwise (never a builder's resolution).
 */
#include "runner/runner_int.h"
#include "store/store.h"
#include "core/fs.h"
#include "core/git.h"
#include "core/proc.h"
#include "core/time.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int step__revert_of(struct step *s, struct step_revert *r)
{
	json_t *all = step__wo_fields(s, s->run.work_order_id, NULL);
	json_t *rv = json_object_get(all, "revert");
	const char *commit = json_string_value(json_object_get(rv, "commit"));
	const char *gate = json_string_value(json_object_get(rv, "gate"));

	memset(r, 0, sizeof(*r));
	/* the queue checked the shape (queue/validate.c); a bad row is no revert */
	if (commit && strlen(commit) == 40 && strspn(commit, "0123456789abcdef") == 40) {
		memcpy(r->commit, commit, 41);
		snprintf(r->gate, sizeof(r->gate), "%s", gate ? gate : "");
	}
	json_decref(all);
	return r->commit[0] != '\0';
}

/*
 * The landing's first parent into r->parent; SL_EINVALID (final) when the
 * landing is not a commit of the target or has no parent.
 */
static int revert_parent(struct step *s, struct step_revert *r, const char *tip_hex,
			 struct sl_err *err)
{
	git_repository *repo = NULL;
	git_commit *c = NULL;
	git_oid oid, tip;
	int rc, error = 0;

	if ((rc = git_repository_open(&repo, s->ctx->repo.root)) < 0 ||
	    (rc = git_oid_fromstr(&oid, r->commit)) < 0 || (rc = git_oid_fromstr(&tip, tip_hex)) < 0) {
		error = sl_err_git(err, rc, "cannot read the commit to revert");
		goto out;
	}
	if (git_commit_lookup(&c, repo, &oid) < 0) {
		error = sl_err_set(err, SL_EINVALID, "the commit to revert %.12s is not in this "
				   "repository", r->commit);
		goto out;
	}
	if (!git_oid_equal(&oid, &tip) && (rc = git_graph_descendant_of(repo, &tip, &oid)) != 1) {
		error = rc < 0 ? sl_err_git(err, rc, "cannot read the history of '%s'",
					    s->ctx->cfg->target)
			       : sl_err_set(err, SL_EINVALID, "the commit to revert %.12s is not on "
					    "'%s'; nothing to revert", r->commit, s->ctx->cfg->target);
		goto out;
	}
	if (git_commit_parentcount(c) < 1) {
		error = sl_err_set(err, SL_EINVALID, "the commit to revert %.12s is the first "
				   "commit; it has no parent to go back to", r->commit);
		goto out;
	}
	git_oid_tostr(r->parent, sizeof(r->parent), git_commit_parent_id(c, 0));
out:
	git_commit_free(c);
	git_repository_free(repo);
	return error;
}

int step__revert_base(struct step *s, struct sl_err *err)
{
	struct step_revert r;
	char tip[41];
	int error;

	if (s->run.base_commit || !step__revert_of(s, &r))
		return 0;
	if ((error = step__target_tip(s, tip, err)) == SL_ENOTFOUND)
		error = SL_EINVALID;
	if (error || (error = revert_parent(s, &r, tip, err)) != 0)
		return error;
	/* a new revision of a revert that landed reverts nothing again */
	if (store_runs_count_of(s->ctx->st, 1u << RUN_MERGED, s->run.work_order_id, err) > 0)
		return sl_err_set(err, SL_EINVALID, "work order '%s' landed its revert of %.12s "
				  "already; write a new work order to revert again",
				  s->run.work_order_id, r.commit);
	/* the branch starts at the landing: what it undoes is exactly that landing */
	return step__set(s, err, "base_commit", r.commit, NULL);
}

int step__revert_build(struct step *s, const struct step_revert *r, struct sl_proc_result *res,
		       struct sl_err *err)
{
	struct step_revert full = *r;
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	struct sl_git_result gr;
	struct sl_buf out = SL_BUF_INIT;
	char *log = step__path(s, "builder.log"), tip[41], text[SL_ERR_MSG_MAX + 400];
	const char *args[] = { "read-tree", "-u", "--reset", full.parent, NULL };
	int64_t t0 = sl_now_ms();
	int error;

	memset(res, 0, sizeof(*res));
	if (!log)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if ((error = step__target_tip(s, tip, err)) != 0 ||
	    (error = revert_parent(s, &full, tip, err)) != 0)
		goto out;
	/* the landing's first parent's tree, files it added removed: its exact inverse */
	sl_buf_init(&out, 64 << 10);
	o.cwd = s->wt;
	o.ceiling = 1;
	o.out = &out;
	o.out_cut_ok = 1;
	error = sl_git_run(&o, args, &gr, err);
	res->exit_code = error ? 1 : 0;
	res->duration_ms = sl_now_ms() - t0;
	snprintf(text, sizeof(text), "sluice: revert of %s: the worktree set to the tree of its "
		 "first parent %s (git read-tree -u --reset); no agent runs for a revert%s%s\n",
		 full.commit, full.parent, error ? ": " : "", error ? err->msg : "");
	sl_write_file(log, text, strlen(text), NULL);
	if (error)
		error = sl_err_set(err, SL_EINVALID, "cannot revert %.12s: %s", full.commit,
				   err->msg);
out:
	sl_buf_release(&out);
	free(log);
	return error;
}

int step__revert_exact(struct step *s, const struct step_revert *r, const char *tree,
		       struct sl_err *err)
{
	struct step_revert full = *r;
	char tip[41], want[41];
	int error;

	if (!s->run.base_commit || strcmp(s->run.base_commit, r->commit))
		return 0;
	if ((error = step__target_tip(s, tip, err)) != 0 ||
	    (error = revert_parent(s, &full, tip, err)) != 0 ||
	    (error = step__tree_of(s, full.parent, want, err)) != 0)
		return error == SL_EINVALID ? 0 : error;
	return !strcmp(want, tree);
}

int step__revert_train_cfg(struct step *s, struct step_revert_cfg *out)
{
	const struct sl_config *cfg = s->ctx->cfg;
	const struct sl_gate *w = NULL;
	struct step_revert r;
	size_t i, n = 0;

	memset(out, 0, sizeof(*out));
	if (!step__revert_of(s, &r) || !r.gate[0])
		return 0;
	for (i = 0; i < cfg->watch.ngates && !w; i++)
		if (!strcmp(cfg->watch.gates[i].name, r.gate))
			w = &cfg->watch.gates[i];
	if (!w)
		return 0; /* a gate since removed from watch.gates: the merge gates only */
	snprintf(out->name, sizeof(out->name), "watch.%s", w->name);
	out->cfg = *cfg;
	if (!(out->gates = calloc(cfg->ngates + 1, sizeof(*out->gates))))
		return -1;
	if (cfg->ngates) /* no gates: cfg->gates is NULL */
		memcpy(out->gates, cfg->gates, cfg->ngates * sizeof(*out->gates));
	out->gates[cfg->ngates] = *w;
	out->gates[cfg->ngates].name = out->name; /* never a config gate's: those have no '.' */
	out->cfg.gates = out->gates;
	out->cfg.ngates = cfg->ngates + 1;
	if (cfg->merge.gates) { /* the merge gates named, and the watch gate */
		while (cfg->merge.gates[n])
			n++;
		if (!(out->merge_gates = calloc(n + 2, sizeof(*out->merge_gates))))
			return -1;
		memcpy(out->merge_gates, cfg->merge.gates, n * sizeof(*out->merge_gates));
		out->merge_gates[n] = out->name;
		out->cfg.merge.gates = out->merge_gates;
	}
	out->ctx = *s->ctx;
	out->ctx.cfg = &out->cfg;
	return 1;
}

void step__revert_cfg_release(struct step_revert_cfg *c)
{
	free(c->gates);
	free(c->merge_gates);
	memset(c, 0, sizeof(*c));
}

int step__revert_by_watch(struct step *s, const struct step_revert *r)
{
	struct store_watch_revert *v = NULL;
	struct sl_err e = SL_ERR_INIT;
	size_t n = 0, i;
	int found = 0;

	if (store_watch_revert_list(s->ctx->st, s->ctx->target_ref, s->run.work_order_id, &v, &n,
				    &e) != 0)
		sl_err_clear(&e); /* not found is not made: a person decides */
	for (i = 0; i < n; i++)
		found |= !strcmp(v[i].revert_wo, s->run.work_order_id) &&
			 !strcmp(v[i].culprit, r->commit);
	store_watch_reverts_free(v, n);
	return found;
}
