/* sluice notify [--replay SEQ]: the notifications outbox, and one event sent again. */
#include "cli/cli_runner.h"
#include "notify/notify.h"
#include "core/time.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define NOTIFY_LIST_DEFAULT 50
#define NOTIFY_LIST_MAX 100000

static const char notify_help[] =
	"usage: sluice notify [-C DIR] [-n N] [--json]\n"
	"       sluice notify [-C DIR] --replay SEQ\n"
	"\n"
	"List the notifications outbox (docs/config.md, \"Notifications\"), oldest\n"
	"first: each move of a run into merged, merge_conflict, rejected or failed,\n"
	"its seq (its number in 'sluice log'), and its state: pending (with the\n"
	"failed tries, and when the next one may be), delivered, given_up, or\n"
	"no_notifier (none was configured then). A failed delivery is tried again\n"
	"30s later, the wait doubling to 1h, until notify.retry_for after the event.\n"
	"\n"
	"  -n N          the newest N events (default 50)\n"
	"  --json        a JSON array (schema/notify-list.schema.json)\n"
	"  --replay SEQ  send event SEQ again now, to notify.command and notify.url,\n"
	"                whatever its state; it is then delivered. Exit 1 when SEQ is\n"
	"                unknown or a notifier failed (the message says why)\n";

/* A seq or a count: a whole number from 1 to max; 0, or -1 when it is none. */
static int parse_count(const char *s, long long max, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 10);
	return !*s || *end || errno || *out < 1 || *out > max ? -1 : 0;
}

/* The row's state: pending while not done, else its outcome. */
static const char *row_state(const struct store_notify *n)
{
	return n->done && n->outcome ? n->outcome : "pending";
}

static json_t *row_json(const struct store_notify *n)
{
	char at[40], next[40];
	json_t *sent = json_array();

	sl_time_iso(at, sizeof(at), n->at_ms);
	sl_time_iso(next, sizeof(next), n->next_ms);
	if (n->sent & STORE_NOTIFY_COMMAND)
		json_array_append_new(sent, json_string("command"));
	if (n->sent & STORE_NOTIFY_URL)
		json_array_append_new(sent, json_string("url"));
	return json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:o, s:i, s:s?, s:s}", "seq",
			 (json_int_t)n->seq, "event", n->event, "run", n->run_id, "work_order",
			 n->work_order_id, "at", at, "state", row_state(n), "sent", sent, "tries",
			 n->tries, "next_try", !n->done && n->next_ms ? next : NULL, "last_error",
			 n->last_error);
}

static void row_print(const struct store_notify *n)
{
	char at[40], next[40];

	sl_time_iso(at, sizeof(at), n->at_ms);
	printf("%-6lld %s  %-14s %-24s %-12s %s", (long long)n->seq, at, n->event,
	       cli_esc(n->run_id), row_state(n), cli_esc(n->work_order_id));
	if (n->tries)
		printf("  %d failed %s", n->tries, n->tries == 1 ? "try" : "tries");
	if (!n->done && n->next_ms) {
		sl_time_iso(next, sizeof(next), n->next_ms);
		printf(", next after %s", next);
	}
	if (n->last_error[0])
		printf(": %s", cli_esc(n->last_error));
	printf("\n");
}

static int list(struct cli *cli, struct sl_ctx *ctx, size_t max)
{
	struct store_notify *v = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0;
	int rc = CLI_OK;

	if (store_notify_recent(ctx->st, max, &v, &n, &err) != 0)
		return cli_report(&err);
	if (cli->json) {
		json_t *a = json_array();

		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, row_json(&v[i]));
		rc = cli_print_json(a);
		json_decref(a);
	} else if (!n) {
		printf("no notifications\n");
	}
	for (size_t i = 0; !cli->json && i < n; i++)
		row_print(&v[i]);
	store_notify_free(v, n);
	return rc;
}

static int replay(struct sl_ctx *ctx, long long seq)
{
	struct sl_err err = SL_ERR_INIT;

	if (notify_replay(ctx, (int64_t)seq, &err) != 0)
		return cli_report(&err);
	printf("notification %lld sent again\n", seq);
	return CLI_OK;
}

int cmd_notify(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS,
					      { "replay", required_argument, NULL, 'r' },
					      { NULL, 0, NULL, 0 } };
	struct sl_ctx ctx = SL_CTX_INIT;
	const char *replay_arg = NULL;
	long long seq = 0, max = NOTIFY_LIST_DEFAULT;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "n:", opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(notify_help);
		else if (c == 'r')
			replay_arg = optarg;
		else if (c == 'n' && parse_count(optarg, NOTIFY_LIST_MAX, &max) < 0)
			return cli_usage("notify", "-n takes a number from 1 to %d, not '%s'",
					 NOTIFY_LIST_MAX, cli_esc(optarg));
		else if (c != 'n' && !cli_common_opt(cli, c, optarg))
			return cli_usage("notify", "unknown option");
	}
	if (optind < argc)
		return cli_usage("notify", "unexpected argument '%s'", cli_esc(argv[optind]));
	if (replay_arg && parse_count(replay_arg, INT64_MAX, &seq) < 0)
		return cli_usage("notify", "--replay takes an event's seq (a number, see 'sluice "
			"notify'), not '%s'", cli_esc(replay_arg));
	if (replay_arg && cli->json)
		return cli_usage("notify", "--replay has no --json");
	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	rc = replay_arg ? replay(&ctx, seq) : list(cli, &ctx, (size_t)max);
	runner_ctx_release(&ctx);
	return rc;
}
