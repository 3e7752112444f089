/*
 * sluice worktree: the worktree tool of seeds/001 (rp1's agent tool), with
 * its JSON: {"success":true,"tool":"worktree","data":{...}} on stdout, or
 * {"success":false,"tool":"worktree","error":"..."} and exit 1.
 */
#include "cli/cli.h"
#include "core/fs.h"
#include "core/repo.h"
#include "worktree/worktree.h"

#include <getopt.h>
#include <git2.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HOOKS_ENV "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/dev/null"

static const char usage_main[] =
	"usage: sluice worktree create SLUG [--prefix P] [--base REF]\n"
	"       sluice worktree cleanup PATH [--keep-branch[=true|false]] [--force]\n"
	"       sluice worktree status\n\n"
	"Isolated git worktrees for agents. Each subcommand prints one JSON document:\n"
	"{\"success\": true, \"tool\": \"worktree\", \"data\": {...}}, or on failure\n"
	"{\"success\": false, \"tool\": \"worktree\", \"error\": \"...\"} and exit status 1.\n"
	"See 'sluice worktree <subcommand> --help'.\n";

static const char usage_create[] =
	"usage: sluice worktree create SLUG [--prefix P] [--base REF]\n\n"
	"Create branch <P>-<slug> at REF (default HEAD) and a worktree of it at\n"
	"<repo>/.system/worktrees/<branch>. SLUG may be a task description: it is\n"
	"lower-cased, stop words are dropped, characters other than a-z, 0-9 and '-'\n"
	"separate words, and it is cut to 50 characters at a word boundary. When the\n"
	"branch exists, -2, -3, ... is appended. The main checkout is not touched.\n\n"
	"  --prefix P    branch name prefix (default quick-build)\n"
	"  --base REF    the commit to start from (default HEAD)\n\n"
	"data: {\"path\", \"branch\", \"basedOn\" (the full commit id)}\n\n"
	"Hooks: sluice writes no git configuration (libgit2 cannot open a repository\n"
	"using extensions.worktreeConfig). Run git in the worktree with\n"
	"  " HOOKS_ENV "\n"
	"to keep the repository's hooks out, as sluice does for its builders.\n";

static const char usage_cleanup[] =
	"usage: sluice worktree cleanup PATH [--keep-branch[=true|false]] [--force]\n\n"
	"Remove the worktree at PATH (inside this repository). A worktree with\n"
	"uncommitted or untracked changes is refused unless --force.\n\n"
	"  --keep-branch[=BOOL]  keep the branch (default true); =false deletes it\n"
	"  --force               remove even with uncommitted changes (they are lost)\n\n"
	"data: {\"removed\", \"branchDeleted\", \"path\"}\n";

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

/* The full id of the commit `rev` names. */
static int resolve_base(const char *root, const char *rev, char hex[41], struct sl_err *err)
{
	git_repository *repo = NULL;
	git_object *obj = NULL, *commit = NULL;
	int rc, error = 0;

	if ((rc = git_repository_open(&repo, root)) < 0 ||
	    (rc = git_revparse_single(&obj, repo, rev)) < 0 ||
	    (rc = git_object_peel(&commit, obj, GIT_OBJECT_COMMIT)) < 0)
		error = sl_err_git(err, rc, "cannot resolve base '%s' to a commit; pass --base "
				   "with a branch, tag or commit", rev);
	else
		git_oid_tostr(hex, 41, git_object_id(commit));
	git_object_free(commit);
	git_object_free(obj);
	git_repository_free(repo);
	return error;
}

static int branch_exists(const char *root, const char *branch)
{
	git_repository *repo = NULL;
	git_reference *ref = NULL;
	int exists = 0;

	if (git_repository_open(&repo, root) == 0 &&
	    git_branch_lookup(&ref, repo, branch, GIT_BRANCH_LOCAL) == 0)
		exists = 1;
	git_reference_free(ref);
	git_repository_free(repo);
	return exists;
}

/* The first free <base>, <base>-2, <base>-3, ... */
static int free_branch(const char *root, const char *stem, char *out, size_t n,
		       struct sl_err *err)
{
	int i, len;

