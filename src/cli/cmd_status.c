/* sluice status [RUN|WO-ID]: a one-screen summary. */
#include "cli/cli_runner.h"
#include "artifact/artifact.h"
#include "queue/queue.h"
#include "runner/runner.h"
#include "budget/budget.h"
#include "system/system.h"
#include "target/target.h"
#include "train/train.h"
#include "core/time.h"
#include "store/store.h"

#include <getopt.h>
#include <string.h>
#include <time.h>

static const char status_help[] =
	"usage: sluice status [-C DIR] [--json] [RUN|WO-ID]\n"
	"\n"
	"A one-screen summary: work orders by state, runs in flight with their state,\n"
	"elapsed time and reason, and the runs that need a person (awaiting_review,\n"
	"merge_conflict) with what to type next. With a work-order id: that work\n"
	"order's runs; with a run (its id, a unique prefix, its branch or its branch's\n"
	"suffix): just that run.\n"
	"The summary ends with the merge gates' flake rate (of the trees each ran on, those\n"
	"it both passed and failed: merge.rerun_failed runs a red merge gate again) and\n"
	"what .system/ takes on disk, its worktrees apart (one walk, bounded).\n"
	"\n"
	"When the target branch carries a commit from a run that sluice did not land (an\n"
	"unreviewed landing: no run lands meanwhile), the summary starts with it and\n"
	"what to do: reset the target to before it, or 'sluice accept-target COMMIT'.\n"
	"A frozen target (sluice freeze, merge.freeze) is said next, with its reason.\n";

static void print_run(const struct store_run *r)
{
	char el[32];

	cli_elapsed(el, sizeof(el), r->created_ms, r->finished_ms);
	printf("  %-24s %-16s %-15s %8s  %s\n", r->id, cli_esc(r->work_order_id),
	       run_state_name(r->state), el, cli_esc(r->reason));
}

static int wo_counts(struct sl_ctx *ctx, json_t *counts, struct sl_err *err)
{
	struct queue_plan plan = QUEUE_PLAN_INIT;
	struct queue_plan_opts po = QUEUE_PLAN_OPTS_INIT;
	struct store_inbox_error *errs = NULL;
	size_t i, nerrs = 0;
	int error;

	po.allow_overlap = ctx->cfg->queue.allow_overlap;
	po.jobs = ctx->cfg->queue.jobs;
	if ((error = queue_ingest(ctx->st, ctx->repo.root, ctx->cfg->queue.inbox, NULL, err)) != 0 ||
	    (error = queue_plan(&plan, ctx->st, &po, err)) != 0)
		return error;
	for (i = 0; i < plan.n; i++) {
		json_t *c = json_object_get(counts, plan.items[i].state);
		json_object_set_new(counts, plan.items[i].state,
				    json_integer((c ? json_integer_value(c) : 0) + 1));
	}
	queue_plan_release(&plan);
	/* the files that did not parse are invalid work orders too, though the plan has no row */
	if ((error = store_inbox_errors_list(ctx->st, &errs, &nerrs, err)) != 0)
		return error;
	if (nerrs) {
		json_t *c = json_object_get(counts, wo_state_name(WO_INVALID));
		json_object_set_new(counts, wo_state_name(WO_INVALID),
				    json_integer((c ? json_integer_value(c) : 0) + (json_int_t)nerrs));
	}
	store_inbox_errors_free(errs, nerrs);
	return 0;
}

/* A work order's runs, newest first (status WO-ID): n is 0 when it has none. */
static int print_runs(struct cli *cli, struct store_run *runs, size_t n)
{
	json_t *a;
	size_t i;
	int rc;

	if (!cli->json) {
		for (i = 0; i < n; i++)
			print_run(&runs[i]);
		return CLI_OK;
	}
	a = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(a, store_run_json(&runs[i], 0));
	rc = cli_print_json(a);
	json_decref(a);
	return rc;
}

/* A work order's runs when NAME is one with runs; else the run NAME names (store_run_get). */
static int one(struct cli *cli, struct sl_ctx *ctx, const char *name)
{
	struct store_run r, *runs = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0;
	int rc = CLI_OK;
	json_t *j;

	if (store_runs_list(ctx->st, RUN_STATES_ALL, name, &runs, &n, &err) != 0)
		return cli_report(&err);
	if (n) {
		rc = print_runs(cli, runs, n);
		store_runs_free(runs, n);
		return rc;
	}
	if (store_run_get(ctx->st, name, &r, &err) != 0)
		return cli_report(&err);
	if (cli->json) {
		j = store_run_json(&r, 0);
		rc = cli_print_json(j);
		json_decref(j);
	} else {
		print_run(&r);
	}
	store_run_release(&r);
	return rc;
}

