/* The builder process (builder.h). */
#include "core/fs.h"
#include "builder/builder_int.h"
#include "core/git.h"
#include "core/log.h"
#include "core/time.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The builder an agent name means: an entry of builders:, or NULL (a preset, or builder:). */
static const struct sl_builder *named_of(const struct sl_config *cfg, const char *agent)
{
	return sl_config_builder_named(cfg, agent ? agent : cfg->builder.agent);
}

int build_argv_agent(sl_strv *out, const struct sl_config *cfg, const char *const *argv_override,
		     const char *agent, struct sl_err *err)
{
	const char *const *src = argv_override;
	const struct sl_builder *b = &cfg->builder;
	const char *name = agent ? agent : cfg->builder.agent;

	*out = NULL;
	if (!(src && src[0]) && name) {
		if (!(b = sl_config_builder_named(cfg, name))) {
			if (sl_config_preset_known(name))
				return sl_config_preset(out, name, err);
			return sl_err_set(err, SL_EINVALID, "unknown agent '%s'; name one of "
					  "builders: or a preset", name);
		}
	}
	if (!src || !src[0])
		src = (const char *const *)b->command;
	if (src && src[0])
		return (*out = sl_strv_copy(src)) ? 0 : sl_err_set(err, SL_ERROR, "out of memory");
	if (b->preset)
		return sl_config_preset(out, b->preset, err);
	return sl_err_set(err, SL_EINVALID,
			  "no builder configured; set builder.command or builder.preset in "
			  ".system/config.yaml");
}

int build_argv(sl_strv *out, const struct sl_config *cfg, const char *const *argv_override,
			struct sl_err *err)
{
	return build_argv_agent(out, cfg, argv_override, NULL, err);
}

void build_agent_of(const struct sl_config *cfg, const char *const *argv_override,
		    const char *agent, struct build_agent *out)
{
	const char *name = agent ? agent : cfg->builder.agent;
	const struct sl_builder *b = sl_config_builder_named(cfg, name);
	const char *preset = b ? b->preset : name ? name : cfg->builder.preset;

	if (argv_override && argv_override[0]) {
		out->name = "retry.builder";
		preset = NULL;
	} else if (name) {
		out->name = name;
	} else if (cfg->builder.command) {
		out->name = "builder.command";
		preset = NULL;
	} else {
		out->name = preset ? preset : "builder.command";
	}
	/* a command of the user's decides itself ($SLUICE_SESSION) */
	out->resumes = !preset || sl_config_preset_resumes(preset);
}

/* Whether a gate's word needs quoting for a POSIX shell. */
static int plain_word(const char *w)
{
	if (!*w)
		return 0;
	for (; *w; w++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "_-./=:,+@%", *w))
			return 0;
	return 1;
}

/*
 * $SLUICE_GATE_COMMANDS: each gate as the shell command an agent would type,
 * one a line: `sh -c S` (or bash) is S, any other argv its words, quoted
 * where a shell needs it. A preset hands them to its CLI's allow-list.
 */
char *build_gate_commands(const struct sl_config *cfg)
{
	struct sl_buf b;

	sl_buf_init(&b, 0);
	for (size_t i = 0; i < cfg->ngates; i++) {
		const sl_strv a = cfg->gates[i].argv;
		size_t n = sl_strv_len(a);

		if (n == 3 && (!strcmp(a[0], "sh") || !strcmp(a[0], "bash")) && !strcmp(a[1], "-c")) {
			sl_buf_addf(&b, "%s\n", a[2]);
			continue;
		}
		for (size_t k = 0; k < n; k++) {
			sl_buf_addf(&b, "%s", k ? " " : "");
			if (plain_word(a[k])) {
				sl_buf_addf(&b, "%s", a[k]);
				continue;
			}
			sl_buf_addf(&b, "'");
			for (const char *c = a[k]; *c; c++)
				if (*c == '\'')
					sl_buf_addf(&b, "'\\''");
				else
					sl_buf_addf(&b, "%c", *c);
			sl_buf_addf(&b, "'");
		}
		sl_buf_addf(&b, "\n");
	}
	return sl_buf_detach(&b);
}

/*
 * `worktree: none`: git started in the builder's empty folder finds no
 * repository above it (the folder lies inside the run folder, inside the
 * repository): GIT_CEILING_DIRECTORIES is its parent.
 */
