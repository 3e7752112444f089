/*
 * sluice worktree: the worktree tool of seeds/001 (rp1's agent tool), with
 * its JSON: {"success":true,"tool":"worktree","data":{...}} on stdout, or
 * {"success":false,"tool":"worktree","error":"..."} and exit 1.
 */
#include "cli/cli.h"
#include "core/fs.h"
#include "core/lock.h"
#include "core/repo.h"
#include "core/time.h"
#include "worktree/worktree.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOOKS_ENV "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/dev/null"

static const char usage_main[] =
	"usage: sluice worktree create SLUG [--prefix P] [--base REF]\n"
	"       sluice worktree create --path PATH [--branch B] [--base REF]\n"
	"       sluice worktree cleanup PATH [--keep-branch[=true|false]] [--force]\n"
	"       sluice worktree cleanup --pool\n"
	"       sluice worktree pool\n"
	"       sluice worktree status\n\n"
	"Isolated git worktrees for agents. Each subcommand prints one JSON document:\n"
	"{\"success\": true, \"tool\": \"worktree\", \"data\": {...}}, or on failure\n"
	"{\"success\": false, \"tool\": \"worktree\", \"error\": \"...\"} and exit status 1.\n"
	"--json is accepted by each (the output is JSON anyway).\n"
	"See 'sluice worktree <subcommand> --help'.\n";

static const char usage_create[] =
	"usage: sluice worktree create SLUG [--prefix P] [--base REF]\n"
	"       sluice worktree create --path PATH [--branch B] [--base REF]\n\n"
	"With SLUG (rp1's tool): create branch <P>-<slug> at REF (default HEAD) and a\n"
	"worktree of it at <repo>/.system/worktrees/<branch>. SLUG may be a task\n"
	"description: it is lower-cased, stop words are dropped, characters other than\n"
	"a-z, 0-9 and '-' separate words, and it is cut to 50 characters at a word\n"
	"boundary. When the branch exists, -2, -3, ... is appended.\n\n"
	"With --path (Smithers' worktree): a worktree at PATH, a folder you choose\n"
	"(relative to the current directory, not to -C DIR; inside the repository or\n"
	"outside it). With --branch B it is on B: an existing branch is checked out as\n"
	"it is, a missing one is made at REF. Without --branch its HEAD is detached at\n"
	"REF. Idempotent: when PATH already is a worktree of this repository on B\n"
	"(detached, without --branch), nothing changes and \"created\" is false.\n"
	"Refused: the repository root, .git and anything in it, .system/, a symbolic\n"
	"link, a path that exists and is not a worktree of this repository, the\n"
	"worktree there on another branch, B checked out in another worktree, a\n"
	"branch name git would not take or one starting with '-'.\n"
	"The main checkout is not touched.\n\n"
	"  --prefix P    branch name prefix (default quick-build; SLUG only)\n"
	"  --base REF    the commit to start from (default HEAD, the main checkout's,\n"
	"                also when run in another worktree); with --branch, only for\n"
	"                a branch that does not exist yet\n"
	"  --path PATH   where the worktree goes (no SLUG then)\n"
	"  --branch B    the branch to check out or make (needs --path)\n"
	"  --json        accepted; the output is JSON anyway\n\n"
	"Two features side by side (seeds/004):\n"
	"  sluice worktree create --path ./worktrees/feature-a --branch feature-a\n"
	"  sluice worktree create --path ./worktrees/feature-b --branch feature-b\n\n"
	"data with SLUG: {\"path\", \"branch\", \"basedOn\" (the full commit id)}\n"
	"data with --path: {\"worktreePath\", \"branch\" (null when detached), \"created\",\n"
	"      \"cleanedUp\" (false), \"head\" (the commit checked out)}\n"
	"A refusal prints 'sluice: error: ...' and 'sluice: suggestion: ...' and the\n"
	"JSON {\"success\": false, \"error\", \"suggestion\"}.\n\n"
	"Exit status: 0 created or already there, 1 refused or failed, 2 usage error.\n\n"
	"Hooks: the worktree is made with the repository's hooks off; sluice writes no\n"
	"git configuration (libgit2 cannot open a repository using\n"
	"extensions.worktreeConfig). Run git in the worktree with\n"
	"  " HOOKS_ENV "\n"
	"to keep the repository's hooks out, as sluice does for its builders.\n";

