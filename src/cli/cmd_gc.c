/* sluice gc: remove old finished runs. */
#include "cli/cli_runner.h"
#include "runner/runner.h"
#include "system/system.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char gc_help[] =
	"usage: sluice gc [-C DIR] [--keep-last N] [--dry-run] [--force] [--json]\n"
	"\n"
	"Remove the worktrees, run/ branches and artifact folders of the oldest\n"
	"finished runs beyond the newest N finished ones (N: --keep-last, else the\n"
	"config's gc.keep_last, 20 by default). Merged runs are removed. Runs that did\n"
	"not merge (failed, rejected, abandoned) are kept unless --force; on a terminal\n"
	"gc asks before removing them. Runs in any other state are never touched.\n"
	"(Each tick already lets failed runs' worktrees go beyond the newest\n"
	"gc.keep_failed, 5, and gc.keep_failed_for, 7d; their folders and branches stay.)\n"
	"\n"
	"Each removed run leaves .system/runs/<id>.gc, a small tombstone: 'sluice show'\n"
	"says its artifacts were removed by gc and 'sluice audit' counts it as removed,\n"
	"keeping the manifest chain whole. The store keeps every run and event.\n"
	"gc reports the bytes freed and checks afterwards that what it removed is gone.\n"
	"It also empties the worktree pool (.system/pool: finished runs' worktrees kept\n"
	"for new runs, worktree.pool in the config), all but worktrees locked with\n"
	"'git worktree lock'; later runs fill it again.\n"
	"\n"
	"  --keep-last N  keep the newest N finished runs\n"
	"  --dry-run      list what would be removed, remove nothing\n"
	"  --force        remove runs that did not merge too, without asking\n"
	"  --json         {dry_run, keep_last, runs: [...], kept_unmerged, pool, bytes_freed,\n"
	"                 verified}\n";

struct gc_opts {
	int keep_last;  /* -1: from the config */
	int keep_given; /* --keep-last on the command line: the hint repeats it */
	int dry_run;
	int force;
};

/* On a terminal, ask whether the runs that did not merge may go too. */
static int ask_unmerged(const struct system_gc_plan *plan)
{
	char line[32];
	size_t i, n = 0;

	for (i = 0; i < plan->n; i++)
		if (!plan->v[i].merged) {
			fprintf(stderr, "  %s  %-18s %s\n", plan->v[i].run, plan->v[i].work_order,
				plan->v[i].state);
			n++;
		}
	if (!n)
		return 1;
	fprintf(stderr, "remove %s %zu run%s that did not merge? [y/N] ", n == 1 ? "this" : "these",
		n, n == 1 ? "" : "s");
	if (!fgets(line, sizeof(line), stdin))
		return 0;
	return line[0] == 'y' || line[0] == 'Y';
}

static int print_json(const struct gc_opts *o, const struct system_gc_plan *plan,
		      size_t kept_unmerged, int64_t freed, int verified)
{
	json_t *a = json_array(), *doc;
	size_t i;
	int rc;

	for (i = 0; i < plan->n; i++) {
		const struct system_gc_item *it = &plan->v[i];
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:I, s:b, s:s?}", "run", it->run,
						   "work_order", it->work_order, "state", it->state,
						   "bytes", (json_int_t)it->bytes, "removed",
						   it->removed, "error", it->error));
	}
	doc = json_pack("{s:b, s:i, s:o, s:I, s:{s:I, s:I, s:I, s:I, s:s?}, s:I, s:b}", "dry_run",
			o->dry_run, "keep_last", o->keep_last, "runs", a, "kept_unmerged",
			(json_int_t)kept_unmerged, "pool", "worktrees",
			(json_int_t)plan->pool_slots, "bytes", (json_int_t)plan->pool_bytes,
			"removed", (json_int_t)plan->pool_removed, "locked",
			(json_int_t)plan->pool_locked, "error", plan->pool_error, "bytes_freed",
			(json_int_t)freed, "verified", verified);
	rc = cli_print_json(doc);
	json_decref(doc);
	return rc;
}

static void print_pool(const struct gc_opts *o, const struct system_gc_plan *plan)
{
	if (!plan->pool_slots)
		return;
	if (o->dry_run)
		printf("would empty the worktree pool: %zu worktree%s, %lld bytes\n",
		       plan->pool_slots, plan->pool_slots == 1 ? "" : "s",
		       (long long)plan->pool_bytes);
	else if (plan->pool_error)
		cli_error("cannot empty the worktree pool: %s", plan->pool_error);
	else
		printf("emptied the worktree pool: %zu worktree%s removed%s\n", plan->pool_removed,
		       plan->pool_removed == 1 ? "" : "s",
		       plan->pool_locked ? ", locked ones kept ('git worktree unlock' them)" : "");
}

