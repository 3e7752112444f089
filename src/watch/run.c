/*
 * `sluice watch`'s work (docs/watch.md): a watch gate run on the target's
 * tip in a checkout of its own, run again when red, and, red twice, the
 * landings since its last green result bisected to name the one that broke
 * it. Every run is recorded (store watch_results); the culprit's run is told
 * in its event log.
 */
#include "watch/watch.h"
#include "executor/executor.h"
#include "merge/merge.h"
#include "store/store.h"
#include "core/ctx.h"
#include "core/fault.h"
#include "core/fs.h"
#include "core/git.h"
#include "core/lock.h"
#include "core/log.h"
#include "core/proc.h"
#include "core/time.h"
#include "core/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WATCH_LOG_MAX ((size_t)8 << 20)

void watch_report_release(struct watch_report *r)
{
	free(r->culprit_run);
	free(r->culprit_subject);
	free(r->revert_wo);
	free(r->fix_wo);
	sl_buf_release(&r->steps);
	r->culprit_run = r->culprit_subject = r->revert_wo = r->fix_wo = NULL;
}

/* s cut to fewer than n bytes of whole UTF-8 characters (a subject in a log line). */
static const char *cut_text(char *out, size_t n, const char *s)
{
	size_t len = 0, k;

	while (s && s[len] && (k = sl_utf8_seq((const unsigned char *)s + len, strlen(s + len),
					       NULL)) != 0 && len + k < n)
		len += k;
	memcpy(out, s ? s : "", len);
	out[len] = '\0';
	return out;
}

/* One line of the bisection's log (r->steps): a commit tested and what it said. */
static void step_line(struct watch_report *r, const char *commit, const char *what,
		      enum sl_watch_verdict v)
{
	sl_buf_addf(&r->steps, "- %.12s %s: %s\n", commit, what,
		    v == SL_WATCH_RED     ? "red, and red again"
		    : v == SL_WATCH_FLAKY ? "red, then green on its run again (taken as green)"
					  : "green");
}

/* git in the main work tree; its output (one line) into out when not NULL. */
static int git_root(struct sl_ctx *ctx, const char *const *args, char *out, size_t n,
		    struct sl_err *err)
{
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	struct sl_git_result res;
	struct sl_buf b = SL_BUF_INIT;
	int error;

	sl_buf_init(&b, 4096);
	o.cwd = ctx->repo.root;
	o.out = out ? &b : NULL;
	error = sl_git_run(&o, args, &res, err);
	if (!error && out)
		snprintf(out, n, "%.*s", (int)(b.ptr ? strcspn(b.ptr, "\n") : 0), b.ptr ? b.ptr : "");
	sl_buf_release(&b);
	return error;
}

/* The checkout of a watch run: removed whole (and git's entry of it). */
static void checkout_drop(struct sl_ctx *ctx, const char *dir)
{
	struct sl_err ignored = SL_ERR_INIT;
	const char *rm[] = { "worktree", "remove", "--force", dir, NULL };
	const char *prune[] = { "worktree", "prune", NULL };

	if (git_root(ctx, rm, NULL, 0, &ignored) != 0) {
		sl_err_clear(&ignored);
		sl_rm_rf(dir, &ignored);
		git_root(ctx, prune, NULL, 0, &ignored);
	}
}

/* How one run of the gate went, into the store, its output in logs/. */
static int record(struct sl_ctx *ctx, const struct sl_gate *g, const char *commit,
		  const char *purpose, const struct sl_proc_result *res, const char *log,
		  int64_t started, struct sl_err *err)
{
	struct store_watch_result w;
	char how[256];

	sl_proc_describe(how, sizeof(how), res);
	memset(&w, 0, sizeof(w));
	w.target = ctx->target_ref;
	w.gate = g->name;
	w.commit = commit;
	w.purpose = purpose;
	w.passed = res->exit_code == 0 && !res->timed_out;
	w.exit_code = res->exit_code;
	w.how = how;
	w.log = log;
	w.started_ms = started;
	w.finished_ms = sl_now_ms();
	return store_watch_add(ctx->st, &w, err);
}

/*
 * Run g on `commit` (40 hex) in .system/watch/checkout, a detached worktree
 * made for it and removed after; *passed. The reviewer token and the other
 * secrets the builders never get, it never gets either.
 */
