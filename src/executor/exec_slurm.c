/*
 * The slurm executor (executor.h): sbatch --parsable, scontrol show job,
 * scancel. No accounting database is needed: a job's state comes from
 * `scontrol show job` while Slurm keeps it (MinJobAge), and a job Slurm no
 * longer knows is lost unless its result reached the remote (exec_job.c).
 */
#include "executor/executor_int.h"
#include "core/fs.h"
#include "core/proc.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLURM_OUT_MAX ((size_t)64 << 10)

/* Run a Slurm CLI: stdout into out, stderr's last line into why. */
static int slurm_cli(const char *const *argv, const char *stdin_data,
		     const char *const *env_drop, struct sl_buf *out, char *why, size_t n,
		     struct sl_err *err)
{
	struct sl_proc_opts po = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf errout = SL_BUF_INIT;
	int error;

	sl_buf_init(&errout, 4096);
	po.argv = argv;
	po.env_drop = env_drop;
	po.stdin_data = stdin_data;
	po.stdin_len = stdin_data ? strlen(stdin_data) : 0;
	po.out = out;
	po.errout = &errout;
	po.timeout_ms = 60 * 1000;
	why[0] = '\0';
	error = sl_proc_run(&po, &res, err);
	if (error == SL_ENOTFOUND)
		error = sl_err_set(err, SL_ENOTFOUND, "%s is not installed here (executor.kind is "
				   "slurm: install Slurm's client commands, and set SLURM_CONF if "
				   "the cluster's slurm.conf is not in /etc/slurm)", argv[0]);
	if (!error) {
		sl_buf_last_line(&errout, why, n);
		if (res.exit_code)
			error = SL_ERROR;
		if (res.exit_code && !why[0])
			sl_proc_describe(why, n, &res);
	}
	sl_buf_release(&errout);
	return error;
}

static int add_opt(sl_strv *v, const char *flag, const char *value)
{
	char *a = NULL;
	int r;

	if (!value)
		return 0;
	if (asprintf(&a, "%s=%s", flag, value) < 0)
		return -1;
	r = sl_strv_push(v, a);
	free(a);
	return r;
}

static int sbatch_argv(const struct sl_config *cfg, const struct exec_job *job, sl_strv *v)
{
	char cpus[16], limit[32], out[4200];
	const char *dir = cfg->executor.workdir ? cfg->executor.workdir : "/tmp";
	int64_t min = job->timeout_ms > 0 ? (job->timeout_ms + 59999) / 60000 : 0;

	snprintf(cpus, sizeof(cpus), "%d", cfg->executor.slurm.cpus);
	snprintf(limit, sizeof(limit), "%lld", (long long)min);
	if (sl_fmt_fixed(out, sizeof(out), "%s/sluice-%%j.out", dir))
		return -1;
	if (sl_strv_push(v, "sbatch") < 0 || sl_strv_push(v, "--parsable") < 0 ||
	    sl_strv_push(v, "--no-requeue") < 0 || add_opt(v, "--job-name", job->name) < 0 ||
	    add_opt(v, "--output", out) < 0 || add_opt(v, "--chdir", dir) < 0 ||
	    add_opt(v, "--time", min ? limit : NULL) < 0 ||
	    add_opt(v, "--partition", cfg->executor.slurm.partition) < 0 ||
	    add_opt(v, "--account", cfg->executor.slurm.account) < 0 ||
	    add_opt(v, "--qos", cfg->executor.slurm.qos) < 0 ||
	    add_opt(v, "--cpus-per-task", cfg->executor.slurm.cpus ? cpus : NULL) < 0 ||
	    add_opt(v, "--mem", cfg->executor.slurm.memory) < 0)
		return -1;
	for (char **o = cfg->executor.slurm.options; o && *o; o++)
		if (sl_strv_push(v, *o) < 0)
			return -1;
	return 0;
}

int exec_slurm_submit(const struct sl_config *cfg, const struct exec_job *job, char *id,
		      size_t n, struct sl_err *err)
{
	struct sl_buf out = SL_BUF_INIT;
	sl_strv argv = NULL;
	char why[512];
	size_t len;
	int error;

	sl_buf_init(&out, SLURM_OUT_MAX);
	if (sbatch_argv(cfg, job, &argv) < 0) {
		error = sl_err_set(err, SL_ERROR, "out of memory, or executor.workdir too long");
		goto out;
	}
	error = slurm_cli((const char *const *)argv, job->script, job->env_drop, &out, why,
			  sizeof(why), err);
	if (error == SL_ERROR && !err->msg[0])
		error = sl_err_set(err, SL_ERROR, "sbatch refused the job: %s", why);
	if (error)
		goto out;
	/* "<jobid>" or "<jobid>;<cluster>" */
	len = strspn(sl_buf_cstr(&out), "0123456789");
	if (!len || len >= n)
		error = sl_err_set(err, SL_ERROR, "sbatch printed no job id ('%.100s')",
				   sl_buf_cstr(&out));
	else
		snprintf(id, n, "%.*s", (int)len, sl_buf_cstr(&out));
out:
	sl_strv_free(argv);
	sl_buf_release(&out);
	return error;
}

