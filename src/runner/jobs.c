/*
 * Builders and gates as jobs on an engine (build/exec.h, docs/scale-out.md, Crashes and lost
 * jobs): the run's side. The job of a run is recorded before it is waited for;
 * a tick killed meanwhile leaves the run to reconciliation, which requeues
 * it, and step_prepare follows the open job again instead of starting an
 * attempt (step__job_resume). An abandoned run's open jobs are cancelled.
 */
#include "runner/runner_int.h"
#include "store/store.h"
#include "builder/builder.h"
#include "worktree/worktree.h"
#include "core/fs.h"
#include "core/git.h"
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int step__remote(struct step *s)
{
	return exec_remote(s->ctx->cfg) && step__worktree_mode(s) != SL_WORKTREE_NONE;
}

/* HEAD of the run's worktree into out[41]. */
static int wt_head(struct step *s, char out[41], struct sl_err *err)
{
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	struct sl_buf b = SL_BUF_INIT;
	const char *args[] = { "rev-parse", "--verify", "HEAD", NULL };
	int error;

	sl_buf_init(&b, 128);
	o.cwd = s->wt;
	o.ceiling = 1;
	o.out = &b;
	if ((error = sl_git_run(&o, args, NULL, err)) == 0) {
		if (strspn(sl_buf_cstr(&b), "0123456789abcdef") != 40)
			error = sl_err_set(err, SL_ERROR, "the worktree of run %s has no HEAD",
					   s->run.id);
		else
			snprintf(out, 41, "%.40s", sl_buf_cstr(&b));
	}
	sl_buf_release(&b);
	return error;
}

/* MERGE_HEAD of the run's worktree (a resolution under way) into out[41], or "". */
static void wt_merge_head(struct step *s, char out[41])
{
	char *path = worktree_entry_path(s->ctx->repo.gitdir, s->run.id, "MERGE_HEAD");
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err e = SL_ERR_INIT;

	out[0] = '\0';
	if (path && sl_read_file(&b, path, 128, &e) == 0 &&
	    strspn(sl_buf_cstr(&b), "0123456789abcdef") >= 40)
		snprintf(out, 41, "%.40s", sl_buf_cstr(&b));
	sl_buf_release(&b);
	free(path);
}

/*
 * Before a new build job: what the worktree holds uncommitted (an earlier
 * attempt's result put in by a sluice killed before it committed it, a
 * failed gate's leftovers) is committed to the run branch, so the job
 * builds on it as a builder here would; the job's result, put in with
 * read-tree --reset, would replace it otherwise. Not when the attempt's
 * job is followed again (it was given the branch as it was), nor for a
 * resolution (a merge under way) or a read-only run (a commit is a write).
 */
static int save_before_build(struct step *s, struct sl_err *err)
{
	struct store_job job = STORE_JOB_INIT;
	char head[41];
	int error, committed = 0;

	if (s->run.mode == RUN_MODE_RESOLVE || step__worktree_mode(s) != SL_WORKTREE_READ_WRITE)
		return 0;
	error = store_job_open(s->ctx->st, s->run.id, s->run.attempt, "build", &job, err);
	store_job_release(&job);
	if (error != SL_ENOTFOUND)
		return error; /* 0: an open job, followed again; or an error */
	sl_err_clear(err);
	return step__snapshot(s, "sluice: what the worktree held before the build job",
			      STEP_SNAP_LOCK | STEP_SNAP_NOTHING_OK, head, &committed, err);
}

int step__job_init(struct step *s, const char *purpose, struct exec_run *r, char base[41],
		   char theirs[41], struct sl_err *err)
{
	int error;

	memset(r, 0, sizeof(*r));
	theirs[0] = '\0';
	if (!strcmp(purpose, "build") && (error = save_before_build(s, err)) != 0)
		return error;
	if ((error = wt_head(s, base, err)) != 0)
		return error;
	if (!strcmp(purpose, "build") && s->run.mode == RUN_MODE_RESOLVE)
		wt_merge_head(s, theirs);
	r->st = s->ctx->st;
	r->repo_root = s->ctx->repo.root;
	r->run_id = s->run.id;
	r->work_order_id = s->run.work_order_id;
	r->attempt = s->run.attempt;
	r->purpose = purpose;
	r->base = base;
	r->theirs = theirs[0] ? theirs : NULL;
	r->state_name = run_state_name(s->run.state);
	return 0;
}

int step__job_resume(struct step *s, enum run_state *to, struct sl_err *err)
{
	struct store_job job = STORE_JOB_INIT;
	int error = store_job_open(s->ctx->st, s->run.id, s->run.attempt, NULL, &job, err);

	if (error == SL_ENOTFOUND) {
		sl_err_clear(err);
		return 0;
	}
	if (error)
		return error;
	*to = !strcmp(job.purpose, "gates") ? RUN_GATING : RUN_BUILDING;
	if (!strcmp(job.purpose, "train")) {
		/* a car's gates are run again with the train: this one is cancelled */
		step__job_cancel(s->ctx, &job, "the merge train starts again after an interruption");
		store_job_release(&job);
		return 0;
	}
	store_job_release(&job);
	return 1;
}

void step__job_cancel(struct sl_ctx *ctx, const struct store_job *job, const char *why)
{
	struct sl_err e = SL_ERR_INIT;
	char outcome[600];

	snprintf(outcome, sizeof(outcome), "cancelled: %s", why);
	if (store_job_end(ctx->st, job->id, outcome, &e) != 0)
		sl_log(SL_LOG_WARN, "run %s: job %s: %s", job->run_id, job->handle, e.msg);
	sl_err_clear(&e);
	if (exec_cancel(ctx->cfg, job->handle, &e) != 0)
		sl_log(SL_LOG_WARN, "run %s: cannot cancel job %s: %s", job->run_id, job->handle,
		       e.msg);
}

int step__jobs_cancel(struct sl_ctx *ctx, const char *run_id, const char *why, int *n)
{
	struct store_job *v = NULL;
	struct sl_err e = SL_ERR_INIT;
	size_t count = 0;

	*n = 0;
	if (store_jobs_of_run(ctx->st, run_id, &v, &count, &e) != 0)
		return -1;
	for (size_t i = 0; i < count; i++)
		if (!v[i].ended_at) {
			step__job_cancel(ctx, &v[i], why);
			(*n)++;
		}
	store_jobs_free(v, count);
	return 0;
}
