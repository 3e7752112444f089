/*
 * .system/config.yaml: load with libyaml's document API, check every key,
 * report problems as "<path>:<line>:<col>: <what>; <what to do>".
 *
 * One walk does both jobs: sl_config_check() collects every problem,
 * sl_config_load() keeps the first one as its error.
 */
#include "core/config_int.h"
#include "core/fs.h"
#include "core/repo.h"
#include "core/template.h"
#include "core/url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONFIG_MAX_BYTES ((size_t)1 << 20)

/*
 * The port of an http(s) URL, if it has one, is a number from 1 to 65535:
 * "http://host:80a/" was taken, and every delivery failed later.
 */
static int url_port_ok(const char *url)
{
	const char *p = strstr(url, "://"), *end, *at, *colon;
	long port;
	char *stop;

	if (!p)
		return 1;
	p += 3;
	end = p + strcspn(p, "/?#");
	for (at = p; at < end; at++) /* skip user:password@ */
		if (*at == '@')
			p = at + 1;
	if (*p == '[' && !(p = memchr(p, ']', (size_t)(end - p)))) /* IPv6: the port after ']' */
		return 0;
	if (!(colon = memchr(p, ':', (size_t)(end - p))))
		return 1;
	if (colon + 1 == end || colon[1] == '+' || colon[1] == '-')
		return 0;
	port = strtol(colon + 1, &stop, 10);
	return stop == end && port >= 1 && port <= 65535;
}

/* ---- reviewer, merge, gc ----------------------------------------------- */

/*
 * The name becomes the Reviewed-by: trailer of every merge (the reviewer
 * module refuses the same in a verdict): one line of at most 200 characters.
 */
int sl_reviewer_name_check(const char *name, size_t len)
{
	size_t i, chars = 0;

	for (i = 0; i < len; i++) {
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			return SL_NAME_CONTROL;
		chars += ((unsigned char)name[i] & 0xc0) != 0x80; /* UTF-8: count lead bytes */
	}
	return chars > SL_REVIEWER_NAME_MAX ? SL_NAME_TOO_LONG : SL_NAME_OK;
}

static int merge_var_known(const char *name, void *data)
{
	return !strncmp(name, "work_order.", 11) || !strcmp(name, "run.id") ||
	       !strcmp(name, "run.short") || !strcmp(name, "run.branch") ||
	       !strcmp(name, "reviewer");
}

/* ---- executor: (docs/scale-out.md) ---------------- */

/* A remote kind needs a remote (and kubernetes an image). */
static void executor_check(struct ctx *c)
{
	const struct sl_config *cfg = c->cfg;
	yaml_node_t *at = c->executor ? c->executor : c->root;

	if (cfg->executor.kind == SL_EXEC_LOCAL)
		return;
	if (!cfg->executor.remote)
		config__problem(c, at, "executor.kind is %s but executor.remote is not set; name a git "
		        "remote both this host and the workers reach (a URL, or an absolute path "
		        "on a shared file system)", cfg->executor.kind == SL_EXEC_SLURM ? "slurm"
		                                                                  : "kubernetes");
	else if (!strstr(cfg->executor.remote, "://") && cfg->executor.remote[0] != '/' &&
	         !strchr(cfg->executor.remote, ':'))
		config__problem(c, at, "executor.remote '%.200s' is neither a URL nor an absolute path; "
		        "the workers clone it from another folder", cfg->executor.remote);
	if (cfg->executor.workdir && cfg->executor.workdir[0] != '/')
		config__problem(c, at, "executor.workdir '%.200s' is not an absolute path; name a folder on "
		        "the workers, such as /scratch", cfg->executor.workdir);
	if (cfg->executor.kind == SL_EXEC_KUBERNETES && !cfg->executor.kubernetes.image)
		config__problem(c, at, "executor.kind is kubernetes but executor.kubernetes.image is not "
		        "set; name the container image the jobs run in (it needs sh, git and "
		        "your agent's CLI)");
}

/* git check-ref-format's rules for a branch name (no libgit2 needed). */
static int branch_name_ok(const char *s)
{
	const char *p, *comp = s;
	size_t n = strlen(s);

	if (!n || s[0] == '/' || s[n - 1] == '/' || s[n - 1] == '.' || !strcmp(s, "@") ||
	    strstr(s, "..") || strstr(s, "//") || strstr(s, "@{"))
		return 0;
	for (p = s; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f || strchr(" ~^:?*[\\", *p))
			return 0;
		if (p == comp && *p == '.')
			return 0;
		if (*p == '/' || !p[1]) {
			const char *end = *p == '/' ? p : p + 1;
			if (end - comp >= 5 && !strncmp(end - 5, ".lock", 5))
				return 0;
			comp = p + 1;
		}
	}
	return 1;
}