/* The value of `key=` in scontrol's one-line output, into out. */
static int field(const char *line, const char *key, char *out, size_t n)
{
	size_t k = strlen(key);

	out[0] = '\0';
	for (const char *p = line; (p = strstr(p, key)) != NULL; p += k) {
		if ((p == line || p[-1] == ' ') && p[k] == '=') {
			size_t len = strcspn(p + k + 1, " \n");
			snprintf(out, n, "%.*s", (int)len, p + k + 1);
			return 0;
		}
	}
	return -1;
}

static const char *const slurm_running[] = { "RUNNING", "COMPLETING", "SUSPENDED", "STOPPED",
					     "RESIZING", "SIGNALING", "STAGE_OUT", "CONFIGURING",
					     NULL };
static const char *const slurm_pending[] = { "PENDING", "REQUEUED", "REQUEUE_HOLD",
					     "REQUEUE_FED", "RESV_DEL_HOLD", NULL };

/*
 * The status of ExitCode=<status>:<signal>: 0 when it names none (the state
 * then says whether the job failed), 1 for a number no status can be.
 */
static int exit_status(const char *code)
{
	long l;

	errno = 0;
	l = strtol(code, NULL, 10);
	return errno || l < INT_MIN || l > INT_MAX ? 1 : (int)l;
}

static int in_list(const char *s, const char *const *v)
{
	for (; *v; v++)
		if (!strcmp(s, *v))
			return 1;
	return 0;
}

int exec_slurm_parse(const char *line, struct exec_status *st, struct sl_err *err)
{
	char state[64], reason[128], code[32];

	memset(st, 0, sizeof(*st));
	if (field(line, "JobState", state, sizeof(state)) != 0 || !state[0])
		return sl_err_set(err, SL_EINVALID, "scontrol said no JobState ('%.100s')", line);
	field(line, "Reason", reason, sizeof(reason));
	field(line, "ExitCode", code, sizeof(code));
	if (in_list(state, slurm_pending)) {
		st->state = EXEC_PENDING;
		snprintf(st->detail, sizeof(st->detail), "%s (%s)", state, reason);
	} else if (in_list(state, slurm_running)) {
		st->state = EXEC_RUNNING;
		snprintf(st->detail, sizeof(st->detail), "%s", state);
	} else if (!strcmp(state, "COMPLETED") || !strcmp(state, "FAILED")) {
		/* ExitCode=<status>:<signal> of the batch script */
		st->state = EXEC_DONE;
		st->exit_code = exit_status(code);
		if (!strcmp(state, "FAILED") && !st->exit_code)
			st->exit_code = 1;
		snprintf(st->detail, sizeof(st->detail), "%s, ExitCode=%s", state, code);
	} else {
		/* CANCELLED, NODE_FAIL, TIMEOUT, PREEMPTED, BOOT_FAIL, DEADLINE, OUT_OF_MEMORY... */
		st->state = EXEC_LOST;
		snprintf(st->detail, sizeof(st->detail), "%s%s%s%s", state,
			 strcmp(reason, "None") && reason[0] ? " (" : "",
			 strcmp(reason, "None") && reason[0] ? reason : "",
			 strcmp(reason, "None") && reason[0] ? ")" : "");
	}
	return 0;
}

static int scontrol_show(const char *id, struct sl_buf *out, char *why, size_t n,
			 struct sl_err *err)
{
	const char *argv[] = { "scontrol", "show", "job", "-o", id, NULL };

	return slurm_cli(argv, NULL, NULL, out, why, n, err);
}

int exec_slurm_poll(const struct sl_config *cfg, const char *id, struct exec_status *st,
		    struct sl_err *err)
{
	struct sl_buf out = SL_BUF_INIT;
	char why[512];
	int error;

