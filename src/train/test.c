/*
 * A car's test (docs/ARCHITECTURE.md, The merge train): the merge gates
 * (merge.gates; default every gate) on the car's merge commit, claimed and
 * recorded under the repository lock by the process that tests it, so that
 * a car rebuilt meanwhile keeps no stale result.
 */
#include "train/train.h"
#include "train/train_int.h"
#include "core/ctx.h"
#include "executor/executor.h"
#include "builder/builder.h"
#include "worktree/worktree.h"
#include "store/store.h"
#include "core/config.h"
#include "core/fault.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/lock.h"
#include "core/log.h"
#include "core/time.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 when gate i runs on the merge train's cars (merge.gates; default: every gate). */
static int merge_gate(const struct sl_config *cfg, size_t i)
{
	size_t k;

	if (!cfg->merge.gates)
		return 1; /* default: every gate */
	for (k = 0; cfg->merge.gates[k]; k++)
		if (!strcmp(cfg->merge.gates[k], cfg->gates[i].name))
			return 1;
	return 0;
}

void train_gate_names(const struct sl_config *cfg, char *buf, size_t n)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < cfg->ngates && used < n; i++)
		if (merge_gate(cfg, i))
			used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? ", " : "",
						 cfg->gates[i].name);
	if (!buf[0])
		snprintf(buf, n, "none");
}

int train_has_merge_gates(const struct sl_config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->ngates; i++)
		if (merge_gate(cfg, i))
			return 1;
	return 0;
}

/* 1 when names (NULL: any) holds the gate's name. */
static int named(const char *const *names, const char *gate)
{
	size_t k;

	for (k = 0; names && names[k]; k++)
		if (!strcmp(names[k], gate))
			return 1;
	return !names;
}

/*
 * cfg with only the gates merge.gates names, of those only `names` (NULL:
 * all; borrowed strings): *subset is the caller's to free.
 */
static struct sl_config merge_gates_cfg(const struct sl_config *cfg, const char *const *names,
					struct sl_gate **subset)
{
	struct sl_config c = *cfg;
	size_t i;

	*subset = calloc(cfg->ngates + 1, sizeof(**subset));
	c.gates = *subset;
	c.ngates = 0;
	for (i = 0; *subset && i < cfg->ngates; i++)
		if (merge_gate(cfg, i) && named(names, cfg->gates[i].name))
			(*subset)[c.ngates++] = cfg->gates[i];
	return c;
}

/*
 * The merge gates as a job (executor.kind slurm or kubernetes) on the car's
 * commit, pushed as refs/sluice/train/<id>/<commit>/head: a job lost or
 * cancelled is an error, and the train tries the car again next tick.
 */
static int gates_job(const struct train_run *tr, const struct sl_config *c, const char *commit,
		     struct build_gate_results *gr, struct sl_err *err)
{
	struct exec_run r;
	struct exec_outcome oc;
	int error;

	memset(&r, 0, sizeof(r));
	r.st = tr->ctx->st;
	r.repo_root = tr->ctx->repo.root;
	r.run_id = tr->run->id;
	r.work_order_id = tr->run->work_order_id;
	r.attempt = tr->run->attempt;
	r.purpose = "train";
	r.base = commit;
	r.state_name = run_state_name(tr->run->state);
	if ((error = build_gates_run_job(c, tr->wt, tr->run_dir, "train", tr->run->branch_name, &r,
					 &oc, gr, err)) != 0)
		return error;
	if (oc.lost || oc.cancelled)
		return sl_err_set(err, SL_ETRANSIENT, "the merge gates job on %.12s did not end: %s; "
				  "the train tries again", commit, oc.cancelled ? "cancelled" : oc.why);
	return 0;
}

/* The merge gates of `names` (NULL: all of them) on commit, once (train_run_gates()). */
static int run_once(const struct train_run *tr, const char *commit, int remote,
		    int (*wt_ready)(void *arg, struct sl_err *err), void *arg,
		    const char *const *names, struct build_gate_results *gr, struct sl_err *err)
{
	struct sl_gate *subset = NULL;
	struct sl_config c = merge_gates_cfg(tr->ctx->cfg, names, &subset);
	char *where = NULL;
	int error;

	if (!subset) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if (!c.ngates) { /* no merge gate: the train only serializes the merges */
		error = build_gates_run_sub(&c, tr->wt, tr->run_dir, "train", gr, err);
		goto out;
	}
	if (remote) { /* a job on the car's commit: no checkout here */
		error = gates_job(tr, &c, commit, gr, err);
		goto out;
	}
	if (!sl_path_exists(tr->wt) && (error = wt_ready(arg, err)) != 0) {
		char why[SL_ERR_MSG_MAX];
		snprintf(why, sizeof(why), "%s", err->msg);
		sl_err_clear(err);
		sl_err_set(err, error, "the run's worktree is gone and cannot be made again for the "
			   "merge gates: %s", why);
		goto out;
	}
	if ((error = train_checkout(tr->ctx, tr->run->id, tr->wt, commit, &where, err)) == 0)
		error = build_gates_run_sub(&c, where, tr->run_dir, "train", gr, err);
	train_checkout_drop(tr->ctx, tr->run->id);
out:
	free(where);
	free(subset);
	return error;
}