	for (i = 1; i < 1000; i++) {
		if (i == 1)
			len = snprintf(out, n, "%s", stem);
		else
			len = snprintf(out, n, "%s-%d", stem, i);
		if (len < 0 || (size_t)len >= n)
			break;
		if (!branch_exists(root, out))
			return 0;
	}
	return sl_err_set(err, SL_EEXISTS, "branches '%s' to '%s-999' all exist; use another slug",
			  stem, stem);
}

static int do_create(const char *root, const char *slug, const char *prefix, const char *base,
		     struct sl_err *err)
{
	char branch[512], name[512], hex[41], *path = NULL, *p;
	int error;

	if (sl_fmt_fixed(name, sizeof(name), "%s-%s", prefix, slug) != 0)
		return sl_err_set(err, SL_EINVALID, "the branch name '%s-%s' is too long; use a "
				  "shorter slug or --prefix", prefix, slug);
	if (!worktree_branch_name_valid(name))
		return sl_err_set(err, SL_EINVALID, "'%s' is not a valid branch name; fix --prefix",
				  name);
	if ((error = resolve_base(root, base, hex, err)) < 0 ||
	    (error = free_branch(root, name, branch, sizeof(branch), err)) < 0 ||
	    (error = worktree_exclude_system(root, err)) < 0)
		return error;
	snprintf(name, sizeof(name), "%s", branch);
	for (p = name; *p; p++)
		if (*p == '/')
			*p = '-';
	if (asprintf(&path, "%s/.system/worktrees/%s", root, branch) < 0)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if (sl_path_exists(path))
		error = sl_err_set(err, SL_EEXISTS,
				   "Path already exists: '%s'; clean it up (sluice worktree cleanup "
				   "'%s') or use a different slug",
				   path, path);
	else
		error = worktree_add(root, name, path, branch, hex, NULL, err);
	if (!error) {
		success(json_pack("{s:s, s:s, s:s}", "path", path, "branch", branch, "basedOn", hex));
		fprintf(stderr, "sluice: hooks stay out when git runs with " HOOKS_ENV "\n");
	}
	free(path);
	return error;
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

/* PATH made absolute (resolved when it exists); must lie inside root. */
static int cleanup_path(const char *root, const char *arg, char *abs, struct sl_err *err)
{
	char cwd[PATH_MAX], tmp[PATH_MAX * 2];
	size_t n = strlen(root);

	if (!realpath(arg, abs)) {
		if (arg[0] == '/' || !getcwd(cwd, sizeof(cwd)))
			snprintf(tmp, sizeof(tmp), "%s", arg);
		else
			snprintf(tmp, sizeof(tmp), "%s/%s", cwd, arg);
		if (strlen(tmp) >= PATH_MAX)
			return sl_err_set(err, SL_EINVALID, "path '%s' is too long", arg);
		memcpy(abs, tmp, strlen(tmp) + 1);
	}
	if (strncmp(abs, root, n) != 0 || abs[n] != '/' || strstr(abs, "/../"))
		return sl_err_set(err, SL_EINVALID,
				  "'%s' is not inside the repository '%s'; cleanup only removes "
				  "worktrees of this repository",
				  arg, root);
	return 0;
}

static int sub_cleanup(const char *root, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "keep-branch", optional_argument, NULL, 'k' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sl_err err = SL_ERR_INIT;
	char abs[PATH_MAX];
	int c, keep = 1, force = 0, deleted = 0;

	optind = 0;
	while ((c = getopt_long(argc, argv, "hf", opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(usage_cleanup);
		else if (c == 'f')
			force = 1;
		else if (c == 'k' && parse_bool(optarg, &keep) < 0)
			return cli_usage("worktree cleanup", "--keep-branch takes true or false");
		else if (c != 'k')
			return cli_usage("worktree cleanup", "unknown option");
	}
	if (optind != argc - 1)
		return cli_usage("worktree cleanup", "expected one PATH");
	if (cleanup_path(root, argv[optind], abs, &err) < 0 ||
	    worktree_remove(root, abs, NULL, force, !keep, &deleted, &err) < 0)
		return failure(&err);
	return success(json_pack("{s:b, s:b, s:s}", "removed", 1, "branchDeleted", deleted, "path",
				 abs));
}

static int sub_create(const char *root, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "prefix", required_argument, NULL, 'p' },
		{ "base", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sl_err err = SL_ERR_INIT;
	const char *prefix = "quick-build", *base = "HEAD";
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
		else
			return cli_usage("worktree create", "unknown option");
	}
	if (optind != argc - 1)
		return cli_usage("worktree create", "expected one SLUG");
	if (!worktree_slug(argv[optind], slug, sizeof(slug)))
		return cli_usage("worktree create", "'%s' has nothing to make a slug of",
				 argv[optind]);
	if (do_create(root, slug, prefix, base, &err) < 0)
		return failure(&err);
	return CLI_OK;
}

static json_t *status_data(git_repository *repo, struct sl_err *err)
{
	git_repository *main = NULL;
	git_reference *head = NULL;
	char *path = NULL, *main_path = NULL;
	json_t *data = NULL;
	int rc;

	if (!git_repository_is_worktree(repo))
		return json_pack("{s:b}", "isWorktree", 0);
	if ((rc = git_repository_open(&main, git_repository_commondir(repo))) < 0 ||
	    !git_repository_workdir(main)) {
		sl_err_git(err, rc, "cannot open the main repository of this worktree");
		goto out;
	}
	path = sl_path_strip_slash(git_repository_workdir(repo));
	main_path = sl_path_strip_slash(git_repository_workdir(main));
	git_repository_head(&head, repo);
	data = json_pack("{s:b, s:s, s:s?, s:s}", "isWorktree", 1, "path", path, "branch",
			 head && git_reference_is_branch(head) ? git_reference_shorthand(head) : NULL,
			 "mainRepoPath", main_path);
out:
	git_reference_free(head);
	free(path);
	free(main_path);
	git_repository_free(main);
	return data;
}

static int sub_status(struct cli *cli, int argc, char **argv)
{
	struct sl_err err = SL_ERR_INIT;
	git_repository *repo = NULL;
	char *dir;
	json_t *data = NULL;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return cli_help(usage_status);
	if (argc > 1)
		return cli_usage("worktree status", "takes no arguments");
	if (!(dir = cli_repo_dir(cli)))
		sl_err_set(&err, SL_ENOTFOUND, "cannot use directory '%s'", cli->dir ? cli->dir : ".");
	else if (git_repository_open_ext(&repo, dir, 0, NULL) < 0)
		sl_err_set(&err, SL_ENOTFOUND, "'%s' is not inside a git repository", dir);
	else
		data = status_data(repo, &err);
	git_repository_free(repo);
	free(dir);
	return data ? success(data) : failure(&err);
}

int cmd_worktree(struct cli *cli, int argc, char **argv)
{
	struct sl_err err = SL_ERR_INIT;
	struct sl_repo repo = SL_REPO_INIT;
	int rc;

	static char progname[64];

	if (argc < 2)
		return cli_usage("worktree", "expected create, cleanup or status");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cli_help(usage_main);
	/* getopt names the subcommand in its messages */
	snprintf(progname, sizeof(progname), "sluice worktree %s", argv[1]);
	if (!strcmp(argv[1], "status") || !strcmp(argv[1], "create") || !strcmp(argv[1], "cleanup"))
		argv[1] = progname;
	if (!strcmp(progname, "sluice worktree status"))
		return sub_status(cli, argc - 1, argv + 1);
	if (argv[1] != progname)
		return cli_usage("worktree", "unknown subcommand '%s'", argv[1]);
	if (argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")))
		return cli_help(!strcmp(progname, "sluice worktree create") ? usage_create
									   : usage_cleanup);
	if (sl_repo_find(&repo, cli->dir, &err) < 0)
		return failure(&err);
	cli_take_token(cli->dir); /* git runs the filters of the shared config */
	if (!strcmp(progname, "sluice worktree create"))
		rc = sub_create(repo.root, argc - 1, argv + 1);
	else
		rc = sub_cleanup(repo.root, argc - 1, argv + 1);
	sl_repo_release(&repo);
	return rc;
}
