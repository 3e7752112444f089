/* sluice queue: ingest the inbox, list work orders in schedule order. */
#include "cli/cli.h"
#include "core/config.h"
#include "core/repo.h"
#include "runner/runner.h"
#include "budget/budget.h"
#include "queue/queue.h"
#include "store/store.h"
#include "core/time.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
        "usage: sluice queue [--explain] [--json] [-C DIR]\n"
        "\n"
        "Read the inbox (new work orders, new revisions, files gone), then list\n"
        "every work order in schedule order with its state: running, ready,\n"
        "waiting (on dependencies), blocked (a dependency failed), failed,\n"
        "invalid, skipped (status draft/backlog/hold/done in the file), done.\n"
        "Ready ones are ordered by priority (urgent, then 1 first), created_at,\n"
        "then id. In --json, urgent is priority 0. When the day's or month's budget\n"
        "is spent (budget.day.usd, budget.month.usd), no ready one starts: each says\n"
        "so, and a last line 'budget:' says which and what to do.\n"
        "\n"
        "options:\n"
        "  --explain    say why each one waits or what it is: 'waits on WO-7\n"
        "               (running)', 'overlaps WO-3 on src/a.c (running)', the\n"
        "               problem of an invalid one\n"
        "  --json       one JSON document (schema/queue.schema.json)\n"
        "  -C DIR       run as if started in DIR\n"
        "  -h, --help   show this help\n"
        "\n"
        "examples:\n"
        "  sluice queue\n"
        "  sluice queue --explain\n"
        "  sluice queue --json | jq -r '.work_orders[] | select(.state == \"ready\") | .id'\n";

#define OPT_EXPLAIN 2001

static json_t *strv_json(sl_strv v)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; v && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static json_t *item_json(const struct queue_item *it)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_string(it->id));
	json_object_set_new(o, "state", json_string(it->state));
	json_object_set_new(o, "reason", json_string(it->reason));
	json_object_set_new(o, "explain", json_string(it->explain ? it->explain : ""));
	json_object_set_new(o, "may_start", json_boolean(it->may_start));
	json_object_set_new(o, "priority", json_integer(it->priority));
	json_object_set_new(o, "title", json_string(it->title));
	json_object_set_new(o, "path", json_string(it->path));
	json_object_set_new(o, "present", json_boolean(it->present));
	json_object_set_new(o, "status", json_string(it->status));
	json_object_set_new(o, "created_at", json_string(it->created_at));
	json_object_set_new(o, "content_hash", json_string(it->content_hash));
	json_object_set_new(o, "depends_on", strv_json(it->depends_on));
	json_object_set_new(o, "context", strv_json(it->context));
	return o;
}

static int print_json(const struct queue_plan *plan, const struct store_inbox_error *errs,
                      size_t nerrs)
{
	json_t *doc = json_object(), *list = json_array(), *ie = json_array(),
	       *counts = json_object();
	size_t i;

	for (i = 0; i < plan->n; i++) {
		json_t *c = json_object_get(counts, plan->items[i].state);
		json_array_append_new(list, item_json(&plan->items[i]));
		json_object_set_new(counts, plan->items[i].state,
		                    json_integer(c ? json_integer_value(c) + 1 : 1));
	}
	for (i = 0; i < nerrs; i++) {
		json_t *e = json_object();
		json_object_set_new(e, "path", json_string(errs[i].path));
		json_object_set_new(e, "message", json_string(errs[i].message));
		json_array_append_new(ie, e);
	}
	json_object_set_new(doc, "work_orders", list);
	json_object_set_new(doc, "inbox_errors", ie);
	json_object_set_new(doc, "counts", counts);
	json_dumpf(doc, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(doc);
	return CLI_OK;
}

static int print_text(const struct queue_plan *plan, const struct store_inbox_error *errs,
                      size_t nerrs, int explain)
{
	size_t i;

	if (!plan->n && !nerrs) {
		printf("no work orders in the inbox\n");
		return CLI_OK;
	}
	for (i = 0; i < plan->n; i++) {
		const struct queue_item *it = &plan->items[i];
		char prio[16];

		printf("%-8s %6s  %-20s %s\n", it->state,
		       queue_priority_word(it->priority, prio, sizeof(prio)), cli_esc(it->id),
		       cli_esc(it->title));
		if (explain)
			printf("%14s%s\n", "", cli_esc(it->explain));
	}
	if (nerrs)
		printf("\nproblems in the inbox (fix them; see 'sluice check'):\n");
	for (i = 0; i < nerrs; i++)
		printf("  %s\n", cli_esc(errs[i].message));
	return CLI_OK;
}

static int run_queue(struct cli *cli, const struct sl_repo *repo, int explain, struct sl_err *err)
{
	struct queue_plan_opts opts = QUEUE_PLAN_OPTS_INIT;
	struct queue_plan plan = QUEUE_PLAN_INIT;
	struct store_inbox_error *errs = NULL;
	struct sl_config *cfg = NULL;
	struct store *st = NULL;
	char held[320];
	size_t nerrs = 0;
	int error;

	if ((error = sl_config_load(&cfg, repo->config_path, err)) != 0 ||
	    (error = store_open(&st, repo->db_path, err)) != 0 ||
	    (error = queue_ingest(st, repo->root, cfg->queue.inbox, NULL, err)) != 0)
		goto out;
	opts.allow_overlap = cfg->queue.allow_overlap;
	opts.jobs = cfg->queue.jobs;
	if ((error = budget_spent(cfg, st, sl_now_ms(), held, sizeof(held), err)) < 0)
		goto out;
	opts.held = error ? held : NULL;
	if ((error = queue_plan(&plan, st, &opts, err)) != 0 ||
	    (error = store_inbox_errors_list(st, &errs, &nerrs, err)) != 0)
		goto out;
	if (cli->json)
		print_json(&plan, errs, nerrs);
	else
		print_text(&plan, errs, nerrs, explain);
	for (size_t i = 0; !cli->json && opts.held && i < plan.n; i++)
		if (wo_state_is(plan.items[i].state, WO_READY)) {
			printf("\nbudget: %s\n", cli_esc(opts.held));
			break;
		}
out:
	store_inbox_errors_free(errs, nerrs);
	queue_plan_release(&plan);
	store_free(st);
	sl_config_free(cfg);
	return error;
}

int cmd_queue(struct cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {
	        CLI_COMMON_LONGOPTS,
	        {"explain", no_argument, NULL, OPT_EXPLAIN},
	        {NULL, 0, NULL, 0},
	};
	struct sl_repo repo = SL_REPO_INIT;
	struct sl_err err = SL_ERR_INIT;
	int opt, explain = 0, rc = CLI_OK;

	optind = 0;
	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		if (opt == 'h')
			return cli_help(usage_text);
		if (opt == OPT_EXPLAIN)
			explain = 1;
		else if (!cli_common_opt(cli, opt, optarg))
			return cli_usage("queue", "unknown option");
	}
	if (optind < argc)
		return cli_usage("queue", "unexpected argument '%s'", argv[optind]);
	if (sl_repo_find(&repo, cli->dir, &err) || sl_repo_require_init(&repo, &err) ||
	    run_queue(cli, &repo, explain, &err))
		rc = cli_report(&err);
	sl_repo_release(&repo);
	return rc;
}
