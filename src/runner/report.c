/*
 * Report runs: a work order with `worktree: read-only` or `worktree: none`
 * (or worktree.mode). The builder answers in summary.md; nothing it does
 * is snapshotted or merged. read-only: its worktree must stay as it was
 * made (the no_write guard, worktree/guard.c); none: it works in an empty
 * folder of the run's, scratch/, made afresh for each attempt. The
 * reviewer judges the report (kind "report"); approved, the run ends
 * `reported` with report.md in its folder.
 */
#include "runner/runner_int.h"
#include "store/store.h"
#include "builder/builder.h"
#include "worktree/worktree.h"
#include "reviewer/reviewer.h"
#include "core/buf.h"
#include "core/fs.h"
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPORT_READ_MAX ((size_t)1 << 20)

/* The run's side of the no_write guard (worktree/guard.c). */
static void guard_run(struct step *s, struct worktree_guard_run *r)
{
	r->gitdir = s->ctx->repo.gitdir;
	r->run_id = s->run.id;
	r->wt = s->wt;
	r->branch = s->run.branch_name;
	r->base = s->run.base_commit;
	r->excluded = step__excluded(s);
	r->run_dir = s->run_dir;
	r->attempt = s->run.attempt;
}

/* A read-only run's worktree put back as it was made (before a new attempt, after a write). */
static int restore(struct step *s, struct sl_err *err)
{
	struct worktree_guard_run r;

	guard_run(s, &r);
	return worktree_guard_run_restore(&r, err);
}

/* Copy the run folder's file `from` to `to` (bounded; never through a link). */
static int copy_file(const char *from, const char *to, struct sl_err *err)
{
	struct sl_buf b = SL_BUF_INIT;
	int error;

	if ((error = sl_read_file(&b, from, REPORT_READ_MAX, err)) == 0)
		error = sl_write_file(to, b.ptr ? b.ptr : "", b.len, err);
	sl_buf_release(&b);
	return error;
}

/* `worktree: none`: <run>/scratch/, empty but for prompt.md and work_order.md. */
static int make_scratch(struct step *s, const char *prompt, char **cwd, struct sl_err *err)
{
	char *dir = step__path(s, "scratch"), *p = NULL, *w = NULL, *wo = step__path(s, "work_order.md");
	int error;

	if (!dir || !wo || !(p = sl_path_join(dir, "prompt.md")) ||
	    !(w = sl_path_join(dir, "work_order.md"))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = sl_rm_rf(dir, err)) != 0 || (error = sl_mkdir_p(dir, err)) != 0 ||
	    (error = copy_file(prompt, p, err)) != 0 || (error = copy_file(wo, w, err)) != 0)
		goto out;
	*cwd = dir;
	dir = NULL;
out:
	free(dir);
	free(p);
	free(w);
	free(wo);
	return error;
}

int step__report_before(struct step *s, enum sl_worktree_mode m, const char *prompt, char **cwd,
			struct sl_err *err)
{
	*cwd = NULL;
	if (m == SL_WORKTREE_NONE)
		return make_scratch(s, prompt, cwd, err);
	/* read-only: a new attempt starts from the base, whatever the last one left */
	if (s->run.attempt > 1 && restore(s, err) != 0)
		return err->code ? err->code : SL_ERROR;
	return 0;
}