const char *sl_config_target_problem(const char *t)
{
	if (!t[0])
		return "is empty; name a local branch such as main";
	if (t[0] == '-')
		return "starts with '-'; name a local branch such as main";
	if (!strncmp(t, "refs/heads/", 11))
		return "is not a branch name (name the branch without 'refs/heads/')";
	if (!strcmp(t, "HEAD") || !strncmp(t, "refs/", 5) || !strncmp(t, "heads/", 6))
		return "is not a branch; name a local branch such as main";
	if (!branch_name_ok(t))
		return "is not a valid branch name";
	if (strlen(t) > SL_CONFIG_TARGET_MAX)
		return "is over 500 bytes long; name a shorter branch";
	return NULL;
}

/* ---- the hooks of the rows whose value has its own shape or check ------ */

static void check_target(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	const char *t = *(char **)at, *why;

	if ((why = sl_config_target_problem(t)) != NULL)
		config__problem(c, v, "target '%.200s' %s", t, why); /* the reason, not cut */
}

static void check_inbox(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	if (!sl_path_is_safe_relative(*(char **)at))
		config__problem(c, v, "'queue.inbox' must be a directory relative to the repository root "
		        "without '..', not '%s'", *(char **)at);
}

static void check_preset(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	if (!sl_config_preset_known(*(char **)at))
		config__problem(c, v, "unknown %s '%s'; use claude-code, codex, aider or gemini, or write "
		        "builder.command", config__builder_key(c, "preset"), *(char **)at);
}

/* Where builder.agent, merge.gates, executor.kind/remote and retry are, for after the walk. */
static void remember(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	if (!strncmp(row->key, "executor.", 9))
		c->executor = v;
	else if (!strcmp(row->key, "retry"))
		c->retry_node = v;
	else if (!strcmp(row->key, "builder.agent"))
		c->builder_agent = v;
	else if (!strcmp(row->key, "merge.gates"))
		c->merge_gates = v;
}

/* An http(s) URL's checks, shown without what may be secret in it (core/url.h). */
static void check_url(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	const char *url = *(char **)at;
	char safe[SL_URL_SAFE_MAX];

	sl_url_safe(safe, sizeof(safe), url);
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
		config__problem(c, v, "%s '%s' must start with http:// or https://", row->key, safe);
	else if (!url_port_ok(url))
		config__problem(c, v, "%s '%s' has a port that is not a number from 1 to 65535; write "
		        "http://HOST:PORT/ with digits, or leave the port out", row->key, safe);
}

static void check_name(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	switch (sl_reviewer_name_check(*(char **)at, strlen(*(char **)at))) {
	case SL_NAME_CONTROL:
		config__problem(c, v, "reviewer.name holds a control character (a newline, a tab, "
		        "an escape); it becomes the Reviewed-by: trailer: write one line");
		break;
	case SL_NAME_TOO_LONG:
		config__problem(c, v, "reviewer.name is longer than %d characters; it becomes the "
		        "Reviewed-by: trailer: shorten it", SL_REVIEWER_NAME_MAX);
		break;
	}
}

static void check_message(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	struct sl_err e = SL_ERR_INIT;
	const char *msg = *(char **)at;

	/* a commit message: every single brace must be a variable */
	if (sl_template_check_braces(msg, "merge.message", &e) != 0)
		config__problem(c, v, "%s", e.msg);
	else
		config__check_template(c, v, msg, merge_var_known, NULL, "merge.message");
}

/* commit.name, commit.email: what git would take in a signature (core/repo.h). */
static void check_identity(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	if (!sl_identity_valid(*(char **)at))
		config__problem(c, v, "'%s' must be one line of at most %d bytes without '<' or '>', "
		        "not '%.100s'", row->key, SL_IDENTITY_MAX - 1, *(char **)at);
}

#define CFG(f) .base = B_CONFIG, .off = offsetof(struct sl_config, f)
#define BLD(f) .base = B_BUILDER, .off = offsetof(struct sl_builder, f)
#define GATE(f) .base = B_GATE, .off = offsetof(struct sl_gate, f)
#define RETRY(f) .base = B_RETRY, .off = offsetof(struct sl_retry_rule, f)

/*
 * Every key of config.yaml (docs/config.md), in the order the "known keys"
 * of a message list them. A section's keys follow its row.
 */