	(void)cfg;
	memset(st, 0, sizeof(*st));
	sl_buf_init(&out, SLURM_OUT_MAX);
	error = scontrol_show(id, &out, why, sizeof(why), err);
	if (error == SL_ERROR && strstr(why, "Invalid job id")) {
		/* purged after MinJobAge, or never known: nothing more to ask */
		sl_err_clear(err);
		st->state = EXEC_LOST;
		snprintf(st->detail, sizeof(st->detail), "Slurm no longer knows job %s", id);
		error = 0;
	} else if (error == SL_ERROR) {
		error = sl_err_set(err, SL_ERROR, "cannot ask Slurm about job %s: %s", id, why);
	} else if (!error) {
		error = exec_slurm_parse(sl_buf_cstr(&out), st, err);
	}
	sl_buf_release(&out);
	return error;
}

int exec_slurm_cancel(const struct sl_config *cfg, const char *id, struct sl_err *err)
{
	const char *argv[] = { "scancel", id, NULL, NULL };
	struct sl_buf out = SL_BUF_INIT;
	char why[512];
	int error;

	(void)cfg;
	if (id[0] == '?') { /* a pending handle (exec_pending): every job of the name */
		argv[1] = "--name";
		argv[2] = id + 1;
	}
	sl_buf_init(&out, 4096);
	error = slurm_cli(argv, NULL, NULL, &out, why, sizeof(why), err);
	if (error == SL_ERROR && (strstr(why, "Invalid job id") || strstr(why, "already completing")))
		error = 0; /* ended, or forgotten: nothing to cancel */
	else if (error == SL_ERROR)
		error = sl_err_set(err, SL_ERROR, "scancel %s failed: %s", id, why);
	sl_buf_release(&out);
	return error;
}

/*
 * The jobs of a name that slurmctld still keeps, in any state (squeue
 * --states=all: pending, running, and ended ones until MinJobAge): the
 * newest is the one followed, any other cancelled.
 */
int exec_slurm_find(const struct sl_config *cfg, const char *name, char *id, size_t n,
		    struct sl_err *err)
{
	const char *argv[] = { "squeue", "--noheader", "--states=all", "--format=%i", "--name",
			       name, NULL };
	struct sl_buf out = SL_BUF_INIT;
	unsigned long long newest = 0;
	char why[512];
	int error;

	sl_buf_init(&out, SLURM_OUT_MAX);
	if ((error = slurm_cli(argv, NULL, NULL, &out, why, sizeof(why), err)) == SL_ERROR)
		error = sl_err_set(err, SL_ERROR, "cannot ask Slurm for jobs named %s: %s", name, why);
	for (const char *p = sl_buf_cstr(&out); !error && *p;) {
		size_t len = strcspn(p, "\n");
		unsigned long long v = strtoull(p, NULL, 10);
		char other[32];
		if (v && newest) { /* never two jobs of one name followed */
			struct sl_err e = SL_ERR_INIT;
			snprintf(other, sizeof(other), "%llu", v < newest ? v : newest);
			exec_slurm_cancel(cfg, other, &e);
		}
		if (v > newest)
			newest = v;
		p += len + (p[len] == '\n');
	}
	sl_buf_release(&out);
	if (error)
		return error;
	if (!newest)
		return 0;
	snprintf(id, n, "%llu", newest);
	return 1;
}

int exec_slurm_log(const struct sl_config *cfg, const char *id, struct sl_buf *out,
		   struct sl_err *err)
{
	struct sl_buf show = SL_BUF_INIT;
	char why[512], path[4096];
	int error;

	(void)cfg;
	sl_buf_init(&show, SLURM_OUT_MAX);
	if ((error = scontrol_show(id, &show, why, sizeof(why), err)) != 0) {
		if (error == SL_ERROR)
			error = sl_err_set(err, SL_ENOTFOUND, "Slurm no longer knows job %s: %s", id,
					   why);
		goto out;
	}
	if (field(sl_buf_cstr(&show), "StdOut", path, sizeof(path)) != 0 || path[0] != '/') {
		error = sl_err_set(err, SL_ENOTFOUND, "job %s names no output file", id);
		goto out;
	}
	/*
	 * On a shared file system, or this host's node: else not readable here.
	 * Its end, never through a link (a builder on this node could plant one).
	 */
	{
		size_t room = (out->max ? out->max : SLURM_OUT_MAX) - out->len;
		char *tail = sl_tail_file(path, room > 64 ? room - 64 : room);
		if (!tail || !*tail)
			error = sl_err_set(err, SL_ENOTFOUND, "job %s's output %s is empty or cannot "
					   "be read here", id, path);
		else
			sl_buf_puts(out, tail);
		free(tail);
	}
out:
	sl_buf_release(&show);
	return error;
}
