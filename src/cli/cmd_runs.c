/* sluice runs: runs, newest first. */
#include "cli/cli_runner.h"

#include <getopt.h>
#include <string.h>

static const char runs_help[] =
	"usage: sluice runs [-C DIR] [--state STATE] [--wo WO-ID] [--json]\n"
	"\n"
	"List runs, newest first: id, work order, state, elapsed time and the reason\n"
	"for the state. A run is named elsewhere by its id or any unique prefix.\n"
	"\n"
	"  --state STATE  only runs in this state: queued, preparing, building, gating,\n"
	"                 reviewing, awaiting_review, approved, merging, merged,\n"
	"                 resolving, merge_conflict, rejected, failed, abandoned,\n"
	"                 interrupted, reported\n"
	"  --wo WO-ID     only runs of this work order\n"
	"  --json         a JSON array of runs\n"
	"\n"
	"Runs that need a person: sluice runs --state merge_conflict\n"
	"                         sluice runs --state awaiting_review\n";

int cmd_runs(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS,
					      { "state", required_argument, NULL, 's' },
					      { "wo", required_argument, NULL, 'w' },
					      { NULL, 0, NULL, 0 } };
	struct sl_ctx ctx = SL_CTX_INIT;
	struct store_run *runs = NULL;
	struct sl_err err = SL_ERR_INIT;
	const char *state = NULL, *wo = NULL;
	enum run_state want = RUN_QUEUED;
	size_t n = 0, i;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(runs_help);
		else if (c == 's')
			state = optarg;
		else if (c == 'w')
			wo = optarg;
		else if (!cli_common_opt(cli, c, optarg))
			return cli_usage("runs", "unknown option");
	}
	if (optind < argc)
		return cli_usage("runs", "unexpected argument '%s'", argv[optind]);
	if (state && run_state_parse(state, &want) != 0)
		return cli_usage("runs", "'%s' is not a run state", state);
	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	if (store_runs_list(ctx.st, state ? RUN_SET(want) : RUN_STATES_ALL, wo, &runs, &n,
			    &err) != 0) {
		rc = cli_report(&err);
		goto out;
	}
	if (cli->json) {
		json_t *a = json_array();
		for (i = 0; i < n; i++)
			json_array_append_new(a, store_run_json(&runs[i], 0));
		rc = cli_print_json(a);
		json_decref(a);
		goto out;
	}
	if (!n)
		printf("no runs%s%s\n", state ? " in state " : "", state ? state : "");
	for (i = 0; i < n; i++) {
		char el[32];
		cli_elapsed(el, sizeof(el), runs[i].created_ms, runs[i].finished_ms);
		printf("%-24s  %-18s %-15s %9s  %s\n", cli_esc(runs[i].id),
		       cli_esc(runs[i].work_order_id), run_state_name(runs[i].state), el,
		       cli_esc(runs[i].reason));
	}
out:
	store_runs_free(runs, n);
	runner_ctx_release(&ctx);
	return rc;
}