static const struct setting rows[] = {
	{.key = "target", .type = T_STR, CFG(target), .check = check_target},
	{.key = "queue", .type = T_SECTION},
	{.key = "queue.inbox", .type = T_STR, CFG(queue.inbox), .def = "work_orders",
	 .check = check_inbox},
	{.key = "queue.jobs", .type = T_INT, CFG(queue.jobs), .def = "2", .min = 1,
	 .max = SL_JOBS_MAX},
	{.key = "queue.allow_overlap", .type = T_BOOL, CFG(queue.allow_overlap), .def = "false"},
	{.key = "queue.overlap", .type = T_ENUM, CFG(queue.overlap_fatal), .def = "resolve",
	 .words = "resolve|fatal", .flags = F_TEXT,
	 .msg = "'queue.overlap' must be 'resolve' or 'fatal', not '%s'"},
	{.key = "builder", .type = T_SECTION},
	{.key = "builder.command", .type = T_ARGV, BLD(command)},
	{.key = "builder.preset", .type = T_STR, BLD(preset), .check = check_preset},
	{.key = "builder.agent", .type = T_STR, BLD(agent), .check = remember,
	 .flags = F_TOP_ONLY},
	{.key = "builder.timeout", .type = T_DUR, BLD(timeout_ms), .def = "30m"},
	{.key = "builder.env", .type = T_STRV, BLD(env), .pair = config__env_pair},
	{.key = "builder.log_max", .type = T_SIZE, BLD(log_max), .def = "10MiB",
	 .flags = F_TOP_ONLY},
	{.key = "builders", .type = T_HOOK, .read = config__read_builders},
	{.key = "worktree", .type = T_SECTION},
	{.key = "worktree.share", .type = T_PATHS, CFG(worktree.share)},
	{.key = "worktree.copy", .type = T_PATHS, CFG(worktree.copy)},
	{.key = "worktree.setup", .type = T_ARGV, CFG(worktree.setup)},
	{.key = "worktree.setup_timeout", .type = T_DUR, CFG(worktree.setup_timeout_ms),
	 .def = "10m"},
	{.key = "worktree.hooks", .type = T_BOOL, CFG(worktree.hooks), .def = "false"},
	{.key = "worktree.pool", .type = T_INT, CFG(worktree.pool), .def = "2", .max = 64},
	{.key = "worktree.recycle", .type = T_ENUM, CFG(worktree.keep_ignored), .def = "clean",
	 .words = "clean|keep-ignored", .flags = F_TEXT,
	 .msg = "unknown worktree.recycle '%s'; use clean (the default: a reused worktree loses "
	        "its ignored files too) or keep-ignored (node_modules/, build/ and other ignored "
	        "files stay from run to run)"},
	{.key = "worktree.keep_failed", .type = T_BOOL, CFG(worktree.keep_failed), .def = "true"},
	{.key = "worktree.mode", .type = T_ENUM, CFG(worktree.mode), .def = "read-write",
	 .words = "read-write|read-only|none", .flags = F_TEXT,
	 .msg = "unknown worktree.mode '%.80s'; use " SL_WORKTREE_MODES " (read-write, the "
	        "default: the builder's changes are merged; read-only: it may change nothing and "
	        "the run ends in a report; none: it works in an empty folder)"},
	{.key = "gates", .type = T_HOOK, .pair = config__gate_pair},
	{.key = "gates.<name>.command", .type = T_ARGV, GATE(argv)},
	{.key = "gates.<name>.timeout", .type = T_DUR, GATE(timeout_ms), .def = "10m"},
	{.key = "gates.<name>.worktree", .type = T_ENUM, .base = B_GATE, .def = "read-write",
	 .words = "read-write|read-only", .flags = F_TEXT, .read = config__read_gate_worktree,
	 .msg = "unknown gates.<name>.worktree '%.80s'; use read-write (the default) or "
	        "read-only (the gate must change no file: a write fails it)"},
	{.key = "retry", .type = T_HOOK, .flags = F_NOTE}, /* walked after the gates it names */
	{.key = "reviewer", .type = T_SECTION},
	{.key = "reviewer.mode", .type = T_ENUM, CFG(reviewer.mode), .def = "manual",
	 .words = "manual|http|command", .msg = "reviewer.mode must be manual, http or command, not '%s'"},
	{.key = "reviewer.url", .type = T_STR, CFG(reviewer.url), .check = check_url},
	{.key = "reviewer.protocol", .type = T_ENUM, CFG(reviewer.protocol), .def = "sluice",
	 .words = "sluice|openai", .msg = "reviewer.protocol must be sluice or openai, not '%s'"},
	{.key = "reviewer.model", .type = T_STR, CFG(reviewer.model)},
	{.key = "reviewer.token_env", .type = T_STR, CFG(reviewer.token_env)},
	{.key = "reviewer.timeout", .type = T_DUR, CFG(reviewer.timeout_ms), .def = "120s"},
	{.key = "reviewer.connect_timeout", .type = T_DUR, CFG(reviewer.connect_timeout_ms),
	 .def = "10s"},
	{.key = "reviewer.retries", .type = T_INT, CFG(reviewer.retries), .def = "3", .max = 100},
	{.key = "reviewer.command", .type = T_ARGV, CFG(reviewer.command)},
	{.key = "reviewer.max_reply", .type = T_SIZE, CFG(reviewer.max_reply), .def = "1MiB"},
	{.key = "reviewer.name", .type = T_STR, CFG(reviewer.name), .check = check_name},
	{.key = "merge", .type = T_SECTION},
	{.key = "merge.resolver", .type = T_STR, CFG(merge.resolver), .def = "builder",
	 .words = "builder|none", .msg = "merge.resolver must be builder or none, not '%s'"},
	{.key = "merge.resolve_attempts", .type = T_INT, CFG(merge.resolve_attempts), .def = "2",
	 .max = 100},
	{.key = "merge.verify", .type = T_BOOL, CFG(merge.verify), .def = "true"},
	{.key = "merge.message", .type = T_STR, CFG(merge.message),
	 .def = "Merge {work_order.id}: {work_order.title}", .check = check_message},
	{.key = "merge.gates", .type = T_STRV, CFG(merge.gates), .hint = " of gate names, e.g. [test]",
	 .check = remember},
	{.key = "merge.train_depth", .type = T_INT, CFG(merge.train_depth), .min = 1,
	 .max = SL_JOBS_MAX}, /* default merge.jobs, else queue.jobs: fill_late_defaults() */
	{.key = "merge.jobs", .type = T_INT, CFG(merge.jobs), .min = 1, .max = SL_JOBS_MAX},
	{.key = "merge.batch", .type = T_INT, CFG(merge.batch), .def = "1", .min = 1,
	 .max = SL_TRAIN_BATCH_MAX},
	{.key = "merge.rerun_failed", .type = T_INT, CFG(merge.rerun_failed), .def = "1",
	 .max = 10},
	{.key = "merge.reuse_green", .type = T_BOOL, CFG(merge.reuse_green), .def = "true"},
	{.key = "merge.reuse_gating", .type = T_BOOL, CFG(merge.reuse_gating), .def = "false"},
	{.key = "merge.keep_ignored", .type = T_PATHS, CFG(merge.keep_ignored)},
	{.key = "merge.freeze", .type = T_HOOK, .read = config__read_freeze},
	{.key = "merge.lanes", .type = T_HOOK, .read = config__read_lanes},
	{.key = "budget", .type = T_SECTION}, /* docs/budgets.md */
	{.key = "budget.day", .type = T_SECTION},
	{.key = "budget.day.usd", .type = T_USD, CFG(budget.day_usd), .def = "none"},
	{.key = "budget.month", .type = T_SECTION},
	{.key = "budget.month.usd", .type = T_USD, CFG(budget.month_usd), .def = "none"},
	{.key = "budget.run", .type = T_SECTION},
	{.key = "budget.run.usd", .type = T_USD, CFG(budget.run_usd), .def = "none"},
	{.key = "budget.run.minutes", .type = T_MIN, CFG(budget.run_minutes), .def = "none"},
	{.key = "budget.prices", .type = T_HOOK, .pair = config__price_pair},
	{.key = "watch", .type = T_SECTION}, /* docs/watch.md */
	{.key = "watch.gates", .type = T_HOOK, .pair = config__watch_gate_pair},
	{.key = "watch.every", .type = T_INT, CFG(watch.every), .def = "0", .max = 1000},
	{.key = "watch.revert_review", .type = T_ENUM, CFG(watch.revert_auto), .def = "person",
	 .words = "person|auto", .flags = F_TEXT,
	 .msg = "unknown watch.revert_review '%.80s'; use person (the default: a person "
	        "approves each revert) or auto (an exact revert is approved by sluice)"},
	{.key = "commit", .type = T_SECTION},
	{.key = "commit.name", .type = T_STR, CFG(commit.name), .check = check_identity},
	{.key = "commit.email", .type = T_STR, CFG(commit.email), .check = check_identity},
	{.key = "gc", .type = T_SECTION},
	{.key = "gc.keep_last", .type = T_INT, CFG(gc.keep_last), .def = "20", .max = 1000000},
	{.key = "gc.keep_failed", .type = T_INT, CFG(gc.keep_failed), .def = "5", .max = 1000000},
	{.key = "gc.keep_failed_for", .type = T_DUR, CFG(gc.keep_failed_ms), .def = "7d"},
	{.key = "notify", .type = T_SECTION},
	{.key = "notify.command", .type = T_ARGV, CFG(notify.command)},
	{.key = "notify.url", .type = T_STR, CFG(notify.url), .check = check_url},
	{.key = "notify.timeout", .type = T_DUR, CFG(notify.timeout_ms), .def = "10s"},
	{.key = "notify.retry_for", .type = T_DUR, CFG(notify.retry_for_ms), .def = "24h"},
	{.key = "notify.tries", .type = T_INT, CFG(notify.tries), .min = 1,
	 .max = 100}, /* deprecated: notify.retry_for decides; 0 when not given */
	{.key = "executor", .type = T_SECTION},
	{.key = "executor.kind", .type = T_ENUM, CFG(executor.kind), .def = "local",
	 .words = "local|slurm|kubernetes", .flags = F_TEXT | F_NOTE,
	 .msg = "'executor.kind' must be local, slurm or kubernetes, not '%.100s'"},
	{.key = "executor.remote", .type = T_WORD, CFG(executor.remote), .flags = F_NOTE},
	{.key = "executor.poll", .type = T_DUR, CFG(executor.poll_ms), .def = "2s"},
	{.key = "executor.workdir", .type = T_WORD, CFG(executor.workdir)},
	{.key = "executor.git", .type = T_WORD, CFG(executor.git)},
	{.key = "executor.slurm", .type = T_SECTION},
	{.key = "executor.slurm.partition", .type = T_WORD, CFG(executor.slurm.partition)},
	{.key = "executor.slurm.account", .type = T_WORD, CFG(executor.slurm.account)},
	{.key = "executor.slurm.qos", .type = T_WORD, CFG(executor.slurm.qos)},
	{.key = "executor.slurm.cpus", .type = T_INT, CFG(executor.slurm.cpus), .min = 1,
	 .max = 4096},
	{.key = "executor.slurm.memory", .type = T_WORD, CFG(executor.slurm.memory)},
	{.key = "executor.slurm.options", .type = T_STRV, CFG(executor.slurm.options),
	 .hint = " of sbatch options, one argument each, e.g. [--constraint=gpu]"},
	{.key = "executor.kubernetes", .type = T_SECTION},
	{.key = "executor.kubernetes.namespace", .type = T_WORD,
	 CFG(executor.kubernetes.namespace_)},
	{.key = "executor.kubernetes.context", .type = T_WORD, CFG(executor.kubernetes.context)},
	{.key = "executor.kubernetes.image", .type = T_WORD, CFG(executor.kubernetes.image)},
	{.key = "executor.kubernetes.cpu", .type = T_WORD, CFG(executor.kubernetes.cpu)},
	{.key = "executor.kubernetes.memory", .type = T_WORD, CFG(executor.kubernetes.memory)},
	{.key = "executor.kubernetes.service_account", .type = T_WORD,
	 CFG(executor.kubernetes.service_account)},
	{.key = "executor.kubernetes.git_secret", .type = T_WORD,
	 CFG(executor.kubernetes.git_secret)},
	{.key = "executor.kubernetes.kubectl", .type = T_WORD, CFG(executor.kubernetes.kubectl)},
	/* an entry of the list retry: (docs/config.md, Retry); sl_config_key() stops here */
	{.key = "retry.attempt", .type = T_INT, RETRY(n), .min = 1, .max = 1000, .flags = F_COND,
	 .cond = SL_RETRY_ATTEMPT},
	{.key = "retry.not", .type = T_STR, RETRY(gate), .read = config__read_not, .flags = F_COND,
	 .cond = SL_RETRY_NOT_GATE},
	{.key = "retry.exit", .type = T_INT, RETRY(n), .min = 1, .max = 1000, .flags = F_COND,
	 .cond = SL_RETRY_EXIT},
	{.key = "retry.validate", .type = T_ARGV, RETRY(validate), .read = config__read_validate,
	 .flags = F_COND, .cond = SL_RETRY_VALIDATE},
	{.key = "retry.with", .type = T_STRV, RETRY(with), .read = config__read_with},
	{.key = "retry.timeout", .type = T_DUR, RETRY(validate_timeout_ms), .read = config__read_timeout},
	{.key = "retry.builder", .type = T_ARGV, RETRY(builder)},
	{.key = "retry.agent", .type = T_STR, RETRY(agent), .check = config__check_retry_agent},
	{.key = "retry.session", .type = T_ENUM, RETRY(session), .words = "new|keep",
	 .min = SL_SESSION_NEW, .msg = "'session' in a retry entry must be 'new' or 'keep', not '%.100s'"},
	{.key = "retry.prompt", .type = T_STR, RETRY(prompt)},
	{.key = "retry.worktree", .type = T_ENUM, RETRY(worktree_reset), .words = "reset", .min = 1,
	 .msg = "'worktree' in a retry entry can only be 'reset'"},
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* ---- the walker --------------------------------------------------------- */

static const char *leaf(const char *key)
{
	const char *dot = strrchr(key, '.');

	return dot ? dot + 1 : key;
}

/* 1 when row is a key of section sec (named `name`, or any when NULL). */
static int row_in(const struct setting *row, const struct section *sec, const char *name)
{
	size_t n = strlen(sec->name);
	const char *rest = row->key;

	if (sec->named && (row->flags & F_TOP_ONLY))
		return 0;
	if (n && (strncmp(rest, sec->name, n) || rest[n] != '.'))
		return 0;
	rest += n ? n + 1 : 0;
	return !strchr(rest, '.') && (!name || !strcmp(rest, name));
}

static void *row_at(struct ctx *c, const struct setting *row)
{
	char *base = row->base == B_BUILDER ? (char *)config__cur_builder(c)
	             : row->base == B_GATE  ? (char *)c->gate
	             : row->base == B_RETRY ? (char *)c->rule
	                                    : (char *)c->cfg;

	return base + row->off;
}

static int read_value(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at,
                      const char *key)
{
	switch (row->type) {
	case T_STR:
		if (config__get_str(c, v, at, key) != 0)
			return -1;
		return row->words && config__word_index(c, row, v, *(char **)at) < 0 ? -1 : 0;
	case T_WORD: return config__get_word(c, v, at, key);
	case T_INT: return config__get_int(c, v, at, row->min, row->max, key);
	case T_BOOL: return config__get_bool(c, v, at, key);
	case T_DUR: return config__get_duration(c, v, at, key);
	case T_SIZE: return config__get_size(c, v, at, key);
	case T_USD: return config__get_amount(c, v, at, key, "an amount of US dollars such as 40 or 2.50");
	case T_MIN: return config__get_amount(c, v, at, key, "a number of minutes such as 45 or 7.5");
	case T_ARGV: return config__get_argv(c, v, at, key);
	case T_PATHS: return config__get_paths(c, v, at, key);
	case T_STRV: return config__get_strv(c, v, at, key, row->hint);
	case T_ENUM: return config__get_enum(c, row, v, at);
	default: return -1;
	}
}

static void read_setting(struct ctx *c, const struct setting *row, yaml_node_t *v)
{
	void *at = row_at(c, row);
	const char *key = row->base == B_BUILDER ? config__builder_key(c, leaf(row->key)) : row->key;

	if (row->flags & F_NOTE)
		remember(c, row, v, at);
	if (row->flags & F_COND)
		c->conditions++, c->rule->kind = (enum sl_retry_kind)row->cond;
	if (row->type == T_SECTION)
		config__walk_section(c, v, &(struct section){row->key, row->key, row->key, 0});
	else if (row->read)
		row->read(c, row, v, at);
	else if (row->pair)
		config__each_pair(c, v, key, row->pair);
	else if (read_value(c, row, v, at, key) == 0 && row->check)
		row->check(c, row, v, at);
}

static void table_pair(struct ctx *c, const char *key, yaml_node_t *k, yaml_node_t *v)
{
	char known[256];
	size_t len = 0;

	for (size_t i = 0; i < NROWS; i++)
		if (row_in(&rows[i], c->sec, key)) {
			read_setting(c, &rows[i], v);
			return;
		}
	known[0] = '\0';
	for (size_t i = 0; i < NROWS && len < sizeof(known); i++)
		if (row_in(&rows[i], c->sec, NULL))
			len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s",
			                        len ? ", " : "", leaf(rows[i].key));
	config__unknown(c, k, c->sec->label, known);
}

