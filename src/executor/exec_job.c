/*
 * One job of a run on an engine (executor.h): push its inputs to
 * executor.remote, submit, record, poll until it ends, fetch what it pushed.
 */
#include "executor/executor_int.h"
#include "store/store.h"
#include "core/fault.h"
#include "core/fs.h"
#include "core/git.h"
#include "core/log.h"
#include "core/proc.h"
#include "core/time.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POLL_ERRORS_MAX 5 /* the engine cannot be asked this many times in a row: give up for now */

/* The remote an argv of push, fetch or ls-remote names: the word after "--". */
static const char *remote_of(const char *const *args)
{
	for (size_t i = 0; args[i]; i++)
		if (!strcmp(args[i], "--") && args[i + 1])
			return args[i + 1];
	return "?";
}

/*
 * git with a transport: every git sluice runs has them off (core/git.h);
 * these talk to executor.remote alone, with the user's ssh and no prompt.
 */
static int remote_git(const char *cwd, const char *const *args, struct sl_buf *out,
		      struct sl_err *err)
{
	const char *pre[] = { "-c", "protocol.allow=always", "-c", "core.sshCommand=ssh", NULL };
	const char *env[] = { "GIT_TERMINAL_PROMPT=0", NULL }, *drop[64];
	const char *all[48];
	const char **argv = NULL;
	struct sl_proc_opts po = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf errout = SL_BUF_INIT;
	size_t n = 0;
	int error;

	for (size_t i = 0; pre[i]; i++)
		all[n++] = pre[i];
	for (size_t i = 0; args[i] && n + 1 < sizeof(all) / sizeof(*all); i++)
		all[n++] = args[i];
	all[n] = NULL;
	if (!(argv = sl_git_argv(all)))
		return sl_err_set(err, SL_ERROR, "out of memory");
	sl_git_env_drop_but(drop, sizeof(drop) / sizeof(*drop), NULL, env);
	sl_buf_init(&errout, 8192);
	po.argv = argv;
	po.env_add = env;
	po.env_drop = drop;
	po.cwd = cwd;
	po.out = out;
	po.errout = &errout;
	po.timeout_ms = sl_git_timeout_ms();
	if ((error = sl_proc_run(&po, &res, err)) == 0 && res.exit_code) {
		const char *e = sl_buf_cstr(&errout);
		char how[64];
		sl_proc_describe(how, sizeof(how), &res);
		error = sl_err_set(err, SL_ERROR, "git %s to executor.remote '%.200s' failed (%s): "
				   "%.*s; check executor.remote in .system/config.yaml and that this "
				   "host can reach it", args[0], remote_of(args), how,
				   (int)strcspn(e, "\n"), e);
	}
	sl_buf_release(&errout);
	free(argv);
	return error;
}

/* Plain local git in the repository (no transport), stdout into out. */
static int local_git(const char *cwd, const char *const *args, const char *const *env,
		     struct sl_buf *out, struct sl_err *err)
{
	struct sl_git_opts o = SL_GIT_OPTS_INIT;

	o.cwd = cwd;
	o.env = env;
	o.out = out;
	return sl_git_run(&o, args, NULL, err);
}

/* Trim the trailing newline of a buffer holding one object id into out[41]. */
static int take_oid(const struct sl_buf *b, char out[41], struct sl_err *err)
{
	const char *s = sl_buf_cstr(b);

	if (strspn(s, "0123456789abcdef") != 40)
		return sl_err_set(err, SL_ERROR, "git printed no object id ('%.60s')", s);
	memcpy(out, s, 40);
	out[40] = '\0';
	return 0;
}

static void exec_job_forget(const struct sl_config *cfg, const char *repo_root, const char *refs,
			    const char *run_id);

int exec_refs(char *out, size_t n, const struct exec_run *r)
{
	if (!strcmp(r->purpose, "train"))
		return sl_fmt_fixed(out, n, "refs/sluice/train/%s/%.12s", r->run_id, r->base);
	return sl_fmt_fixed(out, n, "refs/sluice/runs/%s/a%d%s", r->run_id, r->attempt,
			    strcmp(r->purpose, "gates") ? "" : "/gates");
}

