/* sluice watch [--gate NAME]: the watch gates on the target's tip, and the bisection of a red one. */
#include "cli/cli_runner.h"
#include "runner/runner.h"
#include "store/store.h"
#include "watch/watch.h"
#include "notify/notify.h"
#include "core/config.h"
#include "core/ctx.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char watch_help[] =
	"usage: sluice watch [-C DIR] [--gate NAME] [--json]\n"
	"\n"
	"Run the watch gates (watch.gates in .system/config.yaml: the slow suites kept\n"
	"out of the merge train) on the target's tip, each in a checkout of its own\n"
	"under .system/watch/, for cron. A red gate runs again on the same commit\n"
	"before it is believed: red then green is flaky and goes no further. Red twice,\n"
	"the first-parent commits since the gate's last green result are bisected,\n"
	"each tested (and a red one again), to name the first red one: a run's landing\n"
	"(told in its 'sluice log') or a person's commit. Every run of a gate is\n"
	"recorded with its commit; its output is under .system/watch/logs/.\n"
	"\n"
	"  --gate NAME   only this watch gate\n"
	"  --json        {target, gates: [{gate, tip, verdict, log, last_green, landings,\n"
	"                tests, runs, culprit, culprit_run, culprit_work_order,\n"
	"                culprit_subject, revert_work_order, fix_work_order,\n"
	"                revert_new, revert_pending}]}\n"
	"\n"
	"A run's landing named as the culprit is reverted through the train: the work\n"
	"order <WO>-revert goes into the inbox (sluice builds it as the exact inverse of\n"
	"the landing; watch.revert_review says who approves it; its car runs the merge\n"
	"gates and this watch gate), and <WO>-fix, depending on it, carries the work\n"
	"order, its diff, the failing output and the bisection for the agent to try\n"
	"again. A landing is never reverted twice; a person's commit is only named.\n"
	"While a revert is on its way, a red gate is not bisected again. With\n"
	"watch.every: N, a tick watches by itself after N landings.\n"
	"\n"
	"exit status: 0 when every gate is green (or flaky), 1 when one is red or could\n"
	"not run (the message says which), 2 on a usage error.\n";

static const char *verdict_name(enum sl_watch_verdict v)
{
	return v == SL_WATCH_RED ? "red" : v == SL_WATCH_FLAKY ? "flaky" : "green";
}

/* The work order of the culprit's run, into buf ("" when none). */
static const char *wo_of(struct sl_ctx *ctx, const char *run_id, char *buf, size_t n)
{
	struct sl_err ignored = SL_ERR_INIT;
	struct store_run run;

	buf[0] = '\0';
	memset(&run, 0, sizeof(run));
	if (run_id && store_run_get(ctx->st, run_id, &run, &ignored) == 0)
		snprintf(buf, n, "%s", run.work_order_id);
	store_run_release(&run);
	return buf;
}

/* The culprit named, and what came of it: a revert made now, before, or on its way. */
static void print_culprit(struct sl_ctx *ctx, const struct watch_report *r)
{
	char wo[256];

	if (!r->culprit_run) {
		printf("  first red: %.12s, a person's commit (no run landed it): %s\n", r->culprit,
		       r->culprit_subject ? r->culprit_subject : "");
		printf("  a person's commit is named, never reverted\n");
		return;
	}
	printf("  first red: %.12s, the landing of run %s (work order %s): %s\n", r->culprit,
	       r->culprit_run, wo_of(ctx, r->culprit_run, wo, sizeof(wo)),
	       r->culprit_subject ? r->culprit_subject : "");
	if (r->revert_wo && r->revert_new)
		printf("  revert: work order %s is in the inbox (reviewed per watch.revert_review: "
		       "%s; lands through the train); %s does the work again after it\n",
		       r->revert_wo, ctx->cfg->watch.revert_auto ? "auto" : "person", r->fix_wo);
	else if (r->revert_wo && !r->revert_pending)
		printf("  revert: made before, work order %s; a landing is never reverted twice\n",
		       r->revert_wo);
	else if (r->not_reverted)
		printf("  not reverted: %s\n", r->not_reverted);
}

static void print_report(struct sl_ctx *ctx, const struct sl_gate *g,
			 const struct watch_report *r)
{
	printf("watch %s: %s on %.12s (output: .system/%s)\n", g->name, verdict_name(r->verdict),
	       r->tip, r->log);
	if (r->verdict == SL_WATCH_FLAKY)
		printf("  red, then green on the same commit: flaky, not bisected\n");
	if (r->verdict != SL_WATCH_RED)
		return;
	if (r->revert_pending) {
		printf("  not bisected again: the revert of the culprit named before, work order "
		       "%s, has not landed yet ('sluice queue --explain')\n", r->revert_wo);
	} else if (!r->last_green[0]) {
		printf("  never green before: nothing to bisect\n");
		return;
	} else {
		printf("  bisected the %zu commit%s since the green %.12s: %zu tested, %zu run%s of "
		       "the gate\n", r->landings, r->landings == 1 ? "" : "s", r->last_green,
		       r->tests, r->runs, r->runs == 1 ? "" : "s");
	}
	if (r->culprit[0])
		print_culprit(ctx, r);
}

