/*
 * The builder and the gates as jobs (executor/executor.h): what build_run and
 * build_gates_run_sub do here, done by the job script on a worker, with
 * the same artifacts afterwards (builder.log, summary.md, gates.json,
 * gates/<name>.log) and the job's files put into the run's worktree.
 */
#include "builder/builder_int.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/proc.h"
#include "core/time.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JOB_MARGIN_MS ((int64_t)10 * 60 * 1000) /* fetching, pushing, waiting for git */

/* worktree.copy's paths, from the run's worktree into <input>/copy/ (cp -R -P -p). */
static int copy_paths(const struct sl_config *cfg, const char *wt, const char *input,
		      struct sl_err *err)
{
	int error = 0;

	for (char **p = cfg->worktree.copy; p && *p && !error; p++) {
		char *from = sl_path_join(wt, *p), *to = sl_path_fmt("%s/copy/%s", input, *p);
		char *dir = to ? strdup(to) : NULL, *slash = dir ? strrchr(dir, '/') : NULL;
		const char *argv[] = { "cp", "-R", "-P", "-p", "--", from, to, NULL };
		struct sl_proc_opts po = SL_PROC_OPTS_INIT;
		struct sl_proc_result res;

		if (!from || !to || !slash) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
		} else if (sl_path_exists(from)) {
			*slash = '\0';
			po.argv = argv;
			if ((error = sl_mkdir_p(dir, err)) == 0 &&
			    (error = sl_proc_run(&po, &res, err)) == 0 && res.exit_code)
				error = sl_err_set(err, SL_ERROR, "cannot copy worktree.copy '%s' for "
						   "the job", *p);
		}
		free(from);
		free(to);
		free(dir);
	}
	return error;
}

/* <run_dir>/attempts/<n>/job-input: prompt.md and copy/, made afresh. */
static int make_input(const struct build_opts *o, char **input, struct sl_err *err)
{
	struct sl_buf prompt = SL_BUF_INIT;
	char *path = NULL;
	int error;

	if (!(*input = sl_path_fmt("%s/attempts/%d/job-input", o->run_dir, o->attempt)) ||
	    !(path = sl_path_join(*input, "prompt.md")))
		return sl_err_set(err, SL_ERROR, "out of memory");
	if ((error = sl_rm_rf(*input, err)) == 0 && (error = sl_mkdir_p(*input, err)) == 0 &&
	    (error = sl_read_file(&prompt, o->prompt_file, 0, err)) == 0 &&
	    (error = sl_write_file(path, sl_buf_cstr(&prompt), prompt.len, err)) == 0)
		error = copy_paths(o->cfg, o->worktree, *input, err);
	sl_buf_release(&prompt);
	free(path);
	return error;
}

/* The job script of the attempt, kept as attempts/<n>/job.sh. */
static int build_script(const struct build_opts *o, const char *const *argv,
			const char *const *env, struct sl_buf *b, struct sl_err *err)
{
	struct exec_script sc = { 0 };
	char refs[300], *path = NULL;
	int error;

	if (exec_refs(refs, sizeof(refs), o->job) != 0)
		return sl_err_set(err, SL_ERROR, "a ref name too long");
	sc.cfg = o->cfg;
	sc.purpose = "build";
	sc.refs = refs;
	sc.run_id = o->run_id;
	sc.branch = o->branch;
	sc.attempt = o->attempt;
	sc.merge_theirs = o->job->theirs != NULL;
	sc.argv = argv;
	sc.env = env;
	sc.timeout_ms = build__timeout(o);
	sc.grace_ms = o->kill_grace_ms;
	sc.log_max = o->cfg->builder.log_max;
	if ((error = exec_script_write(&sc, b, err)) != 0)
		return error;
	if (!(path = sl_path_fmt("%s/attempts/%d/job.sh", o->run_dir, o->attempt)))
		return sl_err_set(err, SL_ERROR, "out of memory");
	error = sl_write_file(path, sl_buf_cstr(b), b->len, err);
	free(path);
	return error;
}

/* An integer file of the job's out ("exit"); def when absent. */
static int out_int(const char *repo, const char *out, const char *path, int def)
{
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err e = SL_ERR_INIT;
	int v = def;

	sl_buf_init(&b, 64);
	if (exec_out_file(repo, out, path, &b, &e) == 0 && b.len) {
		const char *s = sl_buf_cstr(&b);
		char *end;
		long l;

		errno = 0;
		l = strtol(s, &end, 10);
		/* no number, or none an int holds: the default, as when absent */
		if (end != s && !errno && l >= INT_MIN && l <= INT_MAX)
			v = (int)l;
	}
	sl_buf_release(&b);
	return v;
}