void config__walk_section(struct ctx *c, yaml_node_t *v, const struct section *sec)
{
	const struct section *outer = c->sec;

	c->sec = sec;
	config__each_pair(c, v, sec->what, table_pair);
	c->sec = outer;
}

/* The defaults of the rows on `base`, read as if config.yaml said them. */
void config__apply_defaults(struct ctx *c, enum set_base base)
{
	yaml_node_t n;
	char text[64];

	for (size_t i = 0; i < NROWS; i++) {
		if (rows[i].base != base || !rows[i].def)
			continue;
		snprintf(text, sizeof(text), "%s", rows[i].def);
		memset(&n, 0, sizeof(n));
		n.type = YAML_SCALAR_NODE;
		n.data.scalar.value = (yaml_char_t *)text;
		n.data.scalar.length = strlen(text);
		n.data.scalar.style = YAML_PLAIN_SCALAR_STYLE;
		read_setting(c, &rows[i], &n);
	}
}

int sl_config_key(size_t i, struct sl_config_key *out)
{
	static const char *const types[] = {"section", "text", "word", "number", "bool",
	                                    "duration", "size", "dollars", "minutes", "argv", "paths", "list",
	                                    "choice", "custom"};

	if (i >= NROWS || rows[i].base == B_RETRY)
		return -1;
	out->key = rows[i].key;
	out->type = types[rows[i].type];
	out->def = rows[i].def;
	out->min = rows[i].min;
	out->max = rows[i].max;
	return 0;
}