/* A gate's command as the store keys its outcomes: its argv as JSON. */
static char *command_key(sl_strv argv)
{
	json_t *a = json_array();
	char *text;
	size_t i;

	for (i = 0; a && argv && argv[i]; i++)
		json_array_append_new(a, json_string(argv[i]));
	text = a ? json_dumps(a, JSON_COMPACT) : NULL;
	json_decref(a);
	return text;
}

/* Red runs of gate r on tree so far; -1 on error. */
static int red_runs(struct store *st, const struct build_gate_result *r, const char *tree,
		    struct sl_err *err)
{
	char *cmd = command_key(r->argv);
	int greens = 0, reds = 0, error;

	error = cmd ? store_gate_runs_on(st, r->name, cmd, tree, &greens, &reds, NULL, err)
		    : sl_err_set(err, SL_ERROR, "out of memory");
	free(cmd);
	return error ? -1 : reds;
}

/*
 * gr's outcomes on tree into the store, and what comes next
 * (train_rerun_decide()): *again (NULL-terminated, names borrowed from gr,
 * the caller's to free) the gates to run once more.
 */
static int record_runs(const struct train_run *tr, const char *tree,
		       const struct build_gate_results *gr, const char ***again, struct sl_err *err)
{
	struct train_gate_tally *g = calloc(gr->n + 1, sizeof(*g));
	int *marks = calloc(gr->n + 1, sizeof(*marks)), error = 0;
	size_t i, k = 0;

	*again = calloc(gr->n + 1, sizeof(**again));
	if (!g || !marks || !*again)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	for (i = 0; !error && i < gr->n; i++) {
		char *cmd = command_key(gr->v[i].argv);
		error = cmd ? store_gate_run_add(tr->ctx->st, gr->v[i].name, cmd, tree,
						 gr->v[i].passed, err)
			    : sl_err_set(err, SL_ERROR, "out of memory");
		free(cmd);
		g[i].passed = gr->v[i].passed;
		if (!error && !g[i].passed && (g[i].reds = red_runs(tr->ctx->st, &gr->v[i], tree,
								      err)) < 0)
			error = SL_ERROR;
	}
	if (!error && train_rerun_decide(g, gr->n, tr->ctx->cfg->merge.rerun_failed, marks) ==
			      TRAIN_RERUN_AGAIN)
		for (i = 0; i < gr->n; i++)
			if (marks[i])
				(*again)[k++] = gr->v[i].name;
	if (error || !k) {
		free(*again);
		*again = NULL;
	}
	free(marks);
	free(g);
	return error;
}

/* The gates run again (in `again`) take the places of their red runs in gr. */
static void take_rerun(struct build_gate_results *gr, struct build_gate_results *again)
{
	struct build_gate_result old;
	size_t i, j;

	for (i = 0; i < again->n; i++)
		for (j = 0; j < gr->n; j++)
			if (!strcmp(gr->v[j].name, again->v[i].name)) {
				old = gr->v[j];
				gr->v[j] = again->v[i];
				again->v[i] = old;
			}
	gr->all_passed = 1;
	for (j = 0; j < gr->n; j++)
		gr->all_passed &= gr->v[j].passed;
}

/* train/gates.json again, with every gate's last run. */
static int write_results(const struct train_run *tr, const struct build_gate_results *gr,
			 struct sl_err *err)
{
	json_t *arr = build_gates_json(gr);
	char *dir = sl_path_fmt("%s/train", tr->run_dir);
	char *path = sl_path_fmt("%s/train/gates.json", tr->run_dir);
	int error = arr && dir && path ? sl_mkdir_p(dir, err)
				       : sl_err_set(err, SL_ERROR, "out of memory");

	if (!error) /* every gate reused: nothing ran, the folder may not be there */
		error = sl_json_write(path, arr, err);
	free(dir);

	json_decref(arr);
	free(path);
	return error;
}

/*
 * 1 when gate g's command has a green on tree and no red there (flaky trees
 * run again); *gating: 1 when only a run's own gates made it green there.
 */
static int green_stands(const struct sl_config *cfg, struct store *st, const struct sl_gate *g,
			const char *tree, int *gating, struct sl_err *err)
{
	char *cmd = command_key(g->argv);
	int greens = 0, reds = 0, more = 0, error;

	error = cmd ? store_gate_runs_on(st, g->name, cmd, tree, &greens, &reds, &more, err)
		    : sl_err_set(err, SL_ERROR, "out of memory");
	if (!cfg->merge.reuse_gating) /* merge.reuse_gating: docs/RELIABILITY.md */
		more = 0;
	free(cmd);
	*gating = !greens && more;
	return error ? -error : train_green_stands(greens + more, reds);
}

