/* Validator conditions of the retry rules (builder.h): run one, keep its verdict. */
#include "builder/builder_int.h"
#include "core/buf.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/proc.h"
#include "core/utf8.h"
#include "store/store.h"

#include <ctype.h>
#include <fcntl.h>
#include <stdarg.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VALIDATE_LOG_DEFAULT_MAX ((size_t)1 << 20)
#define VALIDATE_OUT_MAX ((size_t)4096)

/* One validator run: what it is, where its files go, how it ended. */
struct vrun {
	const struct sl_retry_rule *r;
	const struct build_validate_ctx *vc;
	int rule;          /* counted from 1, as people and the events count */
	int attempt;
	char name[64];     /* "assess" for [sh, validators/assess.sh] */
	char *log, *input; /* validate/<rule>-attempt<N>.{log,json}, absolute */
	char *add[10];     /* the environment added */
	sl_strv drop;
	char why[SL_ERR_MSG_MAX + 256]; /* how it did not hold */
};

/* The validator's name for people: the program, or the script an interpreter runs. */
static void validator_name(char *out, size_t n, const char *const *argv)
{
	static const char *const interp[] = { "sh", "bash", "dash", "python", "python3", "node",
					      "perl", "ruby", "env", NULL };
	const char *prog = argv && argv[0] ? argv[0] : "?";
	const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;

	for (const char *const *i = interp; *i; i++)
		if (strcmp(base, *i) == 0 && argv[1] && argv[1][0] != '-') {
			prog = argv[1];
			base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
			break;
		}
	snprintf(out, n, "%s", base);
}

/* Text as a JSON string: bytes that are no UTF-8 (a diff of a Latin-1 file), and NULs, as U+FFFD. */
static json_t *json_text(const char *s, size_t n)
{
	struct sl_buf b = SL_BUF_INIT;
	json_t *j = NULL;
	size_t i = 0, k;

	while (i < n) {
		k = s[i] ? sl_utf8_seq((const unsigned char *)s + i, n - i, NULL) : 0;
		if (sl_buf_add(&b, k ? s + i : "\xef\xbf\xbd", k ? k : 3) < 0)
			goto out;
		i += k ? k : 1;
	}
	j = json_stringn(b.ptr ? b.ptr : "", b.len);
out:
	sl_buf_release(&b);
	return j;
}

/* The inputs of `with:`, rendered: a JSON text (*out, the caller's), or why not (v->why). */
static int render_inputs(struct vrun *v, char **out, struct sl_err *err)
{
	json_t *o = json_object();
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err e = SL_ERR_INIT;
	int error = 0;

	*out = NULL;
	if (!o)
		return sl_err_set(err, SL_ERROR, "out of memory");
	for (char **w = v->r->with; w && *w && !error; w++) {
		char *eq = strchr(*w, '='), key[128];
		snprintf(key, sizeof(key), "%.*s", (int)(eq - *w), *w);
		sl_buf_reset(&b);
		if (!v->vc->vars || build_prompt_render_template(&b, v->vc->vars, eq + 1, &e) != 0) {
			snprintf(v->why, sizeof(v->why), "cannot render its input '%s': %s", key,
				 v->vc->vars ? e.msg : "no prompt variables");
			break;
		}
		if (json_object_set_new(o, key, json_text(b.ptr ? b.ptr : "", b.len)) != 0)
			error = sl_err_set(err, SL_ERROR, "out of memory");
	}
	if (!error && !v->why[0] && !(*out = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII)))
		error = sl_err_set(err, SL_ERROR, "out of memory");
	sl_buf_release(&b);
	json_decref(o);
	return error;
}