/* The target's unreviewed landing, if any (read only): JSON null or {commit, run, count}. */
static json_t *target_alert(struct sl_ctx *ctx, struct target_alert *a)
{
	struct sl_err err = SL_ERR_INIT;
	int rc = target_watch(ctx, NULL, 0, a, &err);

	if (rc < 0) {
		cli_error("cannot check the target '%s': %s", ctx->cfg->target, err.msg);
		return json_null();
	}
	if (rc == 0)
		return json_null();
	return json_pack("{s:s, s:s?, s:I}", "commit", a->commit, "run", a->run[0] ? a->run : NULL,
			 "count", (json_int_t)a->count);
}

static void print_alert(struct sl_ctx *ctx, const struct target_alert *a)
{
	printf("target %s: UNREVIEWED LANDING: it carries commit %s from run %s (%zu unreviewed "
	       "commit%s) that sluice did not land; no run lands\n", ctx->cfg->target, a->commit,
	       a->run[0] ? a->run : "(unknown)", a->count, a->count == 1 ? "" : "s");
	printf("    next: reset %s to before it (git reset --keep / git update-ref), or keep it: "
	       "sluice accept-target %s\n", ctx->cfg->target, a->commit);
}

/* What a person types next for a run awaiting review. */
static void print_review_next(const char *id)
{
	printf("    next: sluice show %s (the diff: sluice diff %s); then sluice approve %s, sluice "
	       "request-changes %s -m TEXT or sluice reject %s -m TEXT\n", id, id, id, id, id);
}

/* 1536 -> "1.5 KiB" (out: 32 bytes). */
static void human_size(char *out, size_t n, int64_t b)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	int i = -1;

	while (v >= 1024 && i < 3)
		v /= 1024, i++;
	if (i < 0)
		snprintf(out, n, "%lld bytes", (long long)b);
	else
		snprintf(out, n, "%.1f %s", v, unit[i]);
}

/* What .system/ takes (system_disk_usage()) as status --json's "disk". */
static json_t *disk_json(struct sl_ctx *ctx)
{
	struct system_disk d;

	system_disk_usage(ctx, &d);
	return json_pack("{s:I, s:I, s:b}", "system_bytes", (json_int_t)d.bytes, "worktree_bytes",
			 (json_int_t)d.worktree_bytes, "complete", d.complete);
}

/* The same, the summary's last line. */
static void print_disk(struct sl_ctx *ctx)
{
	struct system_disk d;
	char all[32], wt[32];

	system_disk_usage(ctx, &d);
	human_size(all, sizeof(all), d.bytes);
	human_size(wt, sizeof(wt), d.worktree_bytes);
	printf("disk: .system/ %s%s, worktrees %s (gc.keep_failed bounds failed runs'; sluice gc "
	       "removes old runs)\n", d.complete ? "" : "at least ", all, wt);
}

/* The merge gates' flake rate (artifact_flakes_json()), one line; nothing before any ran. */
static void print_flakes(struct sl_ctx *ctx)
{
	json_t *flakes = artifact_flakes_json(ctx), *g;
	char words[256];
	size_t i;

	if (json_array_size(flakes)) {
		printf("merge gates:");
		json_array_foreach(flakes, i, g) {
			artifact_flake_words(g, words, sizeof(words));
			printf("%s %s", i ? "," : "", words);
		}
		printf("\n");
	}
	json_decref(flakes);
}

/*
 * Today's and this month's spend (UTC; docs/budgets.md) and the budget that
 * holds new work back: {today_usd, month_usd, estimate, budget}, NULL on error.
 */
static json_t *spend_json(struct sl_ctx *ctx, int64_t *month_rows)
{
	struct store_spend day, month;
	struct sl_err err = SL_ERR_INIT;
	char why[320];
	int held;

	if (budget_spend(ctx->st, sl_now_ms(), &day, &month, &err) != 0)
		return NULL;
	held = budget_held(ctx->cfg, &day, &month, why, sizeof(why));
	*month_rows = month.rows;
	return json_pack("{s:f, s:f, s:b, s:o}", "today_usd", day.usd, "month_usd", month.usd,
			 "estimate", day.estimate || month.estimate, "budget",
			 held ? json_string(why) : json_null());
}