int train_gating_green(struct sl_ctx *ctx, const char *wt, const char *head,
		       const struct build_gate_results *gr)
{
	struct sl_err err = SL_ERR_INIT;
	char tree[41];
	size_t i;

	if (!ctx->cfg->merge.reuse_green || !ctx->cfg->merge.reuse_gating || !gr->all_passed ||
	    !train_has_merge_gates(ctx->cfg) ||
	    worktree_tree_if_clean(wt, head, tree) != 0)
		return 0;
	for (i = 0; i < gr->n; i++) {
		char *cmd = command_key(gr->v[i].argv);
		if (cmd && !gr->v[i].reused &&
		    store_gate_gating_green(ctx->st, gr->v[i].name, cmd, tree, &err) != 0)
			sl_log(SL_LOG_WARN, "cannot record gate %s's green on %.12s: %s",
			       gr->v[i].name, tree, err.msg);
		free(cmd);
		sl_err_clear(&err);
	}
	return 1;
}

/* A merge gate not run: its green on tree stands, as a result that says so. */
static int add_reused(struct build_gate_results *r, const struct sl_gate *g, const char *tree,
		      int gating, struct sl_err *err)
{
	struct build_gate_result *grown = realloc(r->v, (r->n + 1) * sizeof(*r->v)), *v;
	char words[128];

	if (!grown)
		return sl_err_set(err, SL_ERROR, "out of memory");
	r->v = grown;
	v = memset(&r->v[r->n++], 0, sizeof(*v));
	snprintf(words, sizeof(words), "green on tree %.12s already (%s), not run again", tree,
		 gating ? "the run's own gates, in a clean worktree" : "train test");
	v->passed = 1;
	if (!(v->name = strdup(g->name)) || !(v->argv = sl_strv_copy((const char *const *)g->argv)) ||
	    !(v->log = strdup("")) || !(v->reused = strdup(words)))
		return sl_err_set(err, SL_ERROR, "out of memory");
	return 0;
}

/*
 * No tree tested twice (merge.reuse_green; docs/RELIABILITY.md): the merge
 * gates whose command was green on tree, and never red there, go to reused
 * (not run); *todo the names of the others (borrowed; NULL: all of them).
 */
static int split_reused(const struct train_run *tr, const char *tree, int remote,
			struct build_gate_results *reused, const char ***todo, struct sl_err *err)
{
	const struct sl_config *cfg = tr->ctx->cfg;
	size_t i, k = 0;
	int yes, gating, error = 0;

	*todo = NULL;
	if (!cfg->merge.reuse_green || !tree || remote || !train_has_merge_gates(cfg))
		return 0;
	if (!(*todo = calloc(cfg->ngates + 1, sizeof(**todo))))
		return sl_err_set(err, SL_ERROR, "out of memory");
	for (i = 0; !error && i < cfg->ngates; i++) {
		if (!merge_gate(cfg, i))
			continue;
		if ((yes = green_stands(cfg, tr->ctx->st, &cfg->gates[i], tree, &gating, err)) < 0)
			error = -yes;
		else if (yes)
			error = add_reused(reused, &cfg->gates[i], tree, gating, err);
		else
			(*todo)[k++] = cfg->gates[i].name;
	}
	if (error || !reused->n) {
		free(*todo);
		*todo = NULL;
	}
	return error;
}

/* The reused results join the gates run (gr); the caller sets all_passed again. */
static int join_reused(struct build_gate_results *gr, struct build_gate_results *reused,
		       struct sl_err *err)
{
	struct build_gate_result *grown;

	if (!reused->n)
		return 0;
	if (!(grown = realloc(gr->v, (gr->n + reused->n) * sizeof(*gr->v))))
		return sl_err_set(err, SL_ERROR, "out of memory");
	gr->v = grown;
	memcpy(gr->v + gr->n, reused->v, reused->n * sizeof(*gr->v));
	gr->n += reused->n;
	free(reused->v);
	reused->v = NULL;
	reused->n = 0;
	return 0;
}

int train_run_gates(const struct train_run *tr, const char *commit, const char *tree, int remote,
		    int (*wt_ready)(void *arg, struct sl_err *err), void *arg,
		    struct build_gate_results *gr, struct sl_err *err)
{
	struct build_gate_results more = BUILD_GATE_RESULTS_INIT, reused = BUILD_GATE_RESULTS_INIT;
	const char **again = NULL, **todo = NULL;
	int error = split_reused(tr, tree, remote, &reused, &todo, err), reran = 0;

