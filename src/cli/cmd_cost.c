/* sluice cost [--since DATE] [--by work-order|day|agent|model]: what the attempts used. */
#include "cli/cli_runner.h"
#include "runner/runner.h"
#include "store/store.h"
#include "core/ctx.h"
#include "core/time.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char cost_help[] =
	"usage: sluice cost [-C DIR] [--since DATE] [--by work-order|day|agent|model] [--json]\n"
	"\n"
	"What the attempts of builders (and reviewers) used, as they reported it\n"
	"(docs/budgets.md): tokens in, out, read from and written to the model's cache,\n"
	"and the cost in US dollars, one line per group and a total.\n"
	"\n"
	"  --since DATE  only what was recorded from DATE on: 2026-11-01 (midnight UTC)\n"
	"                or an ISO 8601 time with its zone (2026-11-28T09:00Z)\n"
	"  --by KEY      group by work-order (the default), day (UTC), agent or model\n"
	"  --json        {since, by, groups: [{key, attempts, input_tokens, ...}], total}\n"
	"                (schema/cost.schema.json)\n"
	"\n"
	"A cost marked (estimate) was computed from tokens; attempts that reported no\n"
	"cost are counted in 'no cost', not in the dollars.\n";

struct cost_sum {
	char key[128];
	long attempts, no_cost;
	int64_t tok[4];
	double usd;
	int estimate;
};

struct cost_sums {
	struct cost_sum *v, total;
	size_t n;
};

static void key_of(const struct store_usage *u, const char *by, char *out, size_t n)
{
	time_t t = (time_t)(u->recorded_ms / 1000);
	struct tm tm;

	if (!strcmp(by, "day") && gmtime_r(&t, &tm))
		strftime(out, n, "%Y-%m-%d", &tm);
	else if (!strcmp(by, "agent"))
		snprintf(out, n, "%s", !strcmp(u->role, "reviewer") ? "reviewer" :
				       u->agent ? u->agent : "-");
	else if (!strcmp(by, "model"))
		snprintf(out, n, "%s", u->model ? u->model : "-");
	else
		snprintf(out, n, "%s", u->work_order_id ? u->work_order_id : "-");
}

static void sum_add(struct cost_sum *c, const struct store_usage *u)
{
	const int64_t t[4] = { u->input_tokens, u->output_tokens, u->cache_read_tokens,
			       u->cache_write_tokens };

	c->attempts++;
	for (int i = 0; i < 4; i++)
		c->tok[i] += t[i] > 0 ? t[i] : 0;
	if (u->cost_usd < 0)
		c->no_cost++;
	else
		c->usd += u->cost_usd;
	c->estimate |= u->cost_usd >= 0 && u->estimate;
}

static int sums_add(struct cost_sums *s, const struct store_usage *u, const char *by)
{
	char key[128];
	struct cost_sum *grown;
	size_t i;

	key_of(u, by, key, sizeof(key));
	for (i = 0; i < s->n && strcmp(s->v[i].key, key); i++)
		;
	if (i == s->n) {
		if (!(grown = realloc(s->v, (s->n + 1) * sizeof(*grown))))
			return -1;
		s->v = grown;
		memset(&s->v[s->n], 0, sizeof(*s->v));
		snprintf(s->v[s->n++].key, sizeof(s->v->key), "%s", key);
	}
	sum_add(&s->v[i], u);
	sum_add(&s->total, u);
	return 0;
}

static json_t *sum_json(const struct cost_sum *c, int with_key)
{
	json_t *j = json_pack("{s:I, s:I, s:I, s:I, s:I, s:f, s:b, s:I}", "attempts",
			      (json_int_t)c->attempts, "input_tokens", (json_int_t)c->tok[0],
			      "output_tokens", (json_int_t)c->tok[1], "cache_read_tokens",
			      (json_int_t)c->tok[2], "cache_write_tokens", (json_int_t)c->tok[3],
			      "cost_usd", c->usd, "estimate", c->estimate, "no_cost",
			      (json_int_t)c->no_cost);

	if (j && with_key)
		json_object_set_new(j, "key", json_string(c->key));
	return j;
}