/* Free what the rows on `base` hold at base `p`. */
static void free_rows(void *p, enum set_base base)
{
	for (size_t i = 0; i < NROWS; i++) {
		void *at = (char *)p + rows[i].off;
		if (rows[i].base != base || rows[i].type == T_SECTION || rows[i].type == T_HOOK)
			continue;
		if (rows[i].type == T_STR || rows[i].type == T_WORD)
			free(*(char **)at);
		else if (rows[i].type == T_ARGV || rows[i].type == T_PATHS || rows[i].type == T_STRV)
			sl_strv_free(*(sl_strv *)at);
	}
}

static void free_gates(struct sl_gate *g, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(g[i].name);
		free_rows(&g[i], B_GATE);
	}
	free(g);
}

/* Every name of merge.gates is a configured gate. */
static void merge_gates_check(struct ctx *c)
{
	struct sl_config *cfg = c->cfg;

	for (size_t i = 0; cfg->merge.gates && cfg->merge.gates[i]; i++)
		if (!config__gate_known(cfg, cfg->merge.gates[i]))
			config__problem(c, c->merge_gates, "merge.gates names '%.200s', which is no configured "
			        "gate; define it under 'gates' or fix the name", cfg->merge.gates[i]);
}

/* builder.agent names a known agent, and is the only way builder: says what builds. */
static void builder_agent_check(struct ctx *c)
{
	const struct sl_builder *b = &c->cfg->builder;

	if (!b->agent)
		return;
	config__check_agent(c, c->builder_agent, b->agent, "builder.agent");
	if (b->command || b->preset)
		config__problem(c, c->builder_agent, "builder has both 'agent' and '%s'; keep one",
		        b->command ? "command" : "preset");
}