	if (!error && !(todo && !todo[0]))
		error = run_once(tr, commit, remote, wt_ready, arg, todo, gr, err);
	free(todo);
	if (!error && tree && gr->n)
		error = record_runs(tr, tree, gr, &again, err);
	while (!error && again) {
		sl_fault("train.rerun"); /* a red run recorded, the rerun not started */
		error = run_once(tr, commit, remote, wt_ready, arg, again, &more, err);
		free(again);
		again = NULL;
		if (!error && (error = record_runs(tr, tree, &more, &again, err)) == 0)
			take_rerun(gr, &more);
		build_gate_results_release(&more);
		reran = 1;
	}
	free(again);
	reran |= reused.n > 0;
	if (!error)
		error = join_reused(gr, &reused, err);
	build_gate_results_release(&reused);
	if (!error)
		for (size_t i = 0; i < gr->n; i++)
			gr->all_passed &= gr->v[i].passed;
	return error || !reran ? error : write_results(tr, gr, err);
}

/*
 * The results as stored with the car: gates.json's array, each failed gate
 * with its output's tail and how often it was red on the car's tree.
 */
static char *results_json(const struct train_run *tr, const char *tree,
			  const struct build_gate_results *gr)
{
	struct sl_err ignored = SL_ERR_INIT;
	json_t *arr = build_gates_json(gr), *g;
	char *text;
	size_t i;
	int reds;

	for (i = 0; arr && i < gr->n; i++) {
		if (gr->v[i].passed)
			continue;
		g = json_array_get(arr, i);
		json_object_set_new(g, "output",
				    worktree_diff_json_text(gr->v[i].output ? gr->v[i].output : "",
							    gr->v[i].output ? strlen(gr->v[i].output) : 0));
		if (tree && (reds = red_runs(tr->ctx->st, &gr->v[i], tree, &ignored)) > 0) {
			json_object_set_new(g, "red_runs", json_integer(reds));
			json_object_set_new(g, "tree", json_string(tree));
		}
	}
	text = arr ? json_dumps(arr, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(arr);
	return text;
}

int train_claim_test(const struct train_run *tr, const struct train_ops *ops, const char *commit,
		     const char *owner, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	struct store_car c;
	int error;

	if ((error = ops->lock_repo(ops->arg, &lock, err)) != 0)
		return error;
	if ((error = store_train_get(tr->ctx->st, tr->run->id, &c, err)) == 0) {
		if (!c.commit || strcmp(c.commit, commit) ||
		    (c.status != TRAIN_PENDING && c.status != TRAIN_TESTING)) {
			error = 1;
		} else {
			c.status = TRAIN_TESTING;
			c.started_ms = sl_now_ms();
			if (train__set_str(&c.tester, owner) || train__set_str(&c.lane_commit, NULL))
				error = sl_err_set(err, SL_ERROR, "out of memory");
			else
				error = store_train_put(tr->ctx->st, &c, err);
		}
	}
	store_car_release(&c);
	sl_lock_release(&lock);
	return error;
}

int train_record_result(const struct train_run *tr, const struct train_ops *ops,
			const char *commit, const char *owner, const struct build_gate_results *gr,
			struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	struct store_car c;
	char *results = NULL;
	int error;

	if ((error = ops->lock_repo(ops->arg, &lock, err)) == 0 &&
	    (error = store_train_get(tr->ctx->st, tr->run->id, &c, err)) == 0) {
		/* merge.lanes: built again meanwhile, its test standing (lane_commit) */
		int carried = c.lane_commit && !strcmp(c.lane_commit, commit);
		if (c.status == TRAIN_TESTING && c.commit && (carried || !strcmp(c.commit, commit)) &&
		    c.tester && !strcmp(c.tester, owner)) {
			if (!(results = results_json(tr, carried ? NULL : c.tree, gr)))
				error = sl_err_set(err, SL_ERROR, "out of memory");
			c.status = gr->all_passed ? TRAIN_GREEN : TRAIN_RED;
			c.tested_ms = sl_now_ms();
			free(c.gates_json);
			c.gates_json = results;
			/* the car and the cars its green covers (merge.batch) at once */
			if (!error && (error = store_begin(tr->ctx->st, err)) == 0) {
				if ((error = store_train_put(tr->ctx->st, &c, err)) != 0 ||
				    (error = train_batch_cover(tr->ctx, &c, err)) != 0)
					store_rollback(tr->ctx->st);
				else
					error = store_commit(tr->ctx->st, err);
			}
			sl_fault(error ? NULL : "train.after_result");
		}
		store_car_release(&c);
	}
	sl_lock_release(&lock);
	return error;
}

int64_t train_gates_ms(const struct build_gate_results *gr)
{
	int64_t ms = 0;
	size_t i;

	for (i = 0; i < gr->n; i++)
		ms += gr->v[i].duration_ms;
	return ms;
}
