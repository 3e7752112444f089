/* sluice tick: one cron pass. Also the engine of `sluice run`. */
#include "cli/cli_runner.h"
#include "watch/watch.h"
#include "runner/runner.h"
#include "target/target.h"
#include "core/time.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char tick_help[] =
	"usage: sluice tick [-C DIR] [--jobs N] [--max-runs N] [--json]\n"
	"\n"
	"One cron pass: reconcile interrupted runs, ingest the inbox, start ready work\n"
	"orders (dependencies merged, no overlapping context running), build, gate,\n"
	"review, and land approved runs through the merge train: each merge commit\n"
	"is tested with merge.gates before the target moves to exactly that commit\n"
	"(docs/config.md, 'The merge train'). Overlapping ticks are safe: each run\n"
	"is claimed once. With watch.every: N, a tick then runs each watch gate that\n"
	"N landings passed since its last run, as 'sluice watch' does (docs/watch.md).\n"
	"\n"
	"  --jobs N       builders at once, 1 to 256 (default: queue.jobs in .system/config.yaml;\n"
	"                 the train's own workers, merge.jobs, are apart from them)\n"
	"  --max-runs N   start at most N new runs in this tick\n"
	"  --json         print a summary as JSON\n"
	"  -C DIR         the repository (default: the current directory)\n"
	"\n"
	"On a terminal it shows each run's state and elapsed time; otherwise it prints\n"
	"one line per state change. Exit 0 when the tick ran (even if runs failed:\n"
	"see 'sluice runs'), 1 when the tick itself could not run, a run's worker was\n"
	"killed by a signal (the run and the signal named; --json: \"killed\"; the next\n"
	"tick reconciles the run), the target carries a commit from a run that\n"
	"sluice did not land (an unreviewed landing: no run lands until the target is\n"
	"reset or 'sluice accept-target' accepts it), or a watch gate due could not run\n"
	"(a red one leaves the exit status as it is).\n"
	"\n"
	"cron: * * * * * cd /path/to/repo && sluice tick >>.system/tick.log 2>&1\n";

struct live {
	int tty;
	struct sl_ctx *ctx;
	int lines; /* lines drawn last time, on a terminal */
};

static void on_event(const char *run_id, const char *wo_id, const char *from, const char *to,
		     const char *reason, void *data)
{
	struct live *l = data;

	if (l->tty)
		return;
	printf("run %s (%s): %s -> %s: %s\n", run_id, wo_id ? wo_id : "?", from ? from : "new",
	       to ? to : "?", cli_esc(reason));
	fflush(stdout);
}

static void on_tick(void *data)
{
	struct live *l = data;
	struct store_run *runs = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0, i;
	int drawn = 0;
	char el[32];

	if (!l->tty || store_runs_list(l->ctx->st, RUN_STATES_ALL, NULL, &runs, &n, &err) != 0)
		return;
	if (l->lines)
		printf("\033[%dA", l->lines);
	for (i = 0; i < n && drawn < 20; i++) {
		if (run_state_is_final(runs[i].state) &&
		    sl_now_ms() - runs[i].finished_ms > 60000)
			continue;
		cli_elapsed(el, sizeof(el), runs[i].created_ms, runs[i].finished_ms);
		printf("\033[2K%-24s %-16s %-15s %8s  %.60s\n", runs[i].id, runs[i].work_order_id,
		       run_state_name(runs[i].state), el, cli_esc(runs[i].reason));
		drawn++;
	}
	for (i = (size_t)drawn; i < (size_t)l->lines; i++)
		printf("\033[2K\n");
	l->lines = drawn > l->lines ? drawn : l->lines;
	fflush(stdout);
	store_runs_free(runs, n);
}

/* An unreviewed landing on the target fails the tick, loudly. *json: null or {commit, run, count}. */
static int report_target(struct sl_ctx *ctx, json_t **json)
{
	struct target_alert a;
	struct sl_err err = SL_ERR_INIT;
	int rc = target_watch(ctx, NULL, 0, &a, &err);

	*json = json_null();
	if (rc < 0)
		return cli_report(&err);
	if (rc == 0)
		return CLI_OK;
	json_decref(*json);
	*json = json_pack("{s:s, s:s?, s:I}", "commit", a.commit, "run", a.run[0] ? a.run : NULL,
			  "count", (json_int_t)a.count);
	cli_error("the target '%s' carries commit %s from run %s that sluice did not land "
		  "(%zu unreviewed commit%s); no run lands until you reset '%s' to before it "
		  "or accept it: sluice accept-target %s", ctx->cfg->target, a.commit,
		  a.run[0] ? a.run : "(unknown)", a.count, a.count == 1 ? "" : "s",
		  ctx->cfg->target, a.commit);
	return CLI_FAIL;
}

/* The summary of `tick --json` (schema/tick.schema.json). */
static json_t *tick_json(const struct runner_tick_result *res, json_t *unreviewed)
{
	json_t *killed = json_array();
	char sig[32];

	for (int i = 0; i < res->killed && i < (int)(sizeof(res->killed_by) /
						     sizeof(*res->killed_by)); i++) {
		const char *abbrev = sigabbrev_np(res->killed_by[i].signal);
		snprintf(sig, sizeof(sig), "SIG%s", abbrev ? abbrev : "?");
		json_array_append_new(killed, json_pack("{s:s, s:s}", "run", res->killed_by[i].run,
							"signal", sig));
	}
	/* the counts' keys ("merged", "failed"): not a run state */
	return json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:O, s:o, s:o}", "started",
			 res->started, "advanced", res->advanced, "merged", res->merged, "reported",
			 res->reported, "failed", res->failed, "waiting", res->waiting, "requeued",
			 res->reconciled, "orphans", res->orphans, "unreviewed", unreviewed,
			 "killed", killed, "budget",
			 res->budget[0] ? json_string(res->budget) : json_null());
}