static int none_ceiling(sl_strv env, size_t *n, const struct build_opts *o)
{
	char ceiling[4200];

	if (!o->worktree_mode || strcmp(o->worktree_mode, "none") || !o->worktree)
		return 0;
	if (sl_git_ceiling(ceiling, sizeof(ceiling), o->worktree) != 0 ||
	    !(env[(*n)++] = strdup(ceiling)))
		return -1;
	return 0;
}
/* SLUICE_* entries, cfg->builder.env, the hooks triple: new strings in env (n at most cap). */
int build__env(sl_strv env, size_t cap, const struct build_opts *o)
{
	const char *mode = run_mode_name(o->mode);
	const char *wo = o->work_order_id ? o->work_order_id : "";
	const char *prompt = o->prompt_file ? o->prompt_file : "";
	const struct sl_builder *named = o->argv_override ? NULL : named_of(o->cfg, o->agent);
	char *gates = build_gate_commands(o->cfg);
	size_t n = 0;

	if (!gates || asprintf(&env[n++], "SLUICE_RUN_ID=%s", o->run_id ? o->run_id : "") < 0 ||
	    asprintf(&env[n++], "SLUICE_WORK_ORDER_ID=%s", wo) < 0 ||
	    asprintf(&env[n++], "SLUICE_PROMPT_FILE=%s", prompt) < 0 ||
	    asprintf(&env[n++], "SLUICE_RUN_DIR=%s", o->run_dir ? o->run_dir : "") < 0 ||
	    asprintf(&env[n++], "SLUICE_SUMMARY_FILE=%s/summary.md",
		     o->run_dir ? o->run_dir : "") < 0 ||
	    asprintf(&env[n++], "SLUICE_GATE_COMMANDS=%s", gates ? gates : "") < 0 ||
	    asprintf(&env[n++], "SLUICE_MODE=%s", mode) < 0 ||
	    asprintf(&env[n++], "SLUICE_ATTEMPT=%d", o->attempt) < 0 ||
	    /* where it works: the worktree, or the empty folder of `worktree: none` */
	    asprintf(&env[n++], "SLUICE_WORKTREE=%s", o->worktree ? o->worktree : "") < 0 ||
	    asprintf(&env[n++], "SLUICE_WORKTREE_MODE=%s",
		     o->worktree_mode ? o->worktree_mode : "read-write") < 0 ||
	    asprintf(&env[n++], "SLUICE_SESSION=%s", o->session ? o->session : "new") < 0 ||
	    /* docs/budgets.md: what the attempt used, if the builder says */
	    asprintf(&env[n++], "SLUICE_USAGE_FILE=%s/attempts/%d/usage.json",
		     o->run_dir ? o->run_dir : "", o->attempt) < 0) {
		if (n)
			env[n - 1] = NULL;
		free(gates);
		return SL_ERROR;
	}
	free(gates);
	if (none_ceiling(env, &n, o) < 0)
		return SL_ERROR;
	/*
	 * docs/budgets.md: what the run may still spend (the claude-code preset
	 * passes it on); empty without a limit, so that a value sluice itself
	 * was given never reaches the builder.
	 */
	if (asprintf(&env[n], "SLUICE_BUDGET_USD=%s", o->budget_usd ? o->budget_usd : "") < 0)
		return env[n] = NULL, SL_ERROR;
	n++;
	for (char **e = o->cfg->builder.env; e && *e && n < cap; e++)
		if (!(env[n++] = strdup(*e)))
			return SL_ERROR;
	for (char **e = named ? named->env : NULL; e && *e && n < cap; e++)
		if (!(env[n++] = strdup(*e)))
			return SL_ERROR;
	for (const char *const *h = exec_hooks_env(o->cfg); *h && n < cap; h++)
		if (!(env[n++] = strdup(*h)))
			return SL_ERROR;
	return 0;
}

/* The argv on one line: words joined by spaces, a control character as \n, \t or \xHH. */
static void describe_argv(char *out, size_t n, const char *const *argv)
{
	size_t len = 0;

	out[0] = '\0';
	for (int first = 1; *argv && len + 5 < n; argv++, first = 0) {
		if (!first)
			out[len++] = ' ';
		for (const unsigned char *c = (const unsigned char *)*argv; *c && len + 5 < n; c++) {
			if (*c == '\n' || *c == '\t')
				len += (size_t)snprintf(out + len, n - len, "\\%c", *c == '\n' ? 'n' : 't');
			else if (*c < 0x20 || *c == 0x7f)
				len += (size_t)snprintf(out + len, n - len, "\\x%02x", *c);
			else
				out[len++] = (char)*c;
		}
		out[len] = '\0';
	}
}

static void log_line(const char *log, const char *line)
{
	sl_append_file(log, line, strlen(line));
}