static void cross_check(struct ctx *c)
{
	struct sl_config *cfg = c->cfg;

	merge_gates_check(c);
	config__lanes_check(c);
	executor_check(c);

	if (cfg->builder.command && cfg->builder.preset)
		config__problem(c, c->root, "builder has both 'command' and 'preset'; keep one");
	builder_agent_check(c);
	if (cfg->reviewer.mode == SL_REVIEWER_HTTP && !cfg->reviewer.url)
		config__problem(c, c->root,
		        "reviewer.mode is http but reviewer.url is not set; add the "
		        "reviewer's URL");
	if (cfg->reviewer.mode == SL_REVIEWER_COMMAND && !cfg->reviewer.command)
		config__problem(c, c->root,
		        "reviewer.mode is command but reviewer.command is not set; "
		        "add the program to run");
	if (cfg->reviewer.mode == SL_REVIEWER_HTTP &&
	    cfg->reviewer.protocol == SL_PROTOCOL_OPENAI && !cfg->reviewer.model)
		config__problem(c, c->root,
		        "reviewer.protocol is openai but reviewer.model is not set; "
		        "name the model to ask");
}

/* ---- defaults, load, check --------------------------------------------- */

static int set_defaults(struct sl_config *cfg)
{
	struct ctx c = {.path = "(defaults)", .cfg = cfg};

	memset(cfg, 0, sizeof(*cfg));
	config__apply_defaults(&c, B_CONFIG);
	config__apply_defaults(&c, B_BUILDER); /* builder:'s, c.bld being NULL */
	return c.count ? -1 : 0;
}