static const char usage_cleanup[] =
	"usage: sluice worktree cleanup PATH [--keep-branch[=true|false]] [--force]\n"
	"       sluice worktree cleanup --pool\n\n"
	"Remove the worktree at PATH (inside this repository, or any worktree of it\n"
	"made with create --path). A worktree with uncommitted or untracked changes\n"
	"is refused unless --force: 'error: cannot remove worktree PATH - uncommitted\n"
	"changes present'.\n"
	"With --pool, empty the worktree pool instead: every finished run's worktree\n"
	"kept in .system/pool for new runs (worktree.pool) is removed, but those\n"
	"locked with 'git worktree lock'. Later runs fill the pool again.\n\n"
	"  --keep-branch[=BOOL]  keep the branch (default true); =false deletes it\n"
	"  --force               remove even with uncommitted changes (they are lost)\n"
	"  --pool                empty the worktree pool (no PATH)\n\n"
	"data: {\"removed\", \"branchDeleted\", \"path\"}; with --pool\n"
	"      {\"removed\": N, \"lockedKept\": N}\n";

static const char usage_pool[] =
	"usage: sluice worktree pool\n\n"
	"List the worktree pool: finished runs' worktrees kept in .system/pool, which\n"
	"new runs take and reset to their base instead of checking out every file\n"
	"(worktree.pool, worktree.recycle in .system/config.yaml). Oldest first.\n"
	"Empty it with 'sluice worktree cleanup --pool' or 'sluice gc'.\n\n"
	"data: {\"worktrees\": [{\"name\", \"path\", \"commit\", \"pooledAt\",\n"
	"      \"usable\", \"locked\"}]}\n";

static const char usage_status[] =
	"usage: sluice worktree status\n\n"
	"Whether the current directory (or -C DIR) is inside a linked worktree.\n\n"
	"data: {\"isWorktree\": true, \"path\", \"branch\", \"mainRepoPath\"} or\n"
	"      {\"isWorktree\": false}\n";

static int print_json(json_t *doc)
{
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (s) {
		puts(s);
		free(s);
	}
	json_decref(doc);
	return s ? CLI_OK : CLI_FAIL;
}

static int success(json_t *data)
{
	return print_json(json_pack("{s:b, s:s, s:o}", "success", 1, "tool", "worktree", "data",
				    data));
}

static int failure(const struct sl_err *err)
{
	const char *msg = err->msg[0] ? err->msg : "failed (no message)";

	cli_error("%s", msg);
	print_json(json_pack("{s:b, s:s, s:s}", "success", 0, "tool", "worktree", "error", msg));
	return CLI_FAIL;
}

/* A failure with the seed's two lines (seeds/004): "error: ..." and "suggestion: ...". */
static int failure_hint(const struct sl_err *err, const char *suggestion)
{
	const char *msg = err->msg[0] ? err->msg : "failed (no message)";

	if (!suggestion)
		return failure(err);
	cli_error("error: %s", msg);
	cli_error("suggestion: %s", suggestion);
	print_json(json_pack("{s:b, s:s, s:s, s:s}", "success", 0, "tool", "worktree", "error",
			     msg, "suggestion", suggestion));
	return CLI_FAIL;
}

static int do_create(const char *root, const char *slug, const char *prefix, const char *base,
		     struct sl_err *err)
{
	struct worktree_tool_made made = WORKTREE_TOOL_MADE_INIT;
	int error = worktree_tool_create(root, slug, prefix, base, &made, err);

	if (!error) {
		success(json_pack("{s:s, s:s, s:s}", "path", made.path, "branch", made.branch,
				  "basedOn", made.base));
		fprintf(stderr, "sluice: hooks stay out when git runs with " HOOKS_ENV "\n");
	}
	worktree_tool_made_release(&made);
	return error;
}

/* 1 when `s` can be a JSON string (valid UTF-8). */
static int utf8(const char *s)
{
	json_t *j = json_string(s);

	json_decref(j);
	return j != NULL;
}

/* --path: Smithers' worktree (seeds/004), data as its WorktreeExecutionResult. */
static int do_create_at(const char *root, const char *path, const char *branch,
			const char *base)
{
	struct worktree_tool_at at = WORKTREE_TOOL_AT_INIT;
	struct sl_err err = SL_ERR_INIT;
	int rc;

	if (worktree_tool_create_at(root, path, branch, base, &at, &err) < 0) {
		rc = failure_hint(&err, at.suggestion);
		goto out;
	}
	rc = success(json_pack("{s:s, s:s?, s:b, s:b, s:s}", "worktreePath", at.path, "branch",
			       at.branch, "created", at.created, "cleanedUp", 0, "head", at.base));
	if (at.created && branch)
		cli_error("created worktree '%s' on branch '%s'", at.path, branch);
	else if (at.created)
		cli_error("created worktree '%s' with a detached HEAD at %.12s", at.path, at.base);
	else
		cli_error("worktree '%s' exists already (%s%s%s); nothing changed", at.path,
			  branch ? "on branch '" : "detached", branch ? branch : "",
			  branch ? "'" : "");
	fprintf(stderr, "sluice: hooks stay out when git runs with " HOOKS_ENV "\n");
out:
	worktree_tool_at_release(&at);
	return rc;
}