static int run_on(struct sl_ctx *ctx, const struct sl_gate *g, const char *commit,
		  const char *purpose, int *passed, char *log_rel, size_t nlog, struct sl_err *err)
{
	struct sl_proc_opts po = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	sl_strv drop = NULL;
	char *dir = sl_path_fmt("%s/watch/checkout", ctx->repo.sysdir), *log = NULL;
	char env_gate[300], env_commit[64], rel[512];
	const char *env[] = { env_gate, env_commit, NULL };
	const char *add[] = { "worktree", "add", "--detach", "--quiet", dir, commit, NULL };
	int64_t started = sl_now_ms();
	int error;

	*passed = 0;
	snprintf(rel, sizeof(rel), "watch/logs/%s-%.12s-%s-%lld.log", g->name, commit, purpose,
		 (long long)started);
	if (!dir || !(log = sl_path_fmt("%s/%s", ctx->repo.sysdir, rel))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	checkout_drop(ctx, dir); /* a killed watch's */
	if ((error = sl_mkdir_p(ctx->repo.sysdir, err)) != 0 ||
	    (error = git_root(ctx, add, NULL, 0, err)) != 0)
		goto out;
	snprintf(env_gate, sizeof(env_gate), "SLUICE_WATCH_GATE=%s", g->name);
	snprintf(env_commit, sizeof(env_commit), "SLUICE_COMMIT=%s", commit);
	if ((error = exec_env_drop(&drop, ctx->cfg, env, err)) < 0)
		goto out;
	{
		char *logs = sl_path_fmt("%s/watch/logs", ctx->repo.sysdir);

		error = logs ? sl_mkdir_p(logs, err) : sl_err_set(err, SL_ERROR, "out of memory");
		free(logs);
		if (error)
			goto out;
	}
	po.argv = (const char *const *)g->argv;
	po.env_add = env;
	po.env_drop = (const char *const *)drop;
	po.cwd = dir;
	po.log_path = log;
	po.log_max = WATCH_LOG_MAX;
	po.timeout_ms = g->timeout_ms;
	if ((error = sl_proc_run(&po, &res, err)) != 0)
		goto out;
	*passed = res.exit_code == 0 && !res.timed_out;
	snprintf(log_rel, nlog, "%s", rel);
	error = record(ctx, g, commit, purpose, &res, rel, started, err);
out:
	if (dir)
		checkout_drop(ctx, dir);
	sl_strv_free(drop);
	free(dir);
	free(log);
	return error;
}

/* A run on `commit`, and when red a second: 1 red (believed), 0 green or flaky. */
static int believed_red(struct sl_ctx *ctx, const struct sl_gate *g, const char *commit,
			const char *purpose, enum sl_watch_verdict *v, size_t *tests, char *log,
			size_t nlog, struct sl_err *err)
{
	char again_log[512];
	int passed, error;

	if ((error = run_on(ctx, g, commit, purpose, &passed, log, nlog, err)) != 0)
		return error;
	(*tests)++;
	*v = sl_watch_verdict(!passed, -1);
	if (*v == SL_WATCH_AGAIN) {
		/* a bisection's runs stay its own: never a tip's result (last green, status) */
		if ((error = run_on(ctx, g, commit, strcmp(purpose, "tip") ? purpose : "again",
				    &passed, again_log, sizeof(again_log), err)) != 0)
			return error;
		(*tests)++;
		*v = sl_watch_verdict(1, !passed);
	}
	return *v == SL_WATCH_RED;
}

/* The culprit's run told, in its event log (`sluice log RUN`). */
static void tell_culprit(struct sl_ctx *ctx, const struct sl_gate *g, const struct watch_report *r)
{
	struct sl_err ignored = SL_ERR_INIT;
	struct store_run run;
	char why[1024];

	memset(&run, 0, sizeof(run));
	if (!r->culprit_run || store_run_get(ctx->st, r->culprit_run, &run, &ignored) != 0)
		return;
	snprintf(why, sizeof(why), "watch gate '%s' went red on %.12s; its bisection (%zu "
		 "commits tested of the %zu since the green %.12s) names this run's landing %.12s",
		 g->name, r->tip, r->tests, r->landings, r->last_green, r->culprit);
	store_event_add(ctx->st, run.id, run.work_order_id, run_state_name(run.state),
			run_state_name(run.state), why, &ignored);
	store_run_release(&run);
}

/* The notifiers told of a red tip, once per gate and tip (docs/config.md, Notifications). */
static void tell_red(struct sl_ctx *ctx, const struct sl_gate *g, const struct watch_report *r)
{
	struct sl_err ignored = SL_ERR_INIT;
	struct store_notify_watch w;
	struct store_run run;
	char why[1024], who[256] = "";

	memset(&run, 0, sizeof(run));
	memset(&w, 0, sizeof(w));
	if (r->culprit_run && store_run_get(ctx->st, r->culprit_run, &run, &ignored) == 0) {
		w.run = run.id;
		w.work_order = run.work_order_id;
	}
	sl_err_clear(&ignored);
	if (r->culprit[0] && w.run)
		snprintf(who, sizeof(who), "; first red: %.12s, the landing of run %s (work order "
			 "%s)%s%s", r->culprit, w.run, w.work_order, r->revert_wo ? "; reverted by "
			 "work order " : "", r->revert_wo ? r->revert_wo : "");
	else if (r->culprit[0])
		snprintf(who, sizeof(who), "; first red: %.12s, a person's commit (not reverted)",
			 r->culprit);
	snprintf(why, sizeof(why), "watch gate '%s' red on %.12s, and red again (output: "
		 ".system/%.400s)%s", g->name, r->tip, r->log, who);
	w.gate = g->name;
	w.tip = r->tip;
	w.target = ctx->target_ref;
	w.reason = why;
	w.at_ms = sl_now_ms();
	if (store_notify_watch(ctx->st, &w, &ignored) != 0)
		sl_log(SL_LOG_WARN, "cannot record the notification of watch gate '%s': %s",
		       g->name, ignored.msg);
	store_run_release(&run);
}

/*
 * `run` (a Sluice-Run trailer of `commit`), new, when the store says that
 * run landed as exactly that commit; NULL for a person's commit that
 * carries a trailer (written by hand, or brought by a cherry-pick).
 */
static char *landed_run(struct sl_ctx *ctx, const char *run, const char *commit)
{
	struct sl_err ignored = SL_ERR_INIT;
	struct store_run sr;
	char *out = NULL;

	memset(&sr, 0, sizeof(sr));
	if (store_run_get(ctx->st, run, &sr, &ignored) == 0 && sr.state == RUN_MERGED &&
	    sr.merge_commit && !strcmp(sr.merge_commit, commit))
		out = strdup(sr.id);
	sl_err_clear(&ignored);
	store_run_release(&sr);
	return out;
}

/* Bisect the first-parent commits between r->last_green and r->tip. */
static int bisect(struct sl_ctx *ctx, const struct sl_gate *g, struct watch_report *r,
		  struct sl_err *err)
{
	struct merge_landings_opts o = { 0 };
	struct merge_run_landing *v = NULL;
	struct sl_bisect b;
	enum sl_watch_verdict verdict;
	char log[512], what[160], subj[84];
	size_t n = 0, pick, c;
	int error, red;

	o.tip = r->tip;
	o.base = r->last_green;
	o.persons = 1;
	if ((error = merge_landings_between(ctx->repo.root, &o, &v, &n, err)) != 0 || !n)
		goto out;
	/* newest first: landing i (oldest first) is v[n - 1 - i]; the tip is known red */
	r->landings = n;
	sl_bisect_init(&b, n);
	while (sl_bisect_next(&b, &pick)) {
		r->tests++;
		red = believed_red(ctx, g, v[n - 1 - pick].commit, "bisect", &verdict, &r->runs,
				   log, sizeof(log), err);
		if (red < 0) {
			error = red;
			goto out;
		}
		if (v[n - 1 - pick].run)
			snprintf(what, sizeof(what), "(run %s)", v[n - 1 - pick].run);
		else
			snprintf(what, sizeof(what), "(a person's commit: %s)",
				 cut_text(subj, sizeof(subj), v[n - 1 - pick].subject));
		step_line(r, v[n - 1 - pick].commit, what, verdict);
		sl_bisect_record(&b, pick, red);
	}
	c = n - 1 - sl_bisect_culprit(&b);
	snprintf(r->culprit, sizeof(r->culprit), "%s", v[c].commit);
	/* a trailer is text anyone can write: the run's landing only if the store says so */
	r->culprit_run = v[c].run ? landed_run(ctx, v[c].run, v[c].commit) : NULL;
	r->culprit_subject = strdup(v[c].subject ? v[c].subject : "");
	if ((error = store_watch_culprit(ctx->st, ctx->target_ref, g->name, r->culprit,
					 r->culprit_run, err)) != 0)
		goto out;
	tell_culprit(ctx, g, r);
	sl_fault("watch.after_culprit");
	if (r->culprit_run) /* a run's landing: reverted through the train (watch/revert.c) */
		error = watch_revert(ctx, g, r, err);
out:
	merge_run_landings_free(v, n);
	return error;
}

int watch_gate(struct sl_ctx *ctx, const struct sl_gate *g, struct watch_report *r,
	       struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	const char *tip[] = { "rev-parse", "--verify", "--quiet", ctx->target_ref, NULL };
	char *lock_path = sl_path_fmt("%s/watch.lock", ctx->repo.sysdir);
	size_t tests = 0;
	int error;

	memset(r, 0, sizeof(*r));
	sl_buf_init(&r->steps, 64 << 10);
	if (!lock_path)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if ((error = sl_lock_acquire(&lock, lock_path, 0, err)) != 0)
		goto out;
	if ((error = git_root(ctx, tip, r->tip, sizeof(r->tip), err)) != 0 ||
	    strlen(r->tip) != 40) {
		error = error ? error : sl_err_set(err, SL_ENOTFOUND, "the target '%s' has no commit",
						   ctx->target_ref);
		goto out;
	}
	if ((error = store_watch_last_green(ctx->st, ctx->target_ref, g->name, r->last_green,
					    err)) == SL_ENOTFOUND) {
		sl_err_clear(err);
		error = 0;
	} else if (error) {
		goto out;
	}
	/* a watch killed between its record of a revert and the work orders: them first */
	watch_revert_resume(ctx);
	if ((error = believed_red(ctx, g, r->tip, "tip", &r->verdict, &tests, r->log,
				  sizeof(r->log), err)) <= 0)
		goto out;
	error = 0;
	step_line(r, r->tip, "(the tip)", r->verdict);
	/* a revert of this gate's culprit on its way: not bisected again meanwhile */
	if ((error = watch_revert_pending(ctx, g->name, r)) != 0)
		error = error > 0 ? 0 : error;
	/* red twice: the landings since its last green result, if it ever had one */
	else if (r->last_green[0] && !(error = watch_revert_green(ctx, g->name, r->tip,
								     r->last_green, err)) &&
		 strcmp(r->last_green, r->tip))
		error = bisect(ctx, g, r, err);
	if (!error)
		tell_red(ctx, g, r);
out:
	sl_lock_release(&lock);
	free(lock_path);
	return error;
}

int watch_due(struct sl_ctx *ctx, const struct sl_gate *g, size_t *since, struct sl_err *err)
{
	const char *tip_args[] = { "rev-parse", "--verify", "--quiet", ctx->target_ref, NULL };
	struct merge_landings_opts o = { 0 };
	struct merge_run_landing *v = NULL;
	struct store_watch_row last;
	char tip[64];
	size_t n = 0;
	int error;

	*since = 0;
	if (ctx->cfg->watch.every <= 0)
		return 0;
	if ((error = store_watch_latest(ctx->st, ctx->target_ref, g->name, &last, err)) ==
	    SL_ENOTFOUND) {
		sl_err_clear(err);
		return 1; /* never watched: a first result to bisect from later */
	}
	if (error)
		return error;
	if ((error = git_root(ctx, tip_args, tip, sizeof(tip), err)) != 0 || strlen(tip) != 40) {
		store_watch_row_release(&last);
		return error ? error : 0;
	}
	o.tip = tip;
	o.base = last.commit;
	o.max_found = (size_t)ctx->cfg->watch.every;
	/* the runs' landings since the commit it last ran on: every N of them */
	if ((error = merge_landings_between(ctx->repo.root, &o, &v, &n, err)) == 0)
		*since = n;
	merge_run_landings_free(v, n);
	store_watch_row_release(&last);
	return error ? error : n >= (size_t)ctx->cfg->watch.every;
}

int watch_resume(struct sl_ctx *ctx, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	char *lock_path = sl_path_fmt("%s/watch.lock", ctx->repo.sysdir);
	int error;

	if (!lock_path)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if ((error = sl_lock_acquire(&lock, lock_path, 0, err)) == 0)
		watch_revert_resume(ctx);
	sl_lock_release(&lock);
	free(lock_path);
	return error;
}