int step__report_built(struct step *s, enum sl_worktree_mode m, const struct sl_proc_result *res,
		       const char *how, struct sl_err *err)
{
	static const char *const no_write[] = { BUILD_NO_WRITE, NULL };
	static const char *const no_write_failed[] = { "builder", BUILD_NO_WRITE, NULL };
	static const char *const failed[] = { "builder", NULL };
	struct sl_err e2 = SL_ERR_INIT;
	char why[3072];
	int error, bad = build_failed(res);

	if (m == SL_WORKTREE_READ_ONLY) {
		struct worktree_guard_run r;

		guard_run(s, &r);
		if ((error = worktree_guard_run_check(&r, why, sizeof(why), err)) < 0)
			return error;
		if (error == 1) {
			store_attempt_finish(s->ctx->st, s->run.id, s->run.attempt, res->exit_code, why,
					     NULL, &e2);
			if (restore(s, &e2) != 0) /* tried again before the next attempt */
				sl_log(SL_LOG_WARN, "run %s: %s", s->run.id, e2.msg);
			return step__retry_or_fail(s, bad ? no_write_failed : no_write,
						   bad ? (res->exit_code ? res->exit_code : 1) : 0, why,
						   err);
		}
	}
	if (bad) {
		snprintf(why, sizeof(why), "the builder failed (%s) on attempt %d", how,
			 s->run.attempt);
		store_attempt_finish(s->ctx->st, s->run.id, s->run.attempt, res->exit_code, how, NULL,
				     &e2);
		return step__retry_or_fail(s, failed, res->exit_code ? res->exit_code : 1, why, err);
	}
	store_attempt_finish(s->ctx->st, s->run.id, s->run.attempt, 0, "ok", s->run.base_commit,
			     &e2);
	if ((error = step__set(s, err, "head_commit", s->run.base_commit, NULL)) != 0)
		return error;
	/* nothing to test: the gates do not run for a report */
	return step__move(s, RUN_REVIEWING, err, "attempt %d: the builder's report (worktree %s, "
			  "nothing changed); asking the reviewer", s->run.attempt,
			  sl_worktree_mode_name(m));
}

/* report.md: the builder's summary, then the reviewer's verdict and comments. */
static int write_report(struct step *s, const struct reviewer_verdict *v, struct sl_err *err)
{
	struct sl_buf b = SL_BUF_INIT;
	char *summary = step__read(s, "summary.md", REPORT_READ_MAX), *path = step__path(s, "report.md");
	size_t i;
	int error;

	sl_buf_addf(&b, "# Report of run %s (work order %s, attempt %d)\n\n", s->run.id,
		    s->run.work_order_id, s->run.attempt);
	sl_buf_puts(&b, summary && *summary ? summary : "(the builder wrote no summary.md)\n");
	sl_buf_addf(&b, "%s\n## Review\n\nVerdict: %s, by %s\n", b.len && b.ptr[b.len - 1] == '\n'
								 ? "" : "\n",
		    v->verdict, v->reviewer ? v->reviewer : "?");
	if (v->comments && *v->comments)
		sl_buf_addf(&b, "\n%s\n", v->comments);
	for (i = 0; i < v->ncriteria; i++)
		sl_buf_addf(&b, "%s- [%c] %s%s%s\n", i ? "" : "\n", v->criteria[i].met ? 'x' : ' ',
			    v->criteria[i].criterion, *v->criteria[i].note ? ": " : "",
			    v->criteria[i].note);
	if (!path || !b.ptr)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else
		error = sl_write_file_atomic(path, b.ptr, b.len, err);
	sl_buf_release(&b);
	free(summary);
	free(path);
	return error;
}

int step__report_verdict(struct step *s, const struct reviewer_verdict *v, const char *tree,
			 const char *comments, struct sl_err *err)
{
	const char *review_failed[] = { "review", NULL };
	char why[1200];
	int error;

	if ((error = write_report(s, v, err)) != 0)
		return error;
	if (!strcmp(v->verdict, "approve") && reviewer_verdict_approves_tree(v, tree)) {
		snprintf(why, sizeof(why), "report approved by %s; nothing is merged (report.md)",
			 v->reviewer);
		if ((error = step__finish(s, RUN_REPORTED, WO_DONE, why, why, err)) < 0)
			return error;
		return STEP_STOP;
	}
	if (!strcmp(v->verdict, "reject"))
		return step__fail(s, RUN_REJECTED, err, "report rejected by %s: %s", v->reviewer,
				  comments);
	snprintf(why, sizeof(why), "%s asked for changes to the report: %s", v->reviewer, comments);
	return step__retry_or_fail(s, review_failed, 0, why, err);
}