static json_t *report_json(struct sl_ctx *ctx, const struct sl_gate *g,
			   const struct watch_report *r)
{
	char wo[256];

	return json_pack("{s:s, s:s, s:s, s:s, s:s?, s:I, s:I, s:I, s:s?, s:s?, s:s?, s:s?, "
			 "s:s?, s:s?, s:b, s:b}",
			 "gate", g->name, "tip", r->tip, "verdict", verdict_name(r->verdict), "log",
			 r->log, "last_green", r->last_green[0] ? r->last_green : NULL, "landings",
			 (json_int_t)r->landings, "tests", (json_int_t)r->tests, "runs",
			 (json_int_t)r->runs, "culprit",
			 r->culprit[0] ? r->culprit : NULL, "culprit_run", r->culprit_run,
			 "culprit_work_order",
			 r->culprit_run ? wo_of(ctx, r->culprit_run, wo, sizeof(wo)) : NULL,
			 "culprit_subject", r->culprit[0] ? r->culprit_subject : NULL,
			 "revert_work_order", r->revert_wo, "fix_work_order", r->fix_wo,
			 "revert_new", r->revert_new, "revert_pending", r->revert_pending);
}

int cli_watch_one(struct cli *cli, struct sl_ctx *ctx, const struct sl_gate *g, json_t *gates,
		  int *red)
{
	struct sl_err err = SL_ERR_INIT;
	struct watch_report r;
	int error;

	*red = 0;
	if ((error = watch_gate(ctx, g, &r, &err)) != 0) {
		fprintf(stderr, "sluice watch: gate '%s': %s\n", g->name, err.msg);
	} else {
		if (cli->json)
			json_array_append_new(gates, report_json(ctx, g, &r));
		else
			print_report(ctx, g, &r);
		*red = r.verdict == SL_WATCH_RED;
	}
	watch_report_release(&r);
	return error;
}

void cli_watch_notify(struct sl_ctx *ctx)
{
	struct sl_err err = SL_ERR_INIT;

	if (notify_deliver(ctx, &err) != 0)
		fprintf(stderr, "sluice: warning: cannot deliver the notifications: %s\n", err.msg);
}

static int watch_all(struct cli *cli, struct sl_ctx *ctx, const char *only)
{
	json_t *gates = json_array();
	int rc = CLI_OK, ran = 0, red;

	for (size_t i = 0; i < ctx->cfg->watch.ngates; i++) {
		const struct sl_gate *g = &ctx->cfg->watch.gates[i];

		if (only && strcmp(only, g->name))
			continue;
		ran++;
		if (cli_watch_one(cli, ctx, g, gates, &red) != 0 || red)
			rc = CLI_FAIL;
	}
	if (!ran && only)
		rc = cli_usage("watch", "no watch gate '%s' in watch.gates of .system/config.yaml",
			       only);
	else if (!ran && !cli->json)
		printf("no watch gates: set watch.gates in .system/config.yaml (docs/watch.md)\n");
	else if (cli->json) {
		/* cli_print_json() keeps the caller's reference */
		json_t *j = json_pack("{s:s, s:O}", "target", ctx->cfg->target, "gates", gates);

		if (cli_print_json(j) != CLI_OK)
			rc = CLI_FAIL;
		json_decref(j);
	}
	json_decref(gates);
	/* what the watch told (a culprit named) goes out now, not at the next tick */
	cli_watch_notify(ctx);
	return rc;
}

int cmd_watch(struct cli *cli, int argc, char **argv)
{
	enum { O_GATE = CLI_OPT_JSON + 1 };
	static const struct option opts[] = { CLI_COMMON_LONGOPTS,
					      { "gate", required_argument, NULL, O_GATE },
					      { NULL, 0, NULL, 0 } };
	struct sl_ctx ctx = SL_CTX_INIT;
	const char *only = NULL;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(watch_help);
		if (c == O_GATE)
			only = optarg;
		else if (!cli_common_opt(cli, c, optarg))
			return cli_usage("watch", "unknown option");
	}
	if (argc > optind)
		return cli_usage("watch", "takes no arguments; name a gate with --gate NAME");
	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	rc = watch_all(cli, &ctx, only);
	runner_ctx_release(&ctx);
	return rc;
}