/* The input folder as a commit of the repository's (a scratch index, no work tree of ours touched). */
static int input_commit(const struct exec_run *r, char oid[41], struct sl_err *err)
{
	struct sl_buf out = SL_BUF_INIT;
	char *index = sl_path_fmt("%s/.input.index", r->input_dir), *ienv = NULL, *wtree = NULL;
	const char *env[2] = { NULL, NULL };
	char tree[41];
	int error;

	sl_buf_init(&out, 256);
	if (!index || asprintf(&ienv, "GIT_INDEX_FILE=%s", index) < 0 ||
	    asprintf(&wtree, "--work-tree=%s", r->input_dir) < 0) {
		ienv = wtree = NULL;
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	env[0] = ienv;
	{
		const char *add[] = { wtree, "add", "-A", "-f", "--", ".", ":!.input.index", NULL };
		const char *wt[] = { "write-tree", NULL };
		if ((error = local_git(r->repo_root, add, env, NULL, err)) != 0 ||
		    (error = local_git(r->repo_root, wt, env, &out, err)) != 0 ||
		    (error = take_oid(&out, tree, err)) != 0)
			goto out;
	}
	sl_buf_reset(&out);
	{
		const char *ct[] = { "-c", "user.name=sluice", "-c", "user.email=sluice@localhost",
				     "commit-tree", "-m", "sluice: job input", tree, NULL };
		if ((error = local_git(r->repo_root, ct, NULL, &out, err)) == 0)
			error = take_oid(&out, oid, err);
	}
out:
	if (index)
		unlink(index);
	free(index);
	free(ienv);
	free(wtree);
	sl_buf_release(&out);
	return error;
}

/* Push base/head, input and theirs under refs, in one atomic push. */
static int push_inputs(const struct sl_config *cfg, const struct exec_run *r, const char *refs,
		       struct sl_err *err)
{
	char input[41], a[300], b[300], c[300];
	int error;

	if ((error = input_commit(r, input, err)) != 0)
		return error;
	if (sl_fmt_fixed(a, sizeof(a), "%s:%s/%s", r->base, refs,
			 strcmp(r->purpose, "build") ? "head" : "base") ||
	    sl_fmt_fixed(b, sizeof(b), "%s:%s/input", input, refs) ||
	    sl_fmt_fixed(c, sizeof(c), "%s:%s/theirs", r->theirs ? r->theirs : "", refs))
		return sl_err_set(err, SL_ERROR, "a ref name too long");
	{
		const char *args[] = { "push", "-q", "--atomic", "--force", "--",
				       cfg->executor.remote, a, b, r->theirs ? c : NULL, NULL };
		return remote_git(r->repo_root, args, NULL, err);
	}
}

static void job_event(const struct exec_run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* An event of the run in its state ("job slurm:12 submitted"): for `sluice log` and people. */
static void job_event(const struct exec_run *r, const char *fmt, ...)
{
	struct sl_err e = SL_ERR_INIT;
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (store_event_add(r->st, r->run_id, r->work_order_id, r->state_name, r->state_name, msg,
			    &e) != 0)
		sl_log(SL_LOG_WARN, "run %s: %s (not recorded: %s)", r->run_id, msg, e.msg);
}

/* The job's name: [a-z0-9-], a DNS label for kubernetes, plain for Slurm. */
static void job_name(const struct exec_run *r, char *name, size_t n)
{
	snprintf(name, n, "sluice-%.40s-a%d-%s", r->run_id, r->attempt, r->purpose);
	for (char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
			*p = (*p >= 'A' && *p <= 'Z') ? (char)(*p - 'A' + 'a') : '-';
}

/*
 * Submit the job of row `id` (recorded under its pending handle) and record
 * the engine's handle. A refused submission ends the row; a sluice killed
 * between the engine's answer and the record leaves the pending handle,
 * and the next tick finds the job by its name (reattach).
 */
static int submit_recorded(const struct sl_config *cfg, const struct exec_run *r,
			   const char *script, int64_t timeout_ms, struct exec_outcome *o,
			   int64_t id, struct sl_err *err)
{
	struct exec_job job = { 0 };
	struct sl_err e2 = SL_ERR_INIT;
	sl_strv drop = NULL;
	char name[128], outcome[600];
	int error;

	job_name(r, name, sizeof(name));
	if ((error = exec_env_drop(&drop, cfg, NULL, err)) != 0)
		return error;
	job.name = name;
	job.run_id = r->run_id;
	job.work_order_id = r->work_order_id;
	job.script = script;
	job.timeout_ms = timeout_ms;
	job.env_drop = (const char *const *)drop;
	error = exec_submit(cfg, &job, o->handle, sizeof(o->handle), err);
	sl_strv_free(drop);
	if (error) {
		snprintf(outcome, sizeof(outcome), "not submitted: %.500s", err->msg);
		store_job_end(r->st, id, outcome, &e2);
		return error;
	}
	sl_fault("job.after_submit");
	if ((error = store_job_set_handle(r->st, id, o->handle, err)) != 0) {
		exec_cancel(cfg, o->handle, &e2); /* never a job nobody follows */
		return error;
	}
	job_event(r, "%s job %s submitted (attempt %d) to %s", r->purpose, o->handle, r->attempt,
		  exec_kind_name(cfg->executor.kind));
	return 0;
}

/* Push the inputs, record the job under its name, submit: recorded before the engine knows it. */
static int submit(const struct sl_config *cfg, const struct exec_run *r, const char *refs,
		  const char *script, int64_t timeout_ms, struct exec_outcome *o, int64_t *id,
		  struct sl_err *err)
{
	char name[128], pending[200];
	int error;

	if ((error = push_inputs(cfg, r, refs, err)) != 0)
		return error;
	job_name(r, name, sizeof(name));
	if (exec_pending(cfg, name, pending, sizeof(pending)) != 0)
		return sl_err_set(err, SL_ERROR, "a job name too long");
	if ((error = store_job_add(r->st, r->run_id, r->attempt, r->purpose, pending, refs, id,
				   err)) != 0)
		return error;
	return submit_recorded(cfg, r, script, timeout_ms, o, *id, err);
}

/* Poll until the job ends; a few failures to ask are waited out, more are an error. */
static int wait_job(const struct sl_config *cfg, const char *handle, struct exec_status *st,
		    struct sl_err *err)
{
	int failures = 0, error;

	for (;;) {
		if ((error = exec_poll(cfg, handle, st, err)) != 0) {
			if (++failures >= POLL_ERRORS_MAX)
				return error;
			sl_log(SL_LOG_WARN, "job %s: %s (asking again)", handle, err->msg);
			sl_err_clear(err);
		} else {
			failures = 0;
			if (st->state == EXEC_DONE || st->state == EXEC_LOST)
				return 0;
		}
		sl_sleep_ms(cfg->executor.poll_ms);
	}
}

/* 1 when ls-remote's output lists `ref` exactly ("<oid>\t<ref>" lines). */
static int has_ref(const char *ls, const char *ref)
{
	size_t n = strlen(ref);

	for (const char *p = ls; (p = strchr(p, '\t')) != NULL; p++)
		if (!strncmp(p + 1, ref, n) && (p[1 + n] == '\n' || !p[1 + n]))
			return 1;
	return 0;
}

/* Fetch <refs>/out and <refs>/result into refs/sluice/fetched/<run>/: SL_ENOTFOUND when the job pushed none. */
static int fetch_result(const struct sl_config *cfg, const struct exec_run *r, const char *refs,
			struct exec_outcome *o, struct sl_err *err)
{
	struct sl_buf out = SL_BUF_INIT;
	char a[400], b[400], la[200], lb[200];
	int error;

	if (sl_fmt_fixed(la, sizeof(la), "refs/sluice/fetched/%s/out", r->run_id) ||
	    sl_fmt_fixed(lb, sizeof(lb), "refs/sluice/fetched/%s/result", r->run_id) ||
	    sl_fmt_fixed(a, sizeof(a), "+%s/out:%s", refs, la) ||
	    sl_fmt_fixed(b, sizeof(b), "+%s/result:%s", refs, lb))
		return sl_err_set(err, SL_ERROR, "a ref name too long");
	{
		/* both, or it did not report: a builder could push one of them itself */
		char ra[400], rb[400];
		const char *ls[] = { "ls-remote", "--", cfg->executor.remote, ra, rb, NULL };
		if (sl_fmt_fixed(ra, sizeof(ra), "%s/out", refs) ||
		    sl_fmt_fixed(rb, sizeof(rb), "%s/result", refs))
			return sl_err_set(err, SL_ERROR, "a ref name too long");
		sl_buf_init(&out, 4096);
		error = remote_git(r->repo_root, ls, &out, err);
		if (!error && (!has_ref(sl_buf_cstr(&out), ra) || !has_ref(sl_buf_cstr(&out), rb)))
			error = sl_err_set(err, SL_ENOTFOUND, "the job pushed no result to %s/out "
					   "and %s/result", refs, refs);
		sl_buf_release(&out);
		if (error)
			return error;
	}
	{
		const char *f[] = { "fetch", "-q", "--no-tags", "--no-write-fetch-head", "--",
				    cfg->executor.remote, a, b, NULL };
		const char *ro[] = { "rev-parse", "--verify", "-q", la, NULL };
		const char *rr[] = { "rev-parse", "--verify", "-q", lb, NULL };
		if ((error = remote_git(r->repo_root, f, NULL, err)) != 0)
			return error;
		sl_buf_init(&out, 128);
		if ((error = local_git(r->repo_root, ro, NULL, &out, err)) == 0 &&
		    (error = take_oid(&out, o->out, err)) == 0) {
			sl_buf_reset(&out);
			if ((error = local_git(r->repo_root, rr, NULL, &out, err)) == 0)
				error = take_oid(&out, o->result, err);
		}
		sl_buf_release(&out);
	}
	return error;
}

/* The result must be a commit on the commit the job was given (its only parent). */
static int check_result(const struct exec_run *r, const struct exec_outcome *o, char *why,
			size_t n, struct sl_err *err)
{
	struct sl_buf out = SL_BUF_INIT;
	char parent[41], spec[64];
	const char *args[] = { "rev-parse", "--verify", "-q", spec, NULL };
	int error;

	snprintf(spec, sizeof(spec), "%s^1", o->result);
	sl_buf_init(&out, 128);
	error = local_git(r->repo_root, args, NULL, &out, err);
	if (!error && take_oid(&out, parent, err) == 0 && !strcmp(parent, r->base))
		why[0] = '\0';
	else if (!error || error == SL_ERROR) {
		sl_err_clear(err);
		error = 0;
		snprintf(why, n, "the result it pushed (%.12s) is not a commit on %.12s, the commit "
			 "it was given: not taken", o->result, r->base);
	}
	sl_buf_release(&out);
	return error;
}

/* The engine's own log of a job that ended without reporting, appended to r->engine_log. */
static void keep_engine_log(const struct sl_config *cfg, const struct exec_run *r,
			    const char *handle)
{
	struct sl_buf log = SL_BUF_INIT;
	struct sl_err e = SL_ERR_INIT;

	if (!r->engine_log)
		return;
	sl_buf_init(&log, (size_t)256 << 10);
	sl_buf_addf(&log, "\n==== sluice: the engine's log of job %s ====\n", handle);
	if (exec_log(cfg, handle, &log, &e) != 0)
		sl_buf_addf(&log, "(the engine's log of %s cannot be read here: %s)\n", handle, e.msg);
	sl_append_file(r->engine_log, sl_buf_cstr(&log), log.len);
	sl_buf_release(&log);
}

/* What the job left: fetched, or lost (o->lost, o->why). */
static int collect(const struct sl_config *cfg, const struct exec_run *r, const char *refs,
		   const struct exec_status *st, struct exec_outcome *o, struct sl_err *err)
{
	int error = fetch_result(cfg, r, refs, o, err);

	if (error == SL_ENOTFOUND) {
		sl_err_clear(err);
		o->lost = 1;
		if (st->state == EXEC_LOST)
			snprintf(o->why, sizeof(o->why), "the engine lost job %s: %s", o->handle,
				 st->detail);
		else
			snprintf(o->why, sizeof(o->why), "job %s ended (%s) before it pushed its "
				 "result", o->handle, st->detail);
		keep_engine_log(cfg, r, o->handle);
		return 0;
	}
	if (error)
		return error;
	if ((error = check_result(r, o, o->why, sizeof(o->why), err)) == 0 && o->why[0])
		o->lost = 1;
	return error;
}

/*
 * A row recorded before its submission, still under its pending handle: the
 * sluice that submitted it was killed before it recorded the engine's
 * answer, or before it asked. The job of that name is followed (1); with
 * none, it never reached the engine and is submitted now under the same
 * row (2).
 */
static int find_pending(const struct sl_config *cfg, const struct exec_run *r,
			const struct store_job *job, struct exec_outcome *o, struct sl_err *err)
{
	const char *name = exec_pending_name(job->handle);
	int found = exec_find(cfg, name, o->handle, sizeof(o->handle), err);

	if (found <= 0)
		return found < 0 ? found : 2;
	if ((found = store_job_set_handle(r->st, job->id, o->handle, err)) != 0)
		return found;
	job_event(r, "%s job %s of attempt %d is followed again: found by its name %s (its "
		  "sluice was killed before it recorded the job)", r->purpose, o->handle,
		  r->attempt, name);
	return 1;
}

/* The open job of this run, attempt and purpose, if a killed tick left one: 1 when found. */
static int reattach(const struct sl_config *cfg, const struct exec_run *r,
		    struct exec_outcome *o, const char *refs, int64_t *id, struct sl_err *err)
{
	struct store_job job = STORE_JOB_INIT;
	int error = store_job_open(r->st, r->run_id, r->attempt, r->purpose, &job, err);

	if (error == SL_ENOTFOUND) {
		sl_err_clear(err);
		return 0;
	}
	if (error)
		return error;
	if (strcmp(job.refs, refs)) {
		/* a car's job on another commit (the train changed meanwhile): not this one's */
		struct sl_err e = SL_ERR_INIT;
		store_job_end(r->st, job.id, "cancelled: the merge train changed", &e);
		sl_err_clear(&e);
		exec_cancel(cfg, job.handle, &e);
		store_job_release(&job);
		return 0;
	}
	*id = job.id;
	if (exec_pending_name(job.handle)) {
		error = find_pending(cfg, r, &job, o, err);
		store_job_release(&job);
		return error;
	}
	snprintf(o->handle, sizeof(o->handle), "%s", job.handle);
	store_job_release(&job);
	job_event(r, "%s job %s of attempt %d is followed again (its sluice was interrupted)",
		  r->purpose, o->handle, r->attempt);
	return 1;
}

/* 1 when the job's row was ended meanwhile by someone else (sluice abandon cancelled it). */
static int ended_by_other(const struct exec_run *r, int64_t id)
{
	struct store_job job = STORE_JOB_INIT;
	struct sl_err e = SL_ERR_INIT;
	int open = store_job_open(r->st, r->run_id, r->attempt, r->purpose, &job, &e) == 0 &&
		   job.id == id;

	store_job_release(&job);
	return !open && e.code == SL_ENOTFOUND;
}

int exec_job_run(const struct sl_config *cfg, const struct exec_run *r, const char *script,
		 int64_t timeout_ms, struct exec_outcome *o, struct sl_err *err)
{
	struct exec_status st;
	char refs[300], outcome[1200];
	int64_t id = 0;
	int error;

	memset(o, 0, sizeof(*o));
	if (exec_refs(refs, sizeof(refs), r) != 0)
		return sl_err_set(err, SL_ERROR, "a ref name too long");
	if ((error = reattach(cfg, r, o, refs, &id, err)) < 0)
		return error;
	if (error == 2 && (error = push_inputs(cfg, r, refs, err)) == 0)
		/* recorded, never submitted: its inputs again, then under the same row */
		error = submit_recorded(cfg, r, script, timeout_ms, o, id, err);
	else if (error == 0)
		error = submit(cfg, r, refs, script, timeout_ms, o, &id, err);
	else if (error == 1)
		error = 0;
	if (error)
		return error;
	if ((error = wait_job(cfg, o->handle, &st, err)) != 0)
		return error; /* still open: the next tick asks again */
	o->job_id = id;
	if (ended_by_other(r, id)) {
		o->cancelled = 1;
		exec_job_forget(cfg, r->repo_root, refs, r->run_id);
		return 0;
	}
	if ((error = collect(cfg, r, refs, &st, o, err)) != 0)
		return error;
	if (!o->lost) {
		snprintf(o->ended, sizeof(o->ended), "ended: %.400s; result %.12s", st.detail,
			 o->result);
		return 0;
	}
	snprintf(outcome, sizeof(outcome), "lost: %s", o->why);
	if ((error = store_job_end(r->st, id, outcome, err)) != 0)
		return error;
	job_event(r, "%s job %s %s", r->purpose, o->handle, outcome);
	exec_job_forget(cfg, r->repo_root, refs, r->run_id);
	return 0;
}

int exec_job_taken(const struct sl_config *cfg, const struct exec_run *r,
		   const struct exec_outcome *o, struct sl_err *err)
{
	char refs[300];
	int error;

	if ((error = store_job_end(r->st, o->job_id, o->ended, err)) != 0)
		return error;
	job_event(r, "%s job %s %s", r->purpose, o->handle, o->ended);
	if (exec_refs(refs, sizeof(refs), r) == 0)
		exec_job_forget(cfg, r->repo_root, refs, r->run_id);
	return 0;
}

int exec_out_file(const char *repo_root, const char *out, const char *path, struct sl_buf *b,
		  struct sl_err *err)
{
	char spec[4200];
	const char *cat[] = { "cat-file", "blob", spec, NULL };
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	struct sl_git_result res;
	int error;

	if (sl_fmt_fixed(spec, sizeof(spec), "%s:%s", out, path))
		return sl_err_set(err, SL_ERROR, "a path too long");
	/* one git: a path that is missing, or no blob, is an exit of its own */
	o.cwd = repo_root;
	o.out = b;
	o.out_cut_ok = 1;
	o.caller_checks = 1;
	if ((error = sl_git_run(&o, cat, &res, err)) == 0 && (res.exit_code || res.timed_out))
		error = sl_err_set(err, SL_ENOTFOUND, "the job's out has no file %s", path);
	return error;
}

int exec_apply(const char *wt, const char *result, struct sl_err *err)
{
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	const char *args[] = { "read-tree", "-u", "--reset", result, NULL };

	o.cwd = wt;
	o.ceiling = 1;
	return sl_git_run(&o, args, NULL, err);
}

/* Drop the job's refs on the remote and here (best effort: a lost job may still push later). */
static void exec_job_forget(const struct sl_config *cfg, const char *repo_root, const char *refs,
			    const char *run_id)
{
	static const char *const names[] = { "base", "head", "input", "theirs", "result", "out" };
	char spec[6][320], la[200], lb[200];
	const char *push[12] = { "push", "-q", "--", cfg->executor.remote };
	struct sl_err e = SL_ERR_INIT;
	size_t n = 4;

	for (size_t i = 0; i < 6; i++)
		if (!sl_fmt_fixed(spec[i], sizeof(spec[i]), ":%s/%s", refs, names[i]))
			push[n++] = spec[i];
	push[n] = NULL;
	/* a ref that is not there is "remote ref does not exist": no harm */
	if (remote_git(repo_root, push, NULL, &e) != 0)
		sl_log(SL_LOG_DEBUG, "job refs %s: %s", refs, e.msg);
	sl_err_clear(&e);
	if (!sl_fmt_fixed(la, sizeof(la), "refs/sluice/fetched/%s/out", run_id) &&
	    !sl_fmt_fixed(lb, sizeof(lb), "refs/sluice/fetched/%s/result", run_id)) {
		const char *d1[] = { "update-ref", "-d", la, NULL };
		const char *d2[] = { "update-ref", "-d", lb, NULL };
		local_git(repo_root, d1, NULL, NULL, &e);
		sl_err_clear(&e);
		local_git(repo_root, d2, NULL, NULL, &e);
	}
}

void exec_job_cancel(const struct sl_config *cfg, struct store *st, const struct store_job *job,
		     const char *why)
{
	struct sl_err e = SL_ERR_INIT;
	char outcome[600];

	snprintf(outcome, sizeof(outcome), "cancelled: %s", why);
	if (store_job_end(st, job->id, outcome, &e) != 0)
		sl_log(SL_LOG_WARN, "run %s: job %s: %s", job->run_id, job->handle, e.msg);
	sl_err_clear(&e);
	if (exec_cancel(cfg, job->handle, &e) != 0)
		sl_log(SL_LOG_WARN, "run %s: cannot cancel job %s: %s", job->run_id, job->handle,
		       e.msg);
}

int exec_jobs_cancel(const struct sl_config *cfg, struct store *st, const char *run_id,
		     const char *why, int *n)
{
	struct store_job *v = NULL;
	struct sl_err e = SL_ERR_INIT;
	size_t count = 0;

	*n = 0;
	if (store_jobs_of_run(st, run_id, &v, &count, &e) != 0)
		return -1;
	for (size_t i = 0; i < count; i++)
		if (!v[i].ended_at) {
			exec_job_cancel(cfg, st, &v[i], why);
			(*n)++;
		}
	store_jobs_free(v, count);
	return 0;
}