static int parse_bool(const char *s, int *out)
{
	if (!s || !strcmp(s, "true") || !strcmp(s, "1") || !strcmp(s, "yes"))
		*out = 1;
	else if (!strcmp(s, "false") || !strcmp(s, "0") || !strcmp(s, "no"))
		*out = 0;
	else
		return -1;
	return 0;
}

/* --pool: every slot of the pool, under the service lock (a tick may be taking one). */
static int empty_pool(const char *root)
{
	struct sl_err err = SL_ERR_INIT;
	struct sl_lock lock = SL_LOCK_INIT;
	size_t removed = 0, locked = 0;
	char *path = sl_path_fmt("%s/.system/lock", root);
	int rc;

	if (!path)
		sl_err_set(&err, SL_ERROR, "out of memory");
	if (!path || sl_lock_acquire(&lock, path, 60000, &err) < 0 ||
	    worktree_pool_trim(root, 0, &removed, &locked, &err) < 0)
		rc = failure(&err);
	else
		rc = success(json_pack("{s:I, s:I}", "removed", (json_int_t)removed, "lockedKept",
				       (json_int_t)locked));
	sl_lock_release(&lock);
	free(path);
	return rc;
}

static int sub_pool(const char *root, int argc, char **argv)
{
	struct worktree_pool_slot *v = NULL;
	struct sl_err err = SL_ERR_INIT;
	json_t *a;
	size_t n = 0, i;
	char when[40];

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return cli_help(usage_pool);
	if (argc > 2 || (argc == 2 && strcmp(argv[1], "--json"))) /* JSON anyway */
		return cli_usage("worktree pool", "takes no arguments");
	if (worktree_pool_list(root, &v, &n, &err) < 0)
		return failure(&err);
	a = json_array();
	for (i = 0; a && i < n; i++) {
		sl_time_iso(when, sizeof(when), v[i].since_ms);
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}", "name",
						   v[i].name, "path", v[i].path, "commit",
						   v[i].commit, "pooledAt", when, "usable",
						   v[i].sound, "locked", v[i].locked));
	}
	worktree_pool_list_release(v, n);
	return success(json_pack("{s:o}", "worktrees", a));
}

