/* sluice audit [RUN...]: verify merged runs' artifacts against their manifests and git. */
#include "cli/cli_runner.h"
#include "artifact/artifact.h"
#include "core/fs.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char audit_help[] =
	"usage: sluice audit [-C DIR] [--json] [RUN...]\n"
	"\n"
	"Verify, for every merged run (or the runs named, by id or unique prefix), that\n"
	"what was reviewed is what was merged:\n"
	"  - manifest.json lists every artifact of the run folder with its SHA-256, and\n"
	"    every hash still matches (no artifact changed, missing or added);\n"
	"  - the manifests form a chain in merge order (each holds the SHA-256 of the\n"
	"    previous merged run's manifest.json);\n"
	"  - diff.patch is the diff git computes now from the recorded base and head;\n"
	"  - the merge commit is on the target branch, its second parent is the run's\n"
	"    head, it carries the Work-Order, Sluice-Run and Reviewed-by trailers, and\n"
	"    the head's tree is the tree the reviewer approved;\n"
	"  - work_order.md holds the bytes of the work-order revision that was run;\n"
	"  - a run that landed through the merge train has train.json, a green gate\n"
	"    record of exactly its merge commit: its tree, its first parent (base) and\n"
	"    second parent (head), every gate passed. A run that landed before the\n"
	"    train existed is a note ('landed before the merge train'), not a failure.\n"
	"Without RUNs, also the other way, on the target's first-parent line:\n"
	"  - every merge carrying Sluice-Run: is that run's landing in the store, and\n"
	"    the run's manifest is in the chain;\n"
	"  - no commit there (nor one a merge there brings in) came from a run that\n"
	"    sluice did not land, unless 'sluice accept-target' accepted it;\n"
	"  - a merge carrying Sluice-Run: that is not the run's landing has no gate\n"
	"    record: a finding (with the gates the train saw red, if any);\n"
	"  - a person's commit there (no Sluice-Run:) is a note, never a failure.\n"
	"\n"
	"Prints one line per finding, 'RUN: what is wrong, where', then one per note,\n"
	"'note: RUN: what, COMMIT', and exits 1 on any finding; prints a summary and\n"
	"exits 0 when everything holds. Runs whose folder 'sluice gc' removed are counted as\n"
	"removed; their git checks still run. It only reads. See docs/audit.md.\n"
	"\n"
	"  --json  {\"ok\", \"runs\", \"artifacts\", \"manifests\", \"removed\", \"gated\",\n"
	"          \"findings\": [...], \"notes\": [...]} (schema/audit.schema.json)\n";

/*
 * Seal a merged run that has no manifest, under the repository lock: said
 * on stderr when a tick holds it, then waited for (10 minutes at most).
 */
static int seal(struct cli *cli, const char *run)
{
	struct sl_ctx ctx = SL_CTX_INIT;
	struct sl_err err = SL_ERR_INIT;
	int rc, error;

	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	if ((error = runner_seal(&ctx, run, 0, &err)) == SL_ELOCKED) {
		fprintf(stderr, "sluice: the repository lock (%s) is held by another sluice "
			"process (a tick merging); waiting for it\n", ctx.repo.lock_path);
		sl_err_clear(&err);
		error = runner_seal(&ctx, run, 10 * 60 * 1000, &err);
	}
	if (error)
		rc = cli_report(&err);
	else
		printf("sealed %s\n", run);
	runner_ctx_release(&ctx);
	return rc;
}

static int print_json(const struct artifact_audit_result *res)
{
	json_t *a = json_array(), *notes = json_array(), *doc;
	size_t i;
	int rc;

	for (i = 0; i < res->n; i++)
		json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "run", res->v[i].run, "what",
						   res->v[i].what, "where", res->v[i].where));
	for (i = 0; i < res->nnotes; i++)
		json_array_append_new(notes, json_pack("{s:s, s:s, s:s, s:s}", "kind",
						       res->notes[i].kind, "run", res->notes[i].run,
						       "commit", res->notes[i].commit, "what",
						       res->notes[i].what));
	doc = json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:o, s:o}", "ok", res->n == 0, "runs",
			(json_int_t)res->runs, "artifacts", (json_int_t)res->artifacts, "manifests",
			(json_int_t)res->manifests, "removed", (json_int_t)res->removed, "gated",
			(json_int_t)res->gated, "findings", a, "notes", notes);
	rc = cli_print_json(doc);
	json_decref(doc);
	return rc;
}

/* The notes, and how many of each kind there were. */
static void print_notes(const struct artifact_audit_result *res, size_t *before, size_t *person)
{
	size_t i;

	*before = *person = 0;
	for (i = 0; i < res->nnotes; i++) {
		printf("note: %s: %s, %s\n", cli_esc(res->notes[i].run), cli_esc(res->notes[i].what),
		       cli_esc(res->notes[i].commit));
		*before += !strcmp(res->notes[i].kind, "before_train");
		*person += !strcmp(res->notes[i].kind, "person");
	}
}

static int print_text(const struct artifact_audit_result *res)
{
	size_t i, before, person;

	for (i = 0; i < res->n; i++)
		printf("%s: %s, %s\n", cli_esc(res->v[i].run), cli_esc(res->v[i].what),
		       cli_esc(res->v[i].where));
	print_notes(res, &before, &person);
	if (res->n) {
		fprintf(stderr, "sluice: audit found %zu problem%s in %zu merged run%s; see "
			"docs/audit.md\n", res->n, res->n == 1 ? "" : "s", res->runs,
			res->runs == 1 ? "" : "s");
		return CLI_FAIL;
	}
	printf("audit: %zu merged run%s, %zu artifact%s, chain of %zu manifest%s", res->runs,
	       res->runs == 1 ? "" : "s", res->artifacts, res->artifacts == 1 ? "" : "s",
	       res->manifests, res->manifests == 1 ? "" : "s");
	if (res->removed)
		printf(" (%zu removed by gc)", res->removed);
	printf(": all hold\n");
	printf("audit: %zu landing%s with a green gate record, %zu landed before the merge train, "
	       "%zu commit%s by a person\n", res->gated, res->gated == 1 ? "" : "s", before, person,
	       person == 1 ? "" : "s");
	return CLI_OK;
}

int cmd_audit(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS,
					      { "write-manifest", required_argument, NULL, 'W' },
					      { NULL, 0, NULL, 0 } };
	struct artifact_audit_result res = ARTIFACT_AUDIT_RESULT_INIT;
	struct sl_ctx ctx = SL_CTX_INIT;
	struct sl_err err = SL_ERR_INIT;
	const char *seal_run = NULL;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(audit_help);
		else if (c == 'W')
			seal_run = optarg;
		else if (!cli_common_opt(cli, c, optarg))
			return cli_usage("audit", "unknown option");
	}
	if (seal_run) /* hidden: seal a merged run that has no manifest (runs of older builds, tests) */
		return seal(cli, seal_run);
	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	if (artifact_audit(&ctx, (const char *const *)argv + optind, (size_t)(argc - optind), &res,
			 &err) != 0)
		rc = cli_report(&err);
	else if (cli->json)
		rc = print_json(&res) == CLI_OK && res.n == 0 ? CLI_OK : CLI_FAIL;
	else
		rc = print_text(&res);
	artifact_audit_result_release(&res);
	runner_ctx_release(&ctx);
	return rc;
}