/* The spend line, once the month recorded any usage, and the budget's hold. */
static void print_spend(struct sl_ctx *ctx)
{
	int64_t rows = 0;
	json_t *j = spend_json(ctx, &rows);
	const char *est;

	if (!j)
		return;
	est = json_is_true(json_object_get(j, "estimate")) ? " (estimate)" : "";
	if (rows)
		printf("spend: today $%.2f, this month $%.2f%s (sluice cost)\n",
		       json_real_value(json_object_get(j, "today_usd")),
		       json_real_value(json_object_get(j, "month_usd")), est);
	if (json_is_string(json_object_get(j, "budget")))
		printf("budget: %s\n", json_string_value(json_object_get(j, "budget")));
	json_decref(j);
}

/* The runs that need a person, each with what to type next. */
static void print_people(const struct store_run *runs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!run_state_needs_person(runs[i].state))
			continue;
		print_run(&runs[i]);
		if (runs[i].state == RUN_AWAITING_REVIEW)
			print_review_next(runs[i].id);
		else
			printf("    next: sluice show %s; resolve in .system/runs/%s/worktree, then sluice "
			       "retry %s (or sluice abandon %s)\n",
			       runs[i].id, runs[i].id, runs[i].id, runs[i].id);
	}
}

/* The revert the watch made of landing `culprit` and its work order's state ("" when none). */
static void revert_of(struct sl_ctx *ctx, const char *culprit, char wo[80], char state[32])
{
	struct store_watch_revert *v = NULL;
	struct store_wo w = STORE_WO_INIT;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0;

	if (store_watch_revert_list(ctx->st, ctx->target_ref, culprit, &v, &n, &err) == 0 && n &&
	    !strcmp(v[0].culprit, culprit)) {
		snprintf(wo, 80, "%s", v[0].revert_wo);
		if (store_wo_get(ctx->st, v[0].revert_wo, &w, &err) == 0 && w.state)
			snprintf(state, 32, "%s", w.state);
	}
	sl_err_clear(&err);
	store_wo_release(&w);
	store_watch_reverts_free(v, n);
}

/*
 * The newest result of each watch gate on the target's tip (docs/watch.md):
 * [{gate, verdict (green, red, flaky, never), commit, at, culprit,
 * culprit_run}]; an empty array without watch gates.
 */
static json_t *watch_json(struct sl_ctx *ctx)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < ctx->cfg->watch.ngates; i++) {
		const char *name = ctx->cfg->watch.gates[i].name;
		struct store_watch_row r;
		struct sl_err err = SL_ERR_INIT;
		char at[64] = "";
		int found = store_watch_latest(ctx->st, ctx->target_ref, name, &r, &err) == 0;

		char rwo[80] = "", rstate[32] = "";

		if (found)
			sl_time_iso(at, sizeof(at), r.finished_ms);
		if (found && r.culprit)
			revert_of(ctx, r.culprit, rwo, rstate);
		json_array_append_new(
		        a, json_pack("{s:s, s:s, s:s?, s:s?, s:s?, s:s?, s:s?, s:s?}", "gate", name,
				     "verdict",
				     !found ? "never" : r.flaky ? "flaky" : r.passed ? "green" : "red",
				     "commit", r.commit, "at", found ? at : NULL, "culprit",
				     r.culprit, "culprit_run", r.culprit_run, "revert_work_order",
				     rwo[0] ? rwo : NULL, "revert_state", rstate[0] ? rstate : NULL));
		store_watch_row_release(&r);
	}
	return a;
}

/* The watch gates' newest results: one line, once watch.gates has any. */
static void print_watch(struct sl_ctx *ctx)
{
	json_t *a = watch_json(ctx), *v;
	size_t i;

	if (!json_array_size(a)) {
		json_decref(a);
		return;
	}
	printf("watch:");
	json_array_foreach(a, i, v) {
		const char *verdict = json_string_value(json_object_get(v, "verdict"));
		const char *commit = json_string_value(json_object_get(v, "commit"));
		const char *run = json_string_value(json_object_get(v, "culprit_run"));
		const char *culprit = json_string_value(json_object_get(v, "culprit"));
		const char *rwo = json_string_value(json_object_get(v, "revert_work_order"));
		const char *rstate = json_string_value(json_object_get(v, "revert_state"));

		printf("%s %s %s", i ? "," : "", json_string_value(json_object_get(v, "gate")),
		       verdict);
		if (commit)
			printf(" on %.12s", commit);
		if (culprit)
			printf(" (first red %.12s: %s%s)", culprit, run ? "run " : "a person's commit",
			       run ? run : "");
		if (rwo)
			printf(" (reverted by %s: %s)", rwo, rstate ? rstate : "not read yet");
	}
	printf(" (sluice watch)\n");
	json_decref(a);
}