static int fill_late_defaults(struct sl_config *cfg)
{
	const char *name = cfg->reviewer.mode == SL_REVIEWER_HTTP      ? "sluice-http-reviewer"
	                   : cfg->reviewer.mode == SL_REVIEWER_COMMAND ? "sluice-command-reviewer"
	                                                               : NULL;

	if (!cfg->reviewer.name && name && !(cfg->reviewer.name = strdup(name)))
		return -1;
	if (!cfg->merge.train_depth)
		cfg->merge.train_depth = cfg->merge.jobs ? cfg->merge.jobs : cfg->queue.jobs;
	return 0;
}

int sl_config_default(struct sl_config **out, struct sl_err *err)
{
	struct sl_config *cfg = calloc(1, sizeof(*cfg));

	*out = NULL;
	if (!cfg || set_defaults(cfg) < 0) {
		sl_config_free(cfg);
		return sl_err_set(err, SL_ERROR, "out of memory");
	}
	*out = cfg;
	return 0;
}

static void yaml_problem(struct ctx *c, yaml_parser_t *p)
{
	yaml_mark_t m = p->problem ? p->problem_mark : p->context_mark;

	c->count++;
	sl_buf_addf(c->problems, "%s:%zu:%zu: YAML syntax error: %s%s%s; fix the file\n", c->path,
	            m.line + 1, m.column + 1, p->problem ? p->problem : "cannot parse",
	            p->context ? " " : "", p->context ? p->context : "");
}

