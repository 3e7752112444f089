/* sluice merge-preview OURS THEIRS: would this merge be clean? */
#include "cli/cli.h"
#include "merge/merge.h"

#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define OPT_NO_VERIFY 2000

static const char usage_text[] =
	"usage: sluice merge-preview [-C DIR] [--json] [--no-verify] OURS THEIRS\n"
	"\n"
	"Merge THEIRS into OURS in memory, as sluice's merge step does, and say\n"
	"whether it is clean. Nothing is written but objects in the repository.\n"
	"\n"
	"The merge is computed by libgit2 and cross-checked with\n"
	"'git merge-tree --write-tree'; it is clean only when both say so and\n"
	"agree on the tree. Conflicted paths are the union of the ancestor, ours\n"
	"and theirs paths of every conflict, and git's conflicted paths.\n"
	"\n"
	"output: 'clean' and the merged tree id, or 'conflict' and the conflicted\n"
	"paths, one per line (the reason goes to stderr).\n"
	"\n"
	"options:\n"
	"  -C DIR        the repository (default: the current directory)\n"
	"  --json        one JSON document (schema/merge-preview.schema.json)\n"
	"  --no-verify   libgit2 alone, without the git merge-tree cross-check\n"
	"\n"
	"exit status: 0 clean, 1 conflict or failure, 2 usage error.\n";

static json_t *paths_json(const struct merge_paths *p)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < p->n; i++)
		json_array_append_new(a, json_string(p->v[i]));
	return a;
}

static json_t *oid_json(const git_oid *id)
{
	char hex[GIT_OID_HEXSZ + 1];

	return json_string(git_oid_tostr(hex, sizeof(hex), id));
}

static int print_json(const struct merge_result *res, int verify)
{
	json_t *o = json_object();
	int rc;

	json_object_set_new(o, "clean", json_boolean(res->clean));
	json_object_set_new(o, "tree", res->clean ? oid_json(&res->tree) : json_null());
	json_object_set_new(o, "conflicts", paths_json(&res->conflicts));
	json_object_set_new(o, "reason", res->clean ? json_null() : json_string(res->reason));
	json_object_set_new(o, "ours", oid_json(&res->ours));
	json_object_set_new(o, "theirs", oid_json(&res->theirs));
	json_object_set_new(o, "verified", json_boolean(verify));
	json_object_set_new(o, "libgit2Clean", json_boolean(res->lg_clean));
	json_object_set_new(o, "gitClean", verify ? json_boolean(res->git_clean == 1) : json_null());
	json_object_set_new(o, "gitConflicts", verify ? paths_json(&res->git_conflicts) : json_null());
	rc = json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
	json_decref(o);
	return rc ? CLI_FAIL : res->clean ? CLI_OK : CLI_FAIL;
}

static int print_text(const struct merge_result *res)
{
	char hex[GIT_OID_HEXSZ + 1];
	size_t i;

	if (res->clean) {
		printf("clean\n%s\n", git_oid_tostr(hex, sizeof(hex), &res->tree));
		return CLI_OK;
	}
	printf("conflict\n");
	for (i = 0; i < res->conflicts.n; i++)
		printf("%s\n", cli_esc(res->conflicts.v[i]));
	cli_error("%s", res->reason);
	return CLI_FAIL;
}

int cmd_merge_preview(struct cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "no-verify", no_argument, NULL, OPT_NO_VERIFY },
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
		if (opt == OPT_NO_VERIFY)
			mo.verify = 0;
		else if (!cli_common_opt(cli, opt, optarg))
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
		rc = cli->json ? print_json(&res, mo.verify) : print_text(&res);
	merge_result_release(&res);
	free(dir);
	return rc;
}
