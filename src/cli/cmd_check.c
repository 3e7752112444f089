/* sluice check: validate the config and every work order; run nothing. */
#include "cli/cli.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/fs.h"
#include "core/repo.h"
#include "queue/queue.h"
#include "store/store.h"

#include <getopt.h>
#include <git2.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
        "usage: sluice check [--json] [-C DIR]\n"
        "\n"
        "Validate .system/config.yaml and every work order of the inbox without\n"
        "running anything: YAML syntax, every key and value of the config (retry\n"
        "rules need an 'exit' entry, 'not:' must name a configured gate, prompt\n"
        "templates may only use known variables), and every work order's front\n"
        "matter, ids, dependencies (unknown ids, cycles) and duplicates.\n"
        "\n"
        "Each problem is printed on its own line as 'path:line:col: message'.\n"
        "\n"
        "options:\n"
        "  --json       print {\"ok\", \"problems\": [...], \"work_orders\": N} instead\n"
        "  -C DIR       run as if started in DIR\n"
        "  -h, --help   show this help\n"
        "\n"
        "exit status: 0 when everything is valid, 1 when a problem was found,\n"
        "2 on a usage error.\n"
        "\n"
        "examples:\n"
        "  sluice check\n"
        "  sluice check --json | jq -r '.problems[]'\n";

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
	char *abs, real[PATH_MAX];
	size_t rl = strlen(repo->root), i, k;
	int n = 0;

	if (!cfg)
		return 0;
	lists[0] = cfg->worktree.share;
	lists[1] = cfg->worktree.copy;
	for (k = 0; k < 2; k++)
		for (i = 0; lists[k] && lists[k][i]; i++) {
			int found = (abs = sl_path_join(repo->root, lists[k][i])) && realpath(abs, real);

			free(abs);
			if (!found)
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

static int check_all(const struct sl_repo *repo, struct sl_buf *problems, size_t *nwo,
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

static int print_json(const char *problems, int count, size_t nwo)
{
	json_t *doc = json_object(), *list = json_array();
	const char *p;

	for (p = problems; *p; p += strcspn(p, "\n") + 1)
		json_array_append_new(list, json_stringn(p, strcspn(p, "\n")));
	json_object_set_new(doc, "ok", json_boolean(count == 0));
	json_object_set_new(doc, "problems", list);
	json_object_set_new(doc, "work_orders", json_integer((json_int_t)nwo));
	json_dumpf(doc, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(doc);
	return count ? CLI_FAIL : CLI_OK;
}

int cmd_check(struct cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {CLI_COMMON_LONGOPTS, {NULL, 0, NULL, 0}};
	struct sl_repo repo = SL_REPO_INIT;
	struct sl_err err = SL_ERR_INIT;
	struct sl_buf problems = SL_BUF_INIT;
	size_t nwo = 0;
	int opt, n = 0, rc;

	optind = 0;
	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		if (opt == 'h')
			return cli_help(usage_text);
		if (!cli_common_opt(cli, opt, optarg))
			return cli_usage("check", "unknown option");
	}
	if (optind < argc)
		return cli_usage("check", "unexpected argument '%s'", argv[optind]);
	if (sl_repo_find(&repo, cli->dir, &err) || sl_repo_require_init(&repo, &err) ||
	    (n = check_all(&repo, &problems, &nwo, &err)) < 0) {
		rc = cli_report(&err);
		goto out;
	}
	if (cli->json) {
		rc = print_json(sl_buf_cstr(&problems), n, nwo);
		goto out;
	}
	/* file names and values from work orders: escaped, as queue prints them */
	for (const char *p = sl_buf_cstr(&problems); *p;) {
		size_t len = strcspn(p, "\n");
		char *line = strndup(p, len);

		printf("%s\n", line ? cli_esc(line) : "(out of memory)");
		free(line);
		p += len + (p[len] == '\n');
	}
	if (n) {
		printf("%d problem%s found in the config and %zu work order%s\n", n,
		       n == 1 ? "" : "s", nwo, nwo == 1 ? "" : "s");
		rc = CLI_FAIL;
	} else {
		printf("ok: the config and %zu work order%s are valid\n", nwo, nwo == 1 ? "" : "s");
		rc = CLI_OK;
	}
out:
	sl_buf_release(&problems);
	sl_repo_release(&repo);
	return rc;
}