static int print_json(const struct cost_sums *s, const char *by, const char *since)
{
	json_t *groups = json_array(), *j;
	int rc;

	for (size_t i = 0; groups && i < s->n; i++)
		json_array_append_new(groups, sum_json(&s->v[i], 1));
	j = json_pack("{s:s?, s:s, s:o, s:o}", "since", since, "by", by, "groups", groups,
		      "total", sum_json(&s->total, 0));
	rc = cli_print_json(j);
	json_decref(j);
	return rc;
}

static void print_line(const struct cost_sum *c, const char *key)
{
	printf("%-24s %8ld %10lld %10lld %12lld %12lld  $%.4f%s", cli_esc(key), c->attempts,
	       (long long)c->tok[0], (long long)c->tok[1], (long long)c->tok[2],
	       (long long)c->tok[3], c->usd, c->estimate ? " (estimate)" : "");
	if (c->no_cost)
		printf(" (%ld with no cost)", c->no_cost);
	printf("\n");
}

static void print_text(const struct cost_sums *s, const char *by)
{
	char head[32];

	snprintf(head, sizeof(head), "%s", by);
	for (char *p = head; *p; p++)
		*p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
	printf("%-24s %8s %10s %10s %12s %12s  %s\n", head, "ATTEMPTS", "INPUT", "OUTPUT",
	       "CACHE-READ", "CACHE-WRITE", "COST");
	for (size_t i = 0; i < s->n; i++)
		print_line(&s->v[i], s->v[i].key);
	print_line(&s->total, "total");
}

/* DATE (midnight UTC) or an ISO 8601 time with its zone. */
static int parse_since(const char *text, int64_t *ms, struct sl_err *err)
{
	struct tm tm;
	int y, m, d;
	char end;

	if (sscanf(text, "%4d-%2d-%2d%c", &y, &m, &d, &end) == 3 && strlen(text) == 10) {
		memset(&tm, 0, sizeof(tm));
		tm.tm_year = y - 1900;
		tm.tm_mon = m - 1;
		tm.tm_mday = d;
		*ms = (int64_t)timegm(&tm) * 1000;
		if (tm.tm_year == y - 1900 && tm.tm_mon == m - 1 && tm.tm_mday == d)
			return 0;
		return sl_err_set(err, SL_EINVALID, "'%s' is no date", text);
	}
	return sl_time_parse_iso(ms, text, err);
}

static int do_cost(struct cli *cli, const char *since, const char *by)
{
	struct sl_ctx ctx = SL_CTX_INIT;
	struct sl_err err = SL_ERR_INIT;
	struct cost_sums sums;
	struct store_usage *v = NULL;
	int64_t since_ms = 0;
	size_t n = 0;
	int rc;

	memset(&sums, 0, sizeof(sums));
	if (since && parse_since(since, &since_ms, &err) != 0)
		return cli_usage("cost", "--since: %s", err.msg);
	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	if (store_usage_list(ctx.st, NULL, since_ms, &v, &n, &err) != 0) {
		rc = cli_report(&err);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (sums_add(&sums, &v[i], by) != 0) {
			cli_error("out of memory");
			rc = CLI_FAIL;
			goto out;
		}
	if (cli->json)
		rc = print_json(&sums, by, since);
	else
		print_text(&sums, by);
out:
	free(sums.v);
	store_usage_free(v, n);
	runner_ctx_release(&ctx);
	return rc;
}

int cmd_cost(struct cli *cli, int argc, char **argv)
{
	enum { O_SINCE = CLI_OPT_JSON + 1, O_BY }; /* not CLI_OPT_JSON's number */
	static const struct option opts[] = { CLI_COMMON_LONGOPTS,
					      { "since", required_argument, NULL, O_SINCE },
					      { "by", required_argument, NULL, O_BY },
					      { NULL, 0, NULL, 0 } };
	const char *since = NULL, *by = "work-order";
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(cost_help);
		if (c == O_SINCE)
			since = optarg;
		else if (c == O_BY)
			by = optarg;
		else if (!cli_common_opt(cli, c, optarg))
			return cli_usage("cost", "unknown option");
	}
	if (argc > optind)
		return cli_usage("cost", "takes no arguments");
	if (strcmp(by, "work-order") && strcmp(by, "day") && strcmp(by, "agent") &&
	    strcmp(by, "model"))
		return cli_usage("cost", "--by takes work-order, day, agent or model, not '%s'",
				 cli_esc(by));
	return do_cost(cli, since, by);
}