/* The builder's environment, less the reviewer's token, plus what a validator is told. */
static int set_env(struct vrun *v, const struct sl_config *cfg, struct sl_err *err)
{
	const struct build_validate_ctx *vc = v->vc;
	size_t n = 0;

	if (asprintf(&v->add[n++], "SLUICE_RUN_ID=%s", vc->run_id) < 0 ||
	    asprintf(&v->add[n++], "SLUICE_WORK_ORDER_ID=%s",
		     vc->work_order_id ? vc->work_order_id : "") < 0 ||
	    asprintf(&v->add[n++], "SLUICE_RUN_DIR=%s", vc->run_dir) < 0 ||
	    asprintf(&v->add[n++], "SLUICE_ATTEMPT=%d", v->attempt) < 0 ||
	    asprintf(&v->add[n++], "SLUICE_RETRY_RULE=%d", v->rule) < 0 ||
	    asprintf(&v->add[n++], "SLUICE_VALIDATE_INPUT=%s", v->input) < 0) {
		v->add[n - 1] = NULL;
		return sl_err_set(err, SL_ERROR, "out of memory");
	}
	for (const char *const *h = exec_hooks_env(cfg); *h && n < 9; h++)
		if (!(v->add[n++] = strdup(*h)))
			return sl_err_set(err, SL_ERROR, "out of memory");
	return exec_env_drop(&v->drop, cfg, (const char *const *)v->add, err);
}

static void vrun_release(struct vrun *v)
{
	for (size_t i = 0; i < sizeof(v->add) / sizeof(*v->add); i++)
		free(v->add[i]);
	sl_strv_free(v->drop);
	free(v->log);
	free(v->input);
}