/* A file of the job's out appended (or, for summary.md, written) to the run folder. */
static void out_copy(const char *repo, const char *out, const char *path, const char *dest,
		     size_t max, int replace)
{
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err e = SL_ERR_INIT;

	sl_buf_init(&b, max);
	if (exec_out_file(repo, out, path, &b, &e) == 0) {
		if (replace)
			sl_write_file(dest, sl_buf_cstr(&b), b.len, &e);
		else
			sl_append_file(dest, sl_buf_cstr(&b), b.len);
	}
	sl_buf_release(&b);
}

/* What the builder did in the job: its log, summary, exit; its files into the worktree. */
static int take_build(const struct build_opts *o, const char *log, struct sl_proc_result *res,
		      struct sl_err *err)
{
	const struct exec_outcome *oc = o->job_out;
	const char *repo = o->job->repo_root;
	char *summary = sl_path_join(o->run_dir, "summary.md");
	int error;

	if (!summary)
		return sl_err_set(err, SL_ERROR, "out of memory");
	out_copy(repo, oc->out, "builder.log", log, o->cfg->builder.log_max + 4096, 0);
	out_copy(repo, oc->out, "summary.md", summary, (size_t)1 << 20, 1);
	free(summary);
	res->exit_code = out_int(repo, oc->out, "exit", 1);
	res->timed_out = out_int(repo, oc->out, "timed_out", 0);
	if ((error = exec_apply(o->worktree, oc->result, err)) != 0)
		return error;
	return exec_job_taken(o->cfg, o->job, oc, err);
}

int build__run_job(const struct build_opts *o, struct sl_proc_result *res, struct sl_err *err)
{
	struct sl_buf script = SL_BUF_INIT;
	sl_strv argv = NULL, env = NULL;
	char *input = NULL, *log = sl_path_join(o->run_dir, "builder.log"), line[1600], how[128];
	struct exec_run r = *o->job;
	int64_t t0 = sl_now_ms();
	int error;

	memset(res, 0, sizeof(*res));
	memset(o->job_out, 0, sizeof(*o->job_out));
	sl_buf_init(&script, 0);
	if (!log || build__env_list(o, &env) != 0) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = build_argv_agent(&argv, o->cfg, o->argv_override, o->agent, err)) != 0 ||
	    (error = make_input(o, &input, err)) != 0 ||
	    (error = build_script(o, (const char *const *)argv, (const char *const *)env, &script,
				  err)) != 0)
		goto out;
	r.input_dir = input;
	r.engine_log = log;
	snprintf(line, sizeof(line), "==== sluice: attempt %d (%s) as a %s job ====\n", o->attempt,
		 run_mode_name(o->mode), exec_kind_name(o->cfg->executor.kind));
	sl_append_file(log, line, strlen(line));
	error = exec_job_run(o->cfg, &r, sl_buf_cstr(&script), build__timeout(o) +
			     (o->cfg->worktree.setup ? o->cfg->worktree.setup_timeout_ms : 0) +
			     JOB_MARGIN_MS, o->job_out, err);
	if (!error && !o->job_out->lost && !o->job_out->cancelled)
		error = take_build(o, log, res, err);
	res->duration_ms = sl_now_ms() - t0;
	if (!error && !o->job_out->lost && !o->job_out->cancelled)
		sl_proc_describe(how, sizeof(how), res);
	snprintf(line, sizeof(line), "\n==== sluice: attempt %d ended: job %s, %s ====\n",
		 o->attempt, o->job_out->handle[0] ? o->job_out->handle : "not submitted",
		 error ? err->msg : o->job_out->lost ? o->job_out->why
		 : o->job_out->cancelled ? "cancelled" : how);
	sl_append_file(log, line, strlen(line));
out:
	sl_strv_free(argv);
	sl_strv_free(env);
	sl_buf_release(&script);
	free(input);
	free(log);
	return error;
}

/* ---- the gates as a job ---- */

static int gates_script(const struct sl_config *cfg, const char *branch, const struct exec_run *r,
			struct sl_buf *b, const char *keep, struct sl_err *err)
{
	struct exec_script sc = { 0 };
	char refs[300];
	int error;

	if (exec_refs(refs, sizeof(refs), r) != 0)
		return sl_err_set(err, SL_ERROR, "a ref name too long");
	sc.cfg = cfg;
	sc.purpose = r->purpose;
	sc.refs = refs;
	sc.run_id = r->run_id;
	sc.branch = branch;
	sc.attempt = r->attempt;
	sc.log_max = cfg->builder.log_max ? cfg->builder.log_max : (size_t)10 << 20;
	if ((error = exec_script_write(&sc, b, err)) != 0)
		return error;
	return sl_write_file(keep, sl_buf_cstr(b), b->len, err);
}

/* One gate's result from the job's out; its log into <run_dir>/<sub>/gates/<name>.log. */
static int take_gate(const struct sl_config *cfg, const struct sl_gate *g, const char *repo,
		     const char *out, const char *run_dir, const char *sub,
		     struct build_gate_result *r, struct sl_err *err)
{
	char f[200], *path = NULL;
	struct sl_buf wrote = SL_BUF_INIT;
	struct sl_err e = SL_ERR_INIT;

