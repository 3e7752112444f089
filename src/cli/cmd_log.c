/* sluice log [RUN]: the event stream. */
#include "cli/cli_runner.h"
#include "core/time.h"

#include <getopt.h>
#include <string.h>

static const char log_help[] =
	"usage: sluice log [-C DIR] [--json] [RUN]\n"
	"\n"
	"Print the event stream, oldest first: every state change of every run and\n"
	"work order, with its time and reason. With RUN (an id or unique prefix), only\n"
	"that run's events. The events table is append-only: nothing rewrites history.\n";

int cmd_log(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	struct sl_ctx ctx = SL_CTX_INIT;
	struct store_event *ev = NULL;
	struct store_run run;
	struct sl_err err = SL_ERR_INIT;
	const char *run_id = NULL;
	size_t n = 0, i;
	int c, rc;

	memset(&run, 0, sizeof(run));
	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(log_help);
		if (!cli_common_opt(cli, c, optarg))
			return cli_usage("log", "unknown option");
	}
	if (argc - optind > 1)
		return cli_usage("log", "name at most one run");
	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	if (optind < argc) {
		if (store_run_get(ctx.st, argv[optind], &run, &err) != 0) {
			rc = cli_report(&err);
			goto out;
		}
		run_id = run.id;
	}
	if (store_events_list(ctx.st, run_id, 0, &ev, &n, &err) != 0) {
		rc = cli_report(&err);
		goto out;
	}
	if (cli->json) {
		json_t *a = json_array();
		for (i = 0; i < n; i++)
			json_array_append_new(
				a, json_pack("{s:I, s:I, s:s?, s:s?, s:s?, s:s?, s:s?}", "seq",
					     (json_int_t)ev[i].seq, "at_ms", (json_int_t)ev[i].at_ms,
					     "run", ev[i].run_id, "work_order", ev[i].work_order_id,
					     "from", ev[i].from_state, "to", ev[i].to_state, "reason",
					     ev[i].reason));
		rc = cli_print_json(a);
		json_decref(a);
		goto out;
	}
	for (i = 0; i < n; i++) {
		char when[40];
		sl_time_iso(when, sizeof(when), ev[i].at_ms);
		/* neither a run's nor a work order's: the repository's (budget_spent) */
		printf("%s  %s%s  %s -> %s  %s\n", when, ev[i].run_id ? "run " : ev[i].work_order_id ? "wo " : "",
		       cli_esc(ev[i].run_id ?: ev[i].work_order_id ?: "repository"),
		       ev[i].from_state ? ev[i].from_state : "-",
		       ev[i].to_state ? ev[i].to_state : "-", cli_esc(ev[i].reason));
	}
out:
	store_events_free(ev, n);
	store_run_release(&run);
	runner_ctx_release(&ctx);
	return rc;
}
