/* sluice merge-preview OURS THEIRS: would this merge be clean? */
#include "cli/cli.h"
#include "merge/merge.h"
#include "worktree/worktree.h"

#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define OPT_NO_VERIFY 2000
#define OPT_LIBGIT2 2001

static const char usage_text[] =
	"usage: sluice merge-preview [-C DIR] [--json] [--libgit2] OURS THEIRS\n"
	"\n"
	"Merge THEIRS into OURS as sluice's merge step does, with\n"
	"'git merge-tree --write-tree' (git's ort merge, renames and directory\n"
	"renames included), and say whether it is clean. Nothing is written but\n"
	"objects in the repository. git is the authority: the verdict, the tree\n"
	"and the conflicted paths are git's.\n"
	"\n"
	"output: 'clean' and the merged tree id, or 'conflict' and git's\n"
	"conflicted paths, one per line (the reason and git's CONFLICT messages\n"
	"go to stderr). A path git moved aside as '<path>~<side>' is shown as\n"
	"<path>.\n"
	"\n"
	"options:\n"
	"  -C DIR        the repository (default: the current directory)\n"
	"  --json        one JSON document (schema/merge-preview.schema.json)\n"
	"  --libgit2     also merge with libgit2 and show its opinion apart (a last\n"
	"                line 'libgit2: ...', or the field 'libgit2'); it never\n"
	"                changes the verdict\n"
	"  --no-verify   accepted and ignored (git is always the authority)\n"
	"\n"
	"exit status: 0 clean, 1 conflict or failure, 2 usage error.\n";

static json_t *paths_json(const struct merge_paths *p)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < p->n; i++)
		json_array_append_new(a, worktree_diff_json_text(p->v[i], strlen(p->v[i])));
	return a;
}

static json_t *oid_json(const git_oid *id)
{
	char hex[GIT_OID_HEXSZ + 1];

	return json_string(git_oid_tostr(hex, sizeof(hex), id));
}

/* git's CONFLICT lines, one string each. */
static json_t *messages_json(const struct sl_buf *b)
{
	const char *s = sl_buf_cstr(b), *nl;
	json_t *a = json_array();

	for (; a && *s; s = nl ? nl + 1 : s + strlen(s)) {
		nl = strchr(s, '\n');
		json_array_append_new(a, worktree_diff_json_text(s, nl ? (size_t)(nl - s) : strlen(s)));
	}
	return a;
}

static json_t *libgit2_json(const struct merge_result *res)
{
	return json_pack("{s:b, s:o, s:o}", "clean", res->lg_clean == 1, "tree",
			 res->lg_clean == 1 ? oid_json(&res->lg_tree) : json_null(), "conflicts",
			 paths_json(&res->lg_conflicts));
}

static int print_json(const struct merge_result *res, int libgit2)
{
	json_t *o = json_object();
	int rc;

	json_object_set_new(o, "clean", json_boolean(res->clean));
	json_object_set_new(o, "tree", oid_json(&res->tree));
	json_object_set_new(o, "conflicts", paths_json(&res->conflicts));
	json_object_set_new(o, "reason", res->clean ? json_null() : json_string(res->reason));
	json_object_set_new(o, "messages", messages_json(&res->git_messages));
	json_object_set_new(o, "ours", oid_json(&res->ours));
	json_object_set_new(o, "theirs", oid_json(&res->theirs));
	if (libgit2)
		json_object_set_new(o, "libgit2", libgit2_json(res));
	rc = json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
	json_decref(o);
	return rc ? CLI_FAIL : res->clean ? CLI_OK : CLI_FAIL;
}

/* The last line with --libgit2: libgit2's own verdict, apart from git's. */
static void print_libgit2(const struct merge_result *res)
{
	char hex[GIT_OID_HEXSZ + 1];
	size_t i;

	if (res->lg_clean == 1) {
		printf("libgit2: clean %s\n", git_oid_tostr(hex, sizeof(hex), &res->lg_tree));
		return;
	}
	printf("libgit2: conflict in %zu path%s:", res->lg_conflicts.n,
	       res->lg_conflicts.n == 1 ? "" : "s");
	for (i = 0; i < res->lg_conflicts.n; i++)
		printf(" %s", cli_esc(res->lg_conflicts.v[i]));
	printf("\n");
}

static int print_text(const struct merge_result *res, int libgit2)
{
	char hex[GIT_OID_HEXSZ + 1];
	size_t i;

	if (res->clean)
		printf("clean\n%s\n", git_oid_tostr(hex, sizeof(hex), &res->tree));
	else
		printf("conflict\n");
	for (i = 0; i < res->conflicts.n; i++)
		printf("%s\n", cli_esc(res->conflicts.v[i]));
	if (libgit2)
		print_libgit2(res);
	if (res->clean)
		return CLI_OK;
	cli_error("%s", res->reason);
	fputs(cli_esc_lines(sl_buf_cstr(&res->git_messages), 1), stderr);
	return CLI_FAIL;
}

int cmd_merge_preview(struct cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "no-verify", no_argument, NULL, OPT_NO_VERIFY },
		{ "libgit2", no_argument, NULL, OPT_LIBGIT2 },
		{ NULL, 0, NULL, 0 },
	};
	struct merge_opts mo = MERGE_OPTS_INIT;
	struct merge_result res = MERGE_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char *dir = NULL;
	int opt, rc;

	optind = 0;
	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		if (opt == 'h')
			return cli_help(usage_text);
		if (opt == OPT_LIBGIT2)
			mo.libgit2_opinion = 1;
		else if (opt != OPT_NO_VERIFY && !cli_common_opt(cli, opt, optarg))
			return cli_usage("merge-preview", "unknown option");
	}
	if (argc - optind != 2)
		return cli_usage("merge-preview", "expected two revisions, OURS and THEIRS");
	dir = cli_repo_dir(cli);
	if (!dir) {
		cli_error("cannot find the directory '%s'; check -C", cli->dir ? cli->dir : ".");
		return CLI_FAIL;
	}
	cli_take_token(dir);
	if (merge_preview(dir, argv[optind], argv[optind + 1], &mo, &res, &err))
		rc = cli_report(&err);
	else
		rc = cli->json ? print_json(&res, mo.libgit2_opinion) :
				 print_text(&res, mo.libgit2_opinion);
	merge_result_release(&res);
	free(dir);
	return rc;
}
