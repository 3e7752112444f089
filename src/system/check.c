/*
 * sluice check (runner.h): the config and every work order of the inbox
 * validated without running anything, and the config's names checked
 * against the repository: the target is a branch, worktree.share and
 * worktree.copy entries stay inside the repository and are not tracked.
 * src/cli/cmd_check.c parses and prints.
 */
#include "system/system.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/fs.h"
#include "core/repo.h"
#include "queue/queue.h"
#include "store/store.h"

#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Config problems carry the absolute path: make it relative to the root. */
static void add_relative(struct sl_buf *out, const char *text, const char *root)
{
	size_t rl = strlen(root);

	while (*text) {
		size_t n = strcspn(text, "\n");
		if (n > rl && !strncmp(text, root, rl) && text[rl] == '/')
			sl_buf_add(out, text + rl + 1, n - rl - 1);
		else
			sl_buf_add(out, text, n);
		sl_buf_puts(out, "\n");
		text += n + (text[n] == '\n');
	}
}

/* The target must be an existing local branch: a tick cannot start without it. */
static int check_target_exists(const struct sl_repo *repo, const struct sl_config *cfg,
                               struct sl_buf *problems)
{
	git_repository *r = NULL;
	git_reference *ref = NULL;
	char *name = NULL;
	int rc, n = 0;

	if (!cfg || !cfg->target || sl_config_target_problem(cfg->target))
		return 0; /* no config, or its problem was already reported */
	/* not a fixed buffer: a cut name would be another branch */
	if (asprintf(&name, "refs/heads/%s", cfg->target) < 0)
		return 0;
	if (git_repository_open(&r, repo->root) == 0 &&
	    (rc = git_reference_lookup(&ref, r, name)) == GIT_ENOTFOUND) {
		sl_buf_addf(problems,
		              ".system/config.yaml: target '%s' is not a branch of this "
		              "repository; create it or name an existing branch\n",
		              cfg->target);
		n = 1;
	}
	git_reference_free(ref);
	git_repository_free(r);
	free(name);
	return n;
}

/* share/copy entries that exist must resolve inside the repository (no link leading out). */
static int check_paths_inside(const struct sl_repo *repo, const struct sl_config *cfg,
                              struct sl_buf *problems)
{
	const char *keys[2] = {"worktree.share", "worktree.copy"};
	char *const *lists[2];
	char abs[PATH_MAX], real[PATH_MAX];
	size_t rl = strlen(repo->root), i, k;
	int n = 0;

	if (!cfg)
		return 0;
	lists[0] = cfg->worktree.share;
	lists[1] = cfg->worktree.copy;
	for (k = 0; k < 2; k++)
		for (i = 0; lists[k] && lists[k][i]; i++) {
			int len = snprintf(abs, sizeof(abs), "%s/%s", repo->root, lists[k][i]);

			if (len < 0 || (size_t)len >= sizeof(abs) || !realpath(abs, real))
				continue; /* missing: said when a run prepares */
			if (!strncmp(real, repo->root, rl) && (real[rl] == '/' || !real[rl]))
				continue;
			sl_buf_addf(problems,
			            ".system/config.yaml: '%s' entry '%s' leads outside the "
			            "repository (to '%s'); share or copy files of the project only\n",
			            keys[k], lists[k][i], real);
			n++;
		}
	return n;
}

/*
 * share/copy entries tracked in the target branch can never work: every
 * worktree has its own copy of them, so the link or the copy finds it there.
 */
static int check_untracked(const struct sl_repo *repo, const struct sl_config *cfg,
                           struct sl_buf *problems)
{
	const char *keys[2] = {"worktree.share", "worktree.copy"};
	char *const *lists[2];
	git_repository *r = NULL;
	git_object *tree = NULL;
	git_tree_entry *e = NULL;
	char *spec = NULL;
	size_t i, k;
	int n = 0;