/* A line at the end of the log (best effort: the verdict is also the event). */
static void log_line(const struct vrun *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void log_line(const struct vrun *v, const char *fmt, ...)
{
	struct sl_err e = SL_ERR_INIT;
	char line[512];
	va_list ap;
	int fd = -1, len;

	va_start(ap, fmt);
	len = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (len < 0 || !v->log || sl_open_file(v->log, O_WRONLY | O_APPEND | O_CREAT, 0644, &fd, &e) < 0)
		return;
	if (write(fd, line, (size_t)len < sizeof(line) ? (size_t)len : sizeof(line) - 1) < 0) {
		/* best effort */
	}
	close(fd);
}

/* validate/<rule>-attempt<N>.log and .json, fresh (unlinked, never truncated through a link). */
static int prepare_files(struct vrun *v, struct sl_err *err)
{
	char *dir = sl_path_join(v->vc->run_dir, "validate");
	int error;

	v->log = sl_path_fmt("%s/validate/%d-attempt%d.log", v->vc->run_dir, v->rule, v->attempt);
	v->input = sl_path_fmt("%s/validate/%d-attempt%d.json", v->vc->run_dir, v->rule,
			       v->attempt);
	if (!dir || !v->log || !v->input)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if ((error = sl_mkdir_p(dir, err)) == 0 && (error = sl_unlink(v->log, err)) == 0)
		error = sl_unlink(v->input, err);
	free(dir);
	return error;
}

/* Why the run `res` (with `out` its trimmed standard output) does not hold, or "" when it does. */
static void judge(struct vrun *v, const struct sl_proc_result *res, const char *out)
{
	char how[160];

	sl_proc_describe(how, sizeof(how), res);
	if (res->timed_out)
		snprintf(v->why, sizeof(v->why), "it %s and was killed", how);
	else if (strcmp(out, "false") == 0)
		snprintf(v->why, sizeof(v->why), "it printed 'false' (%s)", how);
	else if (res->exit_code != 0)
		snprintf(v->why, sizeof(v->why), "it ended with %s%s", how,
			 strcmp(out, "true") == 0 ? " (a 'true' counts with exit 0 only)" : "");
	else if (strcmp(out, "true") != 0) {
		char shown[48];
		size_t i;
		for (i = 0; out[i] && i + 1 < sizeof(shown); i++)
			shown[i] = isprint((unsigned char)out[i]) ? out[i] : '?';
		shown[i] = '\0';
		snprintf(v->why, sizeof(v->why), *out ? "it printed '%s%s', neither true nor false"
						      : "it printed nothing%s%s; a validator prints "
							"true or false",
			 shown, out[i] ? "..." : "");
	}
}

/* The standard output, trimmed of white space at both ends (in place). */
static const char *trimmed(struct sl_buf *b)
{
	char *s = b->ptr ? b->ptr : (char *)"", *e;

	while (isspace((unsigned char)*s))
		s++;
	for (e = s + strlen(s); e > s && isspace((unsigned char)e[-1]); e--)
		;
	if (*s)
		*e = '\0';
	return s;
}

/* Run the validator; v->why stays "" when it holds. */
static int run_validator(struct vrun *v, const struct sl_config *cfg, const char *input,
			 struct sl_err *err)
{
	struct sl_proc_opts po = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf out = SL_BUF_INIT;
	struct sl_err perr = SL_ERR_INIT;
	char *owner = sl_path_join(v->vc->run_dir, BUILD_CHILD_OWNER_FILE);
	int error = 0;

	if (!owner)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if (sl_write_file(v->input, input, strlen(input), &perr) != 0) {
		snprintf(v->why, sizeof(v->why), "cannot write its inputs: %s", perr.msg);
		goto out;
	}
	if ((error = set_env(v, cfg, err)) != 0)
		goto out;
	out.max = VALIDATE_OUT_MAX;
	memset(&res, 0, sizeof(res));
	po.argv = (const char *const *)v->r->validate;
	po.env_add = (const char *const *)v->add;
	po.env_drop = (const char *const *)v->drop;
	po.cwd = v->vc->worktree;
	po.stdin_data = input;
	po.stdin_len = strlen(input);
	po.log_path = v->log;
	po.log_max = cfg->builder.log_max ? cfg->builder.log_max : VALIDATE_LOG_DEFAULT_MAX;
	po.out = &out;
	po.timeout_ms = v->r->validate_timeout_ms;
	po.kill_grace_ms = v->vc->kill_grace_ms;
	po.owner_file = owner;
	if (sl_proc_run(&po, &res, &perr) < 0)
		snprintf(v->why, sizeof(v->why), "%s", perr.msg); /* "cannot run 'x': ..." */
	else
		judge(v, &res, trimmed(&out));
out:
	sl_buf_release(&out);
	free(owner);
	return error;
}

/* The verdict in one sentence, for the event log (and sluice's own log). */
static void verdict(const struct vrun *v, char *said, size_t n)
{
	if (v->why[0])
		snprintf(said, n, "retry rule %d (validate: %s) did not hold on attempt %d: %s",
			 v->rule, v->name, v->attempt, v->why);
	else
		snprintf(said, n, "retry rule %d (validate: %s) held on attempt %d", v->rule,
			 v->name, v->attempt);
	sl_log(SL_LOG_INFO, "run %s: %s", v->vc->run_id, said);
}

int build_validate_record(struct store *st, const char *run_id, const char *work_order_id,
			  const char *state, const char *verdicts, struct sl_err *err)
{
	char line[BUILD_VERDICTS_MAX];
	int error;

	if (!verdicts || !*verdicts)
		return 0;
	if ((error = store_begin(st, err)) != 0)
		return error;
	for (const char *p = verdicts; *p && !error;) {
		size_t len = strcspn(p, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		error = store_event_add(st, run_id, work_order_id, state, state, line, err);
		p += len + (p[len] == '\n');
	}
	if (error || (error = store_commit(st, err)) != 0)
		store_rollback(st);
	return error;
}

int build_validate_rule(const struct sl_config *cfg, int idx, int attempt,
			const struct build_validate_ctx *vc, int *held, char *said, size_t n,
			struct sl_err *err)
{
	struct sl_err ferr = SL_ERR_INIT;
	struct vrun v;
	char *input = NULL;
	int error = 0;

	memset(&v, 0, sizeof(v));
	v.r = &cfg->retry[idx];
	v.vc = vc;
	v.rule = idx + 1;
	v.attempt = attempt;
	validator_name(v.name, sizeof(v.name), (const char *const *)v.r->validate);
	*held = 0;
	if (!v.r->validate || !v.r->validate[0])
		return sl_err_set(err, SL_EINVALID, "retry rule %d has no validator", v.rule);
	if (prepare_files(&v, &ferr) != 0) /* a folder planted where the log goes: a verdict */
		snprintf(v.why, sizeof(v.why), "cannot write its files: %s", ferr.msg);
	else if ((error = render_inputs(&v, &input, err)) != 0)
		goto out;
	if (!v.why[0] && (error = run_validator(&v, cfg, input, err)) != 0)
		goto out;
	if (v.why[0])
		log_line(&v, "\n[sluice: validator of retry rule %d, attempt %d: did not hold: %s]\n",
			 v.rule, attempt, v.why);
	else
		log_line(&v, "\n[sluice: validator of retry rule %d, attempt %d: exit 0, printed "
			 "'true': held]\n", v.rule, attempt);
	verdict(&v, said, n);
	*held = !v.why[0];
out:
	free(input);
	vrun_release(&v);
	return error;
}