static void log_header(const char *log, const struct build_opts *o,
		       const char *const *argv)
{
	char when[64], cmd[1024], line[1200];

	sl_time_iso(when, sizeof(when), sl_now_ms());
	describe_argv(cmd, sizeof(cmd), argv);
	snprintf(line, sizeof(line), "==== sluice: attempt %d (%s) started %s: %s ====\n",
		 o->attempt, run_mode_name(o->mode), when, cmd);
	log_line(log, line);
}

static void log_footer(const char *log, const struct build_opts *o,
		       const struct sl_proc_result *res, const struct sl_err *err, int error)
{
	char how[SL_ERR_MSG_MAX], line[SL_ERR_MSG_MAX + 128];

	if (error)
		snprintf(how, sizeof(how), "%s", err->msg);
	else
		sl_proc_describe(how, sizeof(how), res);
	snprintf(line, sizeof(line), "\n==== sluice: attempt %d ended: %s ====\n", o->attempt, how);
	log_line(log, line);
}

int build__env_list(const struct build_opts *o, sl_strv *out)
{
	const struct sl_builder *named = o->argv_override ? NULL : named_of(o->cfg, o->agent);
	size_t cap = 14 + sl_strv_len(o->cfg->builder.env) + (named ? sl_strv_len(named->env) : 0) + 4;

	if (!(*out = calloc(cap + 1, sizeof(**out))))
		return SL_ERROR;
	return build__env(*out, cap, o) < 0 ? SL_ERROR : 0;
}

/*
 * The builder's timeout: its named builder's, else builder.timeout; and no
 * more than the run's minutes left (timeout_cap_ms).
 */
int64_t build__timeout(const struct build_opts *o)
{
	const struct sl_builder *named = o->argv_override ? NULL : named_of(o->cfg, o->agent);
	int64_t t = named && named->timeout_ms ? named->timeout_ms : o->cfg->builder.timeout_ms;

	if (o->timeout_cap_ms > 0 && (t <= 0 || t > o->timeout_cap_ms))
		t = o->timeout_cap_ms;
	return t;
}

int build_run(const struct build_opts *o, struct sl_proc_result *res,
		       struct sl_err *err)
{
	if (o->job && exec_remote(o->cfg))
		return build__run_job(o, res, err);
	struct sl_proc_opts po = SL_PROC_OPTS_INIT;
	sl_strv argv = NULL, env = NULL, drop = NULL;
	const struct sl_builder *named = o->argv_override ? NULL : named_of(o->cfg, o->agent);
	size_t cap = 14 + sl_strv_len(o->cfg->builder.env) + (named ? sl_strv_len(named->env) : 0) + 4;
	char *log = NULL, *owner = NULL, *usage = NULL;
	int error;

	memset(res, 0, sizeof(*res));
	if ((error = build_argv_agent(&argv, o->cfg, o->argv_override, o->agent, err)) < 0)
		goto out;
	if (!(env = calloc(cap + 1, sizeof(*env))) || build__env(env, cap, o) < 0 ||
	    asprintf(&log, "%s/builder.log", o->run_dir) < 0 ||
	    asprintf(&owner, "%s/" BUILD_CHILD_OWNER_FILE, o->run_dir) < 0 ||
	    (o->usage_watch &&
	     asprintf(&usage, "%s/attempts/%d/usage.json", o->run_dir, o->attempt) < 0)) {
		log = owner = usage = NULL;
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	/* what it sets itself (builder.env, the hooks triple) it keeps */
	if ((error = exec_env_drop(&drop, o->cfg, (const char *const *)env, err)) < 0)
		goto out;
	log_header(log, o, (const char *const *)argv);
	po.argv = (const char *const *)argv;
	po.env_add = (const char *const *)env;
	po.env_drop = (const char *const *)drop;
	po.cwd = o->worktree;
	po.log_path = log;
	po.log_max = o->cfg->builder.log_max;
	po.timeout_ms = build__timeout(o);
	po.kill_grace_ms = o->kill_grace_ms;
	po.owner_file = owner;
	po.watch_file = usage;
	po.watch = o->usage_watch;
	po.watch_arg = o->usage_watch_arg;
	error = sl_proc_run(&po, res, err);
	if (!error && res->watch_failed[0]) {
		/* the budget is still held between attempts (docs/budgets.md) */
		char line[SL_ERR_MSG_MAX + 128];

		snprintf(line, sizeof(line), "\n==== sluice: its usage reports were not watched "
			 "during the attempt: %s ====\n", res->watch_failed);
		log_line(log, line);
		sl_log(SL_LOG_WARN, "run %s: %s", o->run_id, line + 6);
	}
	log_footer(log, o, res, err, error);
out:
	free(log);
	free(owner);
	free(usage);
	sl_strv_free(argv);
	sl_strv_free(env);
	sl_strv_free(drop);
	return error;
}