/*
 * watch.every: N (docs/watch.md): after the tick's work, each watch gate
 * with N landings or more since its last run on a tip (or none yet) runs,
 * as `sluice watch` would; its report follows the tick's line, or is the
 * summary's "watch" (--json). A red gate leaves the tick's exit status as
 * it is; a gate that could not run fails it, but another watch running
 * (the lock held) only says so.
 */
static int tick_watch(struct cli *cli, struct sl_ctx *ctx, json_t *gates)
{
	struct sl_err err = SL_ERR_INIT;
	size_t since;
	int rc = CLI_OK, due, red, error;

	/* a watch killed before its work orders reached the inbox: them now, not N landings on */
	if (ctx->cfg->watch.ngates && watch_resume(ctx, &err) != 0)
		sl_err_clear(&err); /* SL_ELOCKED: the watch running does it */
	for (size_t i = 0; i < ctx->cfg->watch.ngates; i++) {
		const struct sl_gate *g = &ctx->cfg->watch.gates[i];

		if ((due = watch_due(ctx, g, &since, &err)) < 0) {
			fprintf(stderr, "sluice tick: watch gate '%s': %s\n", g->name, err.msg);
			sl_err_clear(&err);
			rc = CLI_FAIL;
			continue;
		}
		if (!due)
			continue;
		if (!cli->json)
			printf("tick: watch.every %d: %zu landing%s since the watch gate '%s' last "
			       "ran%s\n", ctx->cfg->watch.every, since, since == 1 ? "" : "s",
			       g->name, since ? "" : " (or it never ran)");
		if ((error = cli_watch_one(cli, ctx, g, gates, &red)) != 0 && error != SL_ELOCKED)
			rc = CLI_FAIL;
	}
	if (json_array_size(gates) || rc != CLI_OK)
		cli_watch_notify(ctx);
	return rc;
}

int cli_tick_run(struct cli *cli, const char *only_wo, int jobs, int max_runs);
int cli_tick_run(struct cli *cli, const char *only_wo, int jobs, int max_runs)
{
	struct sl_ctx ctx = SL_CTX_INIT;
	struct runner_tick_opts o = RUNNER_TICK_OPTS_INIT;
	struct runner_tick_result res;
	struct runner_progress p;
	struct sl_err err = SL_ERR_INIT;
	struct live l;
	json_t *unreviewed = NULL;
	int rc, failed;

	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	l.tty = !cli->json && isatty(STDOUT_FILENO);
	l.ctx = &ctx;
	l.lines = 0;
	p.event = on_event;
	p.tick = on_tick;
	p.data = &l;
	o.jobs = jobs;
	o.max_runs = max_runs;
	o.only_wo = only_wo;
	o.progress = cli->json ? NULL : &p;
	/* a killed worker fails the tick once its pass is done: the summary first */
	if ((failed = runner_tick(&ctx, &o, &res, &err) != 0) && !res.killed) {
		rc = cli_report(&err);
		goto out;
	}
	if (l.tty)
		on_tick(&l);
	rc = report_target(&ctx, &unreviewed);
	if (cli->json) {
		json_t *j = tick_json(&res, unreviewed), *invalid = NULL, *watched = json_array();
		cli_invalid_work_orders(&ctx, NULL, NULL, &invalid);
		json_object_set_new(j, "invalid", invalid);
		if (tick_watch(cli, &ctx, watched) != CLI_OK)
			rc = CLI_FAIL;
		json_object_set_new(j, "watch", watched);
		if (cli_print_json(j) != CLI_OK)
			rc = CLI_FAIL;
		json_decref(j);
	} else {
		char rep[32] = "";
		if (res.reported)
			snprintf(rep, sizeof(rep), ", %d reported", res.reported);
		printf("tick: %d started, %d merged%s, %d failed, %d waiting%s\n", res.started,
		       res.merged, rep, res.failed, res.waiting,
		       res.reconciled ? " (interrupted runs requeued)" : "");
		/* every tick, on stdout: cron's mail and tick.log are where it is read */
		if (res.budget[0])
			printf("tick: %s\n", res.budget);
		cli_invalid_work_orders(&ctx, stdout, "tick: ", NULL);
		if (tick_watch(cli, &ctx, NULL) != CLI_OK)
			rc = CLI_FAIL;
	}
	if (failed)
		rc = cli_report(&err);
out:
	json_decref(unreviewed);
	runner_ctx_release(&ctx);
	return rc;
}

static int parse_count(const char *cmd, const char *opt, const char *arg, int max, int *out)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (!*arg || *end || v < 1 || v > max)
		return cli_usage(cmd, "%s takes a number from 1 to %d, not '%s'", opt, max, arg);
	*out = (int)v;
	return CLI_OK;
}

int cmd_tick(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS,
					      { "jobs", required_argument, NULL, 'j' },
					      { "max-runs", required_argument, NULL, 'm' },
					      { NULL, 0, NULL, 0 } };
	int c, jobs = 0, max_runs = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "j:", opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(tick_help);
		if (c == 'j' && parse_count("tick", "--jobs", optarg, SL_JOBS_MAX, &jobs))
			return CLI_USAGE;
		if (c == 'm' && parse_count("tick", "--max-runs", optarg, 1000, &max_runs))
			return CLI_USAGE;
		if (c != 'j' && c != 'm' && !cli_common_opt(cli, c, optarg))
			return cli_usage("tick", "unknown option");
	}
	if (optind < argc)
		return cli_usage("tick", "unexpected argument '%s'", argv[optind]);
	return cli_tick_run(cli, NULL, jobs, max_runs);
}