/* Parse data into a fresh config, collecting problems. Returns the count or -1 (OOM). */
static int walk(struct sl_config *cfg, const char *path, const char *data, size_t len,
                struct sl_buf *problems)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	struct ctx c = {.path = path, .doc = &doc, .problems = problems, .cfg = cfg};
	yaml_node_t *root;

	if (!yaml_parser_initialize(&parser))
		return -1;
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_problem(&c, &parser);
		yaml_parser_delete(&parser);
		return c.count;
	}
	c.root = root = yaml_document_get_root_node(&doc);
	if (root && !config__is_null(root))
		config__walk_section(&c, root, &(struct section){"", "the configuration", NULL, 0});
	if (c.retry_node)
		config__retry_list(&c, c.retry_node);
	config__retry_check(&c, c.retry_node ? c.retry_node : root);
	cross_check(&c);
	if (fill_late_defaults(cfg) < 0)
		config__oom(&c);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return c.count;
}

static int read_config(struct sl_buf *data, const char *path, struct sl_err *err)
{
	int error = sl_read_file(data, path, CONFIG_MAX_BYTES, err);

	if (error == SL_ETOOBIG)
		sl_err_set(err, error, "'%s' is over 1 MiB; a config is a few lines", path);
	return error;
}

int sl_config_load(struct sl_config **out, const char *path, struct sl_err *err)
{
	struct sl_buf data = SL_BUF_INIT, problems = SL_BUF_INIT;
	int error, n;

	*out = NULL;
	if ((error = read_config(&data, path, err)) == 0 &&
	    (n = sl_config_parse(out, path, data.ptr ? data.ptr : "", data.len, &problems, err)))
		error = n < 0 ? n : sl_err_set(err, SL_EINVALID, "%.*s",
		                               (int)strcspn(sl_buf_cstr(&problems), "\n"),
		                               sl_buf_cstr(&problems));
	sl_buf_release(&data);
	sl_buf_release(&problems);
	return error;
}

int sl_config_check(const char *path, struct sl_buf *problems, struct sl_err *err)
{
	struct sl_buf data = SL_BUF_INIT;
	int n = read_config(&data, path, err);

	if (n == 0)
		n = sl_config_parse(NULL, path, data.ptr ? data.ptr : "", data.len, problems, err);
	sl_buf_release(&data);
	return n;
}

int sl_config_parse(struct sl_config **out, const char *name, const char *data, size_t len,
                    struct sl_buf *problems, struct sl_err *err)
{
	struct sl_config *cfg = calloc(1, sizeof(*cfg));
	int n;

	if (out)
		*out = NULL;
	if (!cfg || set_defaults(cfg) < 0 || !(cfg->path = strdup(name))) {
		n = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if (len > CONFIG_MAX_BYTES) {
		n = sl_err_set(err, SL_ETOOBIG, "'%s' is over 1 MiB; a config is a few lines", name);
		goto out;
	}
	if ((n = walk(cfg, name, data, len, problems)) < 0)
		n = sl_err_set(err, SL_ERROR, "out of memory");
	else if (n == 0 && out) {
		*out = cfg;
		cfg = NULL;
	}
out:
	sl_config_free(cfg);
	return n;
}

void sl_config_free(struct sl_config *cfg)
{
	size_t i;

	if (!cfg)
		return;
	free(cfg->path);
	free_rows(cfg, B_CONFIG);
	free_rows(&cfg->builder, B_BUILDER);
	for (i = 0; i < cfg->nbuilders; i++) {
		free(cfg->builders[i].name);
		free_rows(&cfg->builders[i], B_BUILDER);
	}
	free(cfg->builders);
	free_gates(cfg->gates, cfg->ngates);
	free_gates(cfg->watch.gates, cfg->watch.ngates);
	sl_strv_free(cfg->read_only_gates);
	for (i = 0; i < cfg->nretry; i++)
		free_rows(&cfg->retry[i], B_RETRY);
	free(cfg->retry);
	config__freeze_free(cfg);
	config__lanes_free(cfg);
	config__prices_free(cfg);
	free(cfg);
}