static int print_text(const struct gc_opts *o, const struct system_gc_plan *plan,
		      size_t kept_unmerged, int64_t freed)
{
	size_t i, removed = 0, failed = 0;
	int64_t would = 0;

	for (i = 0; i < plan->n; i++) {
		const struct system_gc_item *it = &plan->v[i];
		if (o->dry_run) {
			printf("would remove %s  %-18s %-9s %lld bytes\n", it->run, it->work_order,
			       it->state, (long long)it->bytes);
			would += it->bytes;
		} else if (it->removed) {
			printf("removed %s  %-18s %-9s %lld bytes\n", it->run, it->work_order,
			       it->state, (long long)it->bytes);
			removed++;
		} else {
			cli_error("cannot remove run '%s': %s", it->run, it->error ? it->error : "?");
			failed++;
		}
	}
	print_pool(o, plan);
	if (kept_unmerged && o->keep_given)
		printf("kept %zu run%s that did not merge; 'sluice gc --force --keep-last %d' "
		       "removes them\n", kept_unmerged, kept_unmerged == 1 ? "" : "s", o->keep_last);
	else if (kept_unmerged)
		printf("kept %zu run%s that did not merge; 'sluice gc --force' removes them\n",
		       kept_unmerged, kept_unmerged == 1 ? "" : "s");
	if (o->dry_run)
		printf("gc: would remove %zu run%s and free %lld bytes (dry run)\n", plan->n,
		       plan->n == 1 ? "" : "s", (long long)would);
	else
		printf("gc: removed %zu run%s, freed %lld bytes; verified: %s\n", removed,
		       removed == 1 ? "" : "s", (long long)freed,
		       failed ? "some runs are still there (see above)" : "nothing of them is left");
	return failed || plan->pool_error ? CLI_FAIL : CLI_OK;
}

static int gc(struct cli *cli, struct gc_opts *o)
{
	struct sl_ctx ctx = SL_CTX_INIT;
	struct system_gc_plan plan = SYSTEM_GC_PLAN_INIT;
	struct sl_err err = SL_ERR_INIT;
	size_t kept_unmerged = 0, i;
	int64_t freed = 0;
	int rc, verified = 1;

	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	if (o->keep_last < 0)
		o->keep_last = ctx.cfg->gc.keep_last;
	if (system_gc_plan(&ctx, o->keep_last, &plan, &err) != 0) {
		rc = cli_report(&err);
		goto out;
	}
	if (!o->force && (o->dry_run || cli->json || !isatty(STDIN_FILENO) || !ask_unmerged(&plan)))
		kept_unmerged = system_gc_drop_unmerged(&plan);
	if (!o->dry_run && system_gc_apply(&ctx, &plan, &freed, &err) != 0) {
		rc = cli_report(&err);
		goto out;
	}
	for (i = 0; i < plan.n; i++)
		verified &= o->dry_run || plan.v[i].removed;
	verified &= o->dry_run || !plan.pool_error;
	if (cli->json)
		rc = print_json(o, &plan, kept_unmerged, freed, verified) == CLI_OK && verified ?
			     CLI_OK : CLI_FAIL;
	else
		rc = print_text(o, &plan, kept_unmerged, freed);
out:
	system_gc_plan_release(&plan);
	runner_ctx_release(&ctx);
	return rc;
}

int cmd_gc(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS,
					      { "keep-last", required_argument, NULL, 'k' },
					      { "dry-run", no_argument, NULL, 'n' },
					      { "force", no_argument, NULL, 'f' },
					      { NULL, 0, NULL, 0 } };
	struct gc_opts o = { .keep_last = -1 };
	char *end;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(gc_help);
		else if (c == 'k') {
			long v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 0 || v > 1000000)
				return cli_usage("gc", "--keep-last wants a number, not '%s'", optarg);
			o.keep_last = (int)v;
			o.keep_given = 1;
		} else if (c == 'n')
			o.dry_run = 1;
		else if (c == 'f')
			o.force = 1;
		else if (!cli_common_opt(cli, c, optarg))
			return cli_usage("gc", "unknown option");
	}
	if (optind < argc)
		return cli_usage("gc", "unexpected argument '%s'", argv[optind]);
	return gc(cli, &o);
}