	if (!(r->name = strdup(g->name)) || !(r->argv = sl_strv_copy((const char *const *)g->argv)) ||
	    asprintf(&r->log, "%s%sgates/%s.log", sub ? sub : "", sub ? "/" : "", g->name) < 0 ||
	    !(path = sl_path_join(run_dir, r->log)))
		return sl_err_set(err, SL_ERROR, "out of memory");
	unlink(path);
	snprintf(f, sizeof(f), "gates/%s.log", g->name);
	out_copy(repo, out, f, path, (cfg->builder.log_max ? cfg->builder.log_max : (size_t)10 << 20)
		 + 4096, 1);
	r->output = sl_tail_file(path, BUILD_GATE_TAIL);
	free(path);
	snprintf(f, sizeof(f), "gates/%s.exit", g->name);
	r->exit_code = out_int(repo, out, f, 127);
	snprintf(f, sizeof(f), "gates/%s.ms", g->name);
	r->duration_ms = out_int(repo, out, f, 0);
	snprintf(f, sizeof(f), "gates/%s.timed_out", g->name);
	r->timed_out = out_int(repo, out, f, 0);
	r->passed = !r->exit_code && !r->timed_out;
	snprintf(f, sizeof(f), "gates/%s.wrote", g->name);
	sl_buf_init(&wrote, 2048);
	if (exec_out_file(repo, out, f, &wrote, &e) == 0) {
		r->passed = 0;
		if (asprintf(&r->error, "no_write: the gate changed files (it has worktree: "
			     "read-only): %.1000s", sl_buf_cstr(&wrote)) < 0)
			r->error = NULL;
	} else if (r->exit_code == 72) {
		r->error = strdup("worktree.setup failed in the job: see the gate's log");
	}
	sl_buf_release(&wrote);
	return 0;
}

static int take_gates(const struct sl_config *cfg, const char *wt, const char *run_dir,
		      const char *sub, const struct exec_run *job, const struct exec_outcome *oc,
		      struct build_gate_results *out, struct sl_err *err)
{
	char *dir = sub ? sl_path_fmt("%s/%s/gates", run_dir, sub) : sl_path_join(run_dir, "gates");
	int error = 0;

	if (!dir || (cfg->ngates && !(out->v = calloc(cfg->ngates, sizeof(*out->v)))))
		error = sl_err_set(err, SL_ERROR, "out of memory");
	if (!error)
		error = sl_mkdir_p(dir, err);
	for (size_t i = 0; i < cfg->ngates && !error; i++) {
		out->n++;
		error = take_gate(cfg, &cfg->gates[i], job->repo_root, oc->out, run_dir, sub,
				  &out->v[i], err);
		if (!out->v[i].passed)
			out->all_passed = 0;
	}
	if (!error)
		error = build__gates_write(run_dir, sub, out, err);
	/* what the gates left (formatters) is kept as a local gate's would be; never a car's */
	if (!error && strcmp(job->purpose, "train"))
		error = exec_apply(wt, oc->result, err);
	if (!error)
		error = exec_job_taken(cfg, job, oc, err);
	free(dir);
	return error;
}

int build_gates_run_job(const struct sl_config *cfg, const char *wt, const char *run_dir,
			const char *sub, const char *branch, const struct exec_run *job,
			struct exec_outcome *job_out, struct build_gate_results *out,
			struct sl_err *err)
{
	struct sl_buf script = SL_BUF_INIT;
	struct exec_run r = *job;
	char *input = sub ? sl_path_fmt("%s/%s/job-input", run_dir, sub)
			  : sl_path_join(run_dir, "gates-job-input");
	char *keep = sub ? sl_path_fmt("%s/%s/gates-job.sh", run_dir, sub)
			 : sl_path_join(run_dir, "gates-job.sh");
	int64_t limit = JOB_MARGIN_MS + (cfg->worktree.setup ? cfg->worktree.setup_timeout_ms : 0);
	int error;

	memset(out, 0, sizeof(*out));
	out->all_passed = 1;
	sl_buf_init(&script, 0);
	for (size_t i = 0; i < cfg->ngates; i++)
		limit += cfg->gates[i].timeout_ms;
	if (!input || !keep) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = sl_rm_rf(input, err)) != 0 || (error = sl_mkdir_p(input, err)) != 0 ||
	    (error = copy_paths(cfg, wt, input, err)) != 0 ||
	    (error = gates_script(cfg, branch, &r, &script, keep, err)) != 0)
		goto out;
	r.input_dir = input;
	r.engine_log = NULL;
	if ((error = exec_job_run(cfg, &r, sl_buf_cstr(&script), limit, job_out, err)) != 0)
		goto out;
	if (job_out->lost || job_out->cancelled)
		out->all_passed = 0;
	else
		error = take_gates(cfg, wt, run_dir, sub, &r, job_out, out, err);
out:
	sl_buf_release(&script);
	free(input);
	free(keep);
	return error;
}