	if (!cfg || !cfg->target || sl_config_target_problem(cfg->target))
		return 0;
	/* not a fixed buffer: a cut spec could lose its ^{tree} and name a commit */
	if (asprintf(&spec, "refs/heads/%s^{tree}", cfg->target) < 0) {
		spec = NULL;
		goto out;
	}
	if (git_repository_open(&r, repo->root) < 0 || git_revparse_single(&tree, r, spec) < 0)
		goto out; /* no target: said above */
	lists[0] = cfg->worktree.share;
	lists[1] = cfg->worktree.copy;
	for (k = 0; k < 2; k++)
		for (i = 0; lists[k] && lists[k][i]; i++) {
			const char *p = lists[k][i];
			char path[PATH_MAX];
			size_t len;

			while (p[0] == '.' && p[1] == '/')
				for (p += 2; *p == '/'; p++)
					;
			len = strlen(p);
			if (!len || len >= sizeof(path))
				continue;
			memcpy(path, p, len + 1);
			while (len > 1 && path[len - 1] == '/')
				path[--len] = '\0';
			if (git_tree_entry_bypath(&e, (git_tree *)tree, path) < 0)
				continue;
			git_tree_entry_free(e);
			e = NULL;
			sl_buf_addf(problems,
			            ".system/config.yaml: '%s' entry '%s' is tracked in branch '%s'; "
			            "each worktree has its own copy of it: %s only untracked files "
			            "(node_modules, .venv, build outputs)\n",
			            keys[k], lists[k][i], cfg->target, k ? "copy" : "share");
			n++;
		}
out:
	git_object_free(tree);
	git_repository_free(r);
	free(spec);
	return n;
}

/* 1 when prog runs here: a path (with a '/') that is executable, or an executable of a PATH folder. */
static int on_path(const char *prog, size_t len)
{
	const char *path = getenv("PATH");
	char file[PATH_MAX];

	if (memchr(prog, '/', len))
		return snprintf(file, sizeof(file), "%.*s", (int)len, prog) < (int)sizeof(file) &&
		       access(file, X_OK) == 0;
	for (const char *p = path ? path : "";; p++) {
		size_t dl = strcspn(p, ":"); /* an empty entry is the current folder */
		int n = snprintf(file, sizeof(file), "%.*s/%.*s", dl ? (int)dl : 1, dl ? p : ".",
				 (int)len, prog);
		if (n > 0 && (size_t)n < sizeof(file) && access(file, X_OK) == 0)
			return 1;
		if (!p[dl])
			break;
		p += dl;
	}
	return 0;
}

/* Warn for each program of `progs` (space-separated) that is not found; `what` names its key. */
static void warn_missing(struct sl_buf *w, const char *what, const char *progs)
{
	const char *path = getenv("PATH");

	for (const char *p = progs; p && *p; p += strspn(p, " ")) {
		size_t len = strcspn(p, " ");
		if (!on_path(p, len) && memchr(p, '/', len))
			sl_buf_addf(w, ".system/config.yaml: warning: %s runs '%.*s', which is not an "
				    "executable file; install it there, or name it as it is\n", what,
				    (int)len, p);
		else if (!on_path(p, len))
			sl_buf_addf(w, ".system/config.yaml: warning: %s runs '%.*s', which is not on "
				    "PATH (%.300s); install it, or put its folder on PATH (also in "
				    "the crontab line of sluice tick: cron's PATH is /usr/bin:/bin)\n",
				    what, (int)len, p, path ? path : "unset");
		p += len;
	}
}

/* The first word of an argv, or a preset's programs, each with the key that names it. */
static void warn_builder(struct sl_buf *w, const struct sl_builder *b)
{
	char what[160];

	if (b->command && b->command[0]) {
		snprintf(what, sizeof(what), "%s%s%s", b->name ? "builders." : "builder.command",
			 b->name ? b->name : "", b->name ? ".command" : "");
		warn_missing(w, what, strchr(b->command[0], ' ') ? NULL : b->command[0]);
	} else if (b->preset) {
		snprintf(what, sizeof(what), "%s%s preset '%s'", b->name ? "builders." : "builder",
			 b->name ? b->name : "", b->preset);
		warn_missing(w, what, sl_config_preset_programs(b->preset));
	}
}

/*
 * The agent CLIs and commands sluice starts here, found on PATH: a missing
 * one is a warning (the PATH of cron may differ). With an executor the
 * builders run on its nodes: only the reviewer is looked for.
 */