static int sub_cleanup(const char *root, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "keep-branch", optional_argument, NULL, 'k' },
		{ "force", no_argument, NULL, 'f' },
		{ "pool", no_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sl_err err = SL_ERR_INIT;
	const char *hint = NULL;
	char *abs = NULL;
	int c, keep = 1, force = 0, deleted = 0, pool = 0, rc;

	optind = 0;
	while ((c = getopt_long(argc, argv, "hf", opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(usage_cleanup);
		else if (c == 'f')
			force = 1;
		else if (c == 'p')
			pool = 1;
		else if (c == 'k' && parse_bool(optarg, &keep) < 0)
			return cli_usage("worktree cleanup", "--keep-branch takes true or false");
		else if (c != 'k' && c != 'j') /* --json: the output is JSON anyway */
			return cli_usage("worktree cleanup", "unknown option");
	}
	if (pool && optind != argc)
		return cli_usage("worktree cleanup", "--pool takes no PATH");
	if (pool)
		return empty_pool(root);
	if (optind != argc - 1)
		return cli_usage("worktree cleanup", "expected one PATH");
	if (worktree_tool_remove(root, argv[optind], keep, force, &abs, &deleted, &hint, &err) < 0)
		rc = failure_hint(&err, hint);
	else
		rc = success(json_pack("{s:b, s:b, s:s}", "removed", 1, "branchDeleted", deleted,
				       "path", abs));
	free(abs);
	return rc;
}

static int sub_create(const char *root, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "prefix", required_argument, NULL, 'p' },
		{ "base", required_argument, NULL, 'b' },
		{ "path", required_argument, NULL, 'P' },
		{ "branch", required_argument, NULL, 'B' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sl_err err = SL_ERR_INIT;
	const char *prefix = NULL, *base = "HEAD", *path = NULL, *branch = NULL;
	char slug[WORKTREE_SLUG_MAX + 1];
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(usage_create);
		else if (c == 'p')
			prefix = optarg;
		else if (c == 'b')
			base = optarg;
		else if (c == 'P')
			path = optarg;
		else if (c == 'B')
			branch = optarg;
		else if (c != 'j') /* the output is JSON anyway */
			return cli_usage("worktree create", "unknown option");
	}
	if (branch && !path)
		return cli_usage("worktree create", "--branch needs --path");
	if (path && (prefix || optind != argc))
		return cli_usage("worktree create", "--path takes no SLUG and no --prefix");
	if (path && (!utf8(path) || (branch && !utf8(branch))))
		return cli_usage("worktree create", "--path and --branch must be UTF-8 text (the "
				 "output is JSON)");
	if (path)
		return do_create_at(root, path, branch, base);
	if (!prefix)
		prefix = "quick-build";
	if (optind != argc - 1)
		return cli_usage("worktree create", "expected one SLUG");
	if (!worktree_slug(argv[optind], slug, sizeof(slug)))
		return cli_usage("worktree create", "'%s' has nothing to make a slug of",
				 argv[optind]);
	if (do_create(root, slug, prefix, base, &err) < 0)
		return failure(&err);
	return CLI_OK;
}

static json_t *status_data(const struct worktree_tool_status *st)
{
	if (!st->is_worktree)
		return json_pack("{s:b}", "isWorktree", 0);
	return json_pack("{s:b, s:s, s:s?, s:s}", "isWorktree", 1, "path", st->path, "branch",
			 st->branch, "mainRepoPath", st->main_path);
}

static int sub_status(struct cli *cli, int argc, char **argv)
{
	struct worktree_tool_status st = { 0 };
	struct sl_err err = SL_ERR_INIT;
	char *dir;
	json_t *data = NULL;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return cli_help(usage_status);
	if (argc > 2 || (argc == 2 && strcmp(argv[1], "--json"))) /* JSON anyway */
		return cli_usage("worktree status", "takes no arguments");
	if (!(dir = cli_repo_dir(cli)))
		sl_err_set(&err, SL_ENOTFOUND, "cannot use directory '%s'", cli->dir ? cli->dir : ".");
	else if (worktree_tool_status(dir, &st, &err) == 0)
		data = status_data(&st);
	worktree_tool_status_release(&st);
	free(dir);
	return data ? success(data) : failure(&err);
}

int cmd_worktree(struct cli *cli, int argc, char **argv)
{
	struct sl_err err = SL_ERR_INIT;
	struct sl_repo repo = SL_REPO_INIT;
	const char *hint = NULL;
	int rc;

	static char progname[64];

	if (argc < 2)
		return cli_usage("worktree", "expected create, cleanup, pool or status");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cli_help(usage_main);
	/* getopt names the subcommand in its messages */
	snprintf(progname, sizeof(progname), "sluice worktree %s", argv[1]);
	if (!strcmp(argv[1], "status") || !strcmp(argv[1], "create") ||
	    !strcmp(argv[1], "cleanup") || !strcmp(argv[1], "pool"))
		argv[1] = progname;
	if (!strcmp(progname, "sluice worktree status"))
		return sub_status(cli, argc - 1, argv + 1);
	if (argv[1] != progname)
		return cli_usage("worktree", "unknown subcommand '%s'", argv[1]);
	if (argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")))
		return cli_help(!strcmp(progname, "sluice worktree create") ? usage_create :
				!strcmp(progname, "sluice worktree pool")   ? usage_pool :
									      usage_cleanup);
	if (!strcmp(progname, "sluice worktree create") &&
	    worktree_tool_repo_check(cli->dir, &hint, &err) < 0)
		return failure_hint(&err, hint);
	if (sl_repo_find(&repo, cli->dir, &err) < 0)
		return failure(&err);
	cli_take_token(cli->dir); /* git runs the filters of the shared config */
	if (!strcmp(progname, "sluice worktree create"))
		rc = sub_create(repo.root, argc - 1, argv + 1);
	else if (!strcmp(progname, "sluice worktree pool"))
		rc = sub_pool(repo.root, argc - 1, argv + 1);
	else
		rc = sub_cleanup(repo.root, argc - 1, argv + 1);
	sl_repo_release(&repo);
	return rc;
}