/* A frozen target (sluice freeze, merge.freeze): one line. */
static void print_frozen(struct sl_ctx *ctx, const struct train_freeze *f)
{
	char line[512];

	if (!f->frozen)
		return;
	train_freeze_line(ctx, f, line, sizeof(line));
	printf("%s\n", line);
}

/* status --json without an argument (schema/status.schema.json). */
static int print_summary_json(struct sl_ctx *ctx, json_t *counts, json_t *flight,
			      json_t *people, json_t *unreviewed,
			      const struct train_freeze *frozen)
{
	json_t *invalid = NULL, *spend, *j;
	int64_t rows;
	int rc;

	cli_invalid_work_orders(ctx, NULL, NULL, &invalid);
	spend = spend_json(ctx, &rows);
	j = json_pack("{s:O, s:O, s:O, s:{s:s, s:O, s:o}, s:o, s:o, s:o, s:o, s:o}",
		      "work_orders", counts, "in_flight", flight, "needs_person", people, "target",
		      "name", ctx->cfg->target, "unreviewed", unreviewed, "frozen",
		      train_freeze_json(frozen), "disk", disk_json(ctx), "invalid", invalid,
		      "merge_gates", artifact_flakes_json(ctx), "spend", spend ? spend : json_null(),
		      "watch", watch_json(ctx));
	rc = cli_print_json(j);
	json_decref(j);
	return rc;
}

static int summary(struct cli *cli, struct sl_ctx *ctx)
{
	struct target_alert alert;
	json_t *unreviewed = target_alert(ctx, &alert), *v;
	struct store_run *runs = NULL;
	struct sl_err err = SL_ERR_INIT;
	json_t *counts = json_object(), *flight = json_array(), *people = json_array();
	const char *k;
	size_t n = 0, i;
	int rc = CLI_OK;
	struct train_freeze frozen;

	train_frozen(ctx, sl_now_ms(), &frozen);
	if (wo_counts(ctx, counts, &err) != 0 ||
	    store_runs_list(ctx->st, RUN_STATES_ALL, NULL, &runs, &n, &err) != 0) {
		rc = cli_report(&err);
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (run_state_needs_person(runs[i].state))
			json_array_append_new(people, store_run_json(&runs[i], 0));
		else if (!run_state_is_final(runs[i].state))
			json_array_append_new(flight, store_run_json(&runs[i], 0));
	}
	if (cli->json) {
		rc = print_summary_json(ctx, counts, flight, people, unreviewed, &frozen);
		goto out;
	}
	if (!json_is_null(unreviewed))
		print_alert(ctx, &alert);
	print_frozen(ctx, &frozen);
	printf("work orders:");
	if (!json_object_size(counts))
		printf(" none (drop *.md files into %s/)", ctx->cfg->queue.inbox);
	json_object_foreach(counts, k, v)
		printf(" %s %lld", k, (long long)json_integer_value(v));
	printf("\n");
	cli_invalid_work_orders(ctx, stdout, "", NULL);
	printf("runs in flight: %zu\n", json_array_size(flight));
	for (i = 0; i < n; i++)
		if (!run_state_needs_person(runs[i].state) && !run_state_is_final(runs[i].state))
			print_run(&runs[i]);
	printf("needs a person: %zu\n", json_array_size(people));
	print_people(runs, n);
	print_flakes(ctx);
	print_spend(ctx);
	print_watch(ctx);
	print_disk(ctx);
out:
	json_decref(unreviewed);
	json_decref(counts);
	json_decref(flight);
	json_decref(people);
	store_runs_free(runs, n);
	return rc;
}

int cmd_status(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	struct sl_ctx ctx = SL_CTX_INIT;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(status_help);
		if (!cli_common_opt(cli, c, optarg))
			return cli_usage("status", "unknown option");
	}
	if (argc - optind > 1)
		return cli_usage("status", "name at most one run or work order");
	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	rc = optind < argc ? one(cli, &ctx, argv[optind]) : summary(cli, &ctx);
	runner_ctx_release(&ctx);
	return rc;
}