static void check_programs(const struct sl_config *cfg, struct sl_buf *w)
{
	char what[160];

	if (cfg->executor.kind == SL_EXEC_LOCAL) {
		warn_builder(w, &cfg->builder);
		for (size_t i = 0; i < cfg->nbuilders; i++)
			warn_builder(w, &cfg->builders[i]);
		for (size_t i = 0; i < cfg->nretry; i++) {
			const char *a = cfg->retry[i].agent;
			if (!a || sl_config_builder_named(cfg, a) || !sl_config_preset_known(a))
				continue;
			snprintf(what, sizeof(what), "the retry rule of line %d (preset '%s')",
				 cfg->retry[i].line, a);
			warn_missing(w, what, sl_config_preset_programs(a));
		}
	}
	if (cfg->reviewer.mode == SL_REVIEWER_COMMAND && cfg->reviewer.command &&
	    cfg->reviewer.command[0])
		warn_missing(w, "reviewer.command", strchr(cfg->reviewer.command[0], ' ') ? NULL :
			     cfg->reviewer.command[0]);
}

/*
 * Which limit holds what (docs/config.md, "Which limit holds what"): a
 * tick's worker processes, queue.jobs of them, build runs and test the
 * train's cars alike, so a deeper train than that waits for a job; with
 * merge.jobs, the train has that many workers of its own.
 */
static void check_limits(const struct sl_config *cfg, struct sl_buf *w)
{
	int depth = cfg->merge.train_depth, jobs = cfg->queue.jobs;

	if (cfg->merge.batch > 1)
		; /* one batch, one gate run at a time: the depth does not apply (docs/config.md) */
	else if (cfg->merge.jobs > 0 && depth > cfg->merge.jobs)
		sl_buf_addf(w, ".system/config.yaml: warning: merge.train_depth is %d but merge.jobs "
			    "is %d: the train's cars are tested by a tick's %d train workers, so at "
			    "most %d at once; set merge.jobs to %d or more, or merge.train_depth to "
			    "%d\n",
			    depth, cfg->merge.jobs, cfg->merge.jobs, cfg->merge.jobs, depth,
			    cfg->merge.jobs);
	else if (!cfg->merge.jobs && jobs > 0 && depth > jobs)
		sl_buf_addf(w, ".system/config.yaml: warning: merge.train_depth is %d but queue.jobs "
			    "is %d: a tick's %d worker processes build runs and test the train's cars "
			    "alike, so at most %d cars are tested at once; set queue.jobs to %d or "
			    "more, or merge.train_depth to %d\n",
			    depth, jobs, jobs, jobs, depth, jobs);
	/* docs/watch.md: a tick watches every N landings, with the watch gates */
	if (cfg->watch.every && !cfg->watch.ngates)
		sl_buf_addf(w, ".system/config.yaml: warning: watch.every is %d but watch.gates "
			    "names no gate: nothing is watched; add watch.gates (docs/watch.md)\n",
			    cfg->watch.every);
}

int system_check(const struct sl_repo *repo, struct sl_buf *problems, size_t *nwo,
                 struct sl_err *err)
{
	struct sl_buf cfgp = SL_BUF_INIT;
	struct sl_config *cfg = NULL;
	struct sl_err ignored = SL_ERR_INIT;
	struct queue_scan scan = QUEUE_SCAN_INIT;
	struct store *st = NULL;
	int n, count = 0;

	if ((n = sl_config_check(repo->config_path, &cfgp, err)) < 0)
		goto out;
	count += n;
	add_relative(problems, sl_buf_cstr(&cfgp), repo->root);
	sl_config_load(&cfg, repo->config_path, &ignored);
	if (cfg) { /* warnings: listed, not counted (the config is valid) */
		struct sl_buf w = SL_BUF_INIT;
		sl_config_warnings(cfg, &w);
		check_programs(cfg, &w);
		check_limits(cfg, &w);
		add_relative(problems, sl_buf_cstr(&w), repo->root);
		sl_buf_release(&w);
	}
	count += check_target_exists(repo, cfg, problems);
	count += check_paths_inside(repo, cfg, problems);
	count += check_untracked(repo, cfg, problems);
	if (sl_path_exists(repo->db_path) && (n = store_open(&st, repo->db_path, err)) != 0)
		goto out;
	if ((n = queue_scan(&scan, repo->root, cfg ? cfg->queue.inbox : "work_orders", err)) != 0 ||
	    (n = queue_evaluate(&scan, st, err)) != 0)
		goto out;
	count += queue_problems(&scan, problems);
	*nwo = scan.n;
	n = count;
out:
	queue_scan_release(&scan);
	store_free(st);
	sl_config_free(cfg);
	sl_buf_release(&cfgp);
	return n;
}
