/* sluice show RUN: one run's dossier. */
#include "cli/cli_runner.h"
#include "artifact/artifact.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* How many lines of the builder's summary `show` prints. */
#define SHOW_SUMMARY_LINES 40

static const char show_help[] =
	"usage: sluice show [-C DIR] [--json] RUN\n"
	"\n"
	"One run's dossier (RUN: an id or a unique prefix): the work order, the\n"
	"timeline of events with the time between them, the attempts (prompt, gates,\n"
	"verdict), its jobs on an engine (executor: handle, attempt, outcome), the\n"
	"reviewer's verdict with per-criterion results, the diff stat,\n"
	"the conflict context (conflicted files, every rival that last changed the\n"
	"conflicting lines: a run and its work order, or a person's commit; the\n"
	"conflicted hunks with three lines of context under \"@@ lines A-B @@\", the\n"
	"line numbers of the file after 'git merge' in the worktree; for a semantic\n"
	"conflict the merge gates that failed, their output and the rival runs), the\n"
	"run's car in the merge train (its place, status, base, the car ahead, the\n"
	"merge gates with their time) or the gate record it landed with, the merge\n"
	"commit, where the worktree is, what to type next for runs\n"
	"that wait on a person, and the path of every artifact.\n"
	"\n"
	"  --json  one JSON document (schema/show.schema.json)\n";

/* A string field, escaped for the terminal (cli_esc): it may come from a builder or reviewer. */
static const char *js(json_t *o, const char *key)
{
	return cli_esc(json_string_value(json_object_get(o, key)));
}

static void show_head(json_t *d)
{
	json_t *r = json_object_get(d, "run"), *wo = json_object_get(d, "work_order");

	printf("run %s  %s\n", js(r, "id"), js(r, "state"));
	if (*js(r, "reason"))
		printf("  %s\n", js(r, "reason"));
	printf("work order %s \"%s\" (%s), %s%s%s\n", js(wo, "id"), js(wo, "title"),
	       *js(wo, "path") ? js(wo, "path") : "no longer in the inbox", js(wo, "state"),
	       *js(wo, "reason") ? ": " : "", js(wo, "reason"));
	printf("branch %s  base %.12s  head %.12s  approved tree %.12s\n",
	       *js(r, "branch_name") ? js(r, "branch_name") : "-",
	       *js(r, "base_commit") ? js(r, "base_commit") : "-",
	       *js(r, "head_commit") ? js(r, "head_commit") : "-",
	       *js(r, "approved_tree") ? js(r, "approved_tree") : "-");
}

static void show_timeline(json_t *d)
{
	json_t *e;
	size_t i;

	printf("\ntimeline:\n");
	json_array_foreach(json_object_get(d, "timeline"), i, e) {
		char el[32];
		cli_elapsed(el, sizeof(el), 1, 1 + json_integer_value(json_object_get(e, "after_ms")));
		printf("  %s  %-8s %s -> %s  %s\n", js(e, "at"), i ? el : "", *js(e, "from") ?
		       js(e, "from") : "new", js(e, "to"), js(e, "reason"));
	}
}

static void show_verdict(json_t *v, const char *indent)
{
	json_t *c;
	size_t i;

	if (!json_is_object(v))
		return;
	printf("%sverdict: %s%s%s%s%s\n", indent, js(v, "verdict"), *js(v, "reviewer") ? " by " : "",
	       js(v, "reviewer"), *js(v, "comments") ? ": " : "", js(v, "comments"));
	json_array_foreach(json_object_get(v, "criteria"), i, c)
		printf("%s  [%s] %s%s%s\n", indent,
		       json_is_true(json_object_get(c, "met")) ? "met" : "not met", js(c, "criterion"),
		       *js(c, "note") ? " - " : "", js(c, "note"));
}

static void show_gates(json_t *gates, const char *indent)
{
	json_t *g;
	size_t i;

	json_array_foreach(gates, i, g) {
		json_t *ok = json_object_get(g, "passed");
		const char *log = js(g, "log");
		/* a gate's result, not a run state; the attempt's own log (older runs: none kept) */
		printf("%sgate %s: %s%s%s%s\n", indent, js(g, "name"),
		       ok ? (json_is_true(ok) ? "passed" : "failed") : js(g, "result"),
		       strncmp(log, "attempts/", 9) ? "" : " (", strncmp(log, "attempts/", 9) ? "" : log,
		       strncmp(log, "attempts/", 9) ? "" : ")");
	}
}

static void show_attempts(json_t *d)
{
	json_t *a;
	size_t i;

	if (!json_array_size(json_object_get(d, "attempts")))
		return;
	printf("\nattempts:\n");
	json_array_foreach(json_object_get(d, "attempts"), i, a) {
		json_t *ex = json_object_get(a, "builder_exit");
		printf("  %lld %s: %s", (long long)json_integer_value(json_object_get(a, "n")),
		       js(a, "mode"), *js(a, "outcome") ? js(a, "outcome") : "in progress");
		if (json_is_integer(ex))
			printf(" (builder exit %lld)", (long long)json_integer_value(ex));
		printf("%s%.12s\n", *js(a, "head") ? ", head " : "", js(a, "head"));
		if (*js(a, "agent"))
			printf("    agent: %s, session %s\n", js(a, "agent"),
			       *js(a, "session") ? js(a, "session") : "new");
		if (*js(a, "prompt"))
			printf("    prompt: %s\n", js(a, "prompt"));
		show_gates(json_object_get(a, "gates"), "    ");
		show_verdict(json_object_get(a, "review"), "    ");
	}
}

/* A token count the attempt reported: " N what,"; one not reported: nothing. */
static void show_tokens(json_t *r, const char *key, const char *what)
{
	json_t *v = json_object_get(r, key);

	if (json_is_integer(v))
		printf(" %lld%s,", (long long)json_integer_value(v), what);
}

/* What the attempts used (docs/budgets.md): one line per attempt and role, and the total. */
static void show_usage(json_t *d)
{
	json_t *u = json_object_get(d, "usage"), *r, *c;
	size_t i;

	if (!json_array_size(json_object_get(u, "rows")))
		return;
	printf("\nusage:\n");
	json_array_foreach(json_object_get(u, "rows"), i, r) {
		printf("  attempt %lld %s%s%s:", (long long)json_integer_value(json_object_get(r, "attempt")),
		       js(r, "role"), *js(r, "model") ? ", " : "", cli_esc(js(r, "model")));
		show_tokens(r, "input_tokens", " in");
		show_tokens(r, "output_tokens", " out");
		show_tokens(r, "cache_read_tokens", " cache read");
		show_tokens(r, "cache_write_tokens", " cache write");
		if (json_is_number(c = json_object_get(r, "cost_usd")))
			printf(" $%.4f%s", json_number_value(c),
			       json_is_true(json_object_get(r, "estimate")) ? " (estimate)" : "");
		else
			printf(" no cost reported");
		printf(", %.1fs\n", (double)json_integer_value(json_object_get(r, "wall_ms")) / 1000);
	}
	printf("  total: $%.4f%s\n", json_number_value(json_object_get(u, "cost_usd")),
	       json_is_true(json_object_get(u, "estimate")) ? " (estimate)" : "");
}

/* The run's jobs on an engine (executor.kind slurm or kubernetes). */
static void show_jobs(json_t *d)
{
	json_t *j;
	size_t i;

	if (!json_array_size(json_object_get(d, "jobs")))
		return;
	printf("\njobs:\n");
	json_array_foreach(json_object_get(d, "jobs"), i, j) {
		printf("  %s %s, attempt %lld: %s\n", cli_esc(js(j, "handle")), js(j, "purpose"),
		       (long long)json_integer_value(json_object_get(j, "attempt")),
		       *js(j, "outcome") ? cli_esc(js(j, "outcome")) : "running (not collected)");
	}
}

/* The builder's summary, each line indented, at most SHOW_SUMMARY_LINES of them. */
static void show_summary(json_t *d)
{
	const char *text = json_string_value(json_object_get(d, "summary")), *p = text;
	size_t n = 0;

	if (!text || !*text)
		return;
	printf("\nsummary (the builder's):\n");
	for (; *p && n < SHOW_SUMMARY_LINES; n++) {
		size_t len = strcspn(p, "\n");
		char *line = strndup(p, len);
		printf("  %s\n", line ? cli_esc(line) : "");
		free(line);
		p += len + (p[len] == '\n');
	}
	if (*p)
		printf("  [...: the whole of it is in summary.md]\n");
}

static void show_diffstat(json_t *d)
{
	json_t *s = json_object_get(d, "diffstat"), *f;
	size_t i;

	if (!json_is_object(s))
		return;
	printf("\ndiff: %lld file%s changed, %lld insertion%s(+), %lld deletion%s(-)\n",
	       (long long)json_integer_value(json_object_get(s, "files_changed")),
	       json_integer_value(json_object_get(s, "files_changed")) == 1 ? "" : "s",
	       (long long)json_integer_value(json_object_get(s, "insertions")),
	       json_integer_value(json_object_get(s, "insertions")) == 1 ? "" : "s",
	       (long long)json_integer_value(json_object_get(s, "deletions")),
	       json_integer_value(json_object_get(s, "deletions")) == 1 ? "" : "s");
	json_array_foreach(json_object_get(s, "files"), i, f) {
		if (json_is_true(json_object_get(f, "binary")))
			printf("  %s | binary\n", js(f, "path"));
		else
			printf("  %s | +%lld -%lld\n", js(f, "path"),
			       (long long)json_integer_value(json_object_get(f, "insertions")),
			       (long long)json_integer_value(json_object_get(f, "deletions")));
	}
}

/* Where a rival changed the conflicting lines ("from f.c:10"), or the file it changed. */
static void rival_where(json_t *rv)
{
	json_t *l = json_object_get(rv, "lines");
	json_int_t line = json_integer_value(json_object_get(l, "line"));
	json_int_t n = json_integer_value(json_object_get(l, "lines"));

	if (!strcmp(js(l, "by"), "file"))
		printf("  it changed %s\n", *js(l, "path") ? js(l, "path") : "the files");
	else if (*js(l, "path") && line > 0)
		printf("  it last changed %lld conflicting line%s, from %s:%lld\n", (long long)n,
		       n == 1 ? "" : "s", js(l, "path"), (long long)line);
}

/* Every rival: who last changed the conflicting lines (docs/builders.md "The rival"). */
static int show_rivals(json_t *c)
{
	json_t *rv, *p;
	size_t i;

	json_array_foreach(json_object_get(c, "rivals"), i, rv) {
		p = json_object_get(rv, "person");
		if (json_is_object(p))
			printf("  with commit %.12s by %s, not a sluice run: %s\n", js(p, "commit"),
			       js(p, "author"), js(p, "subject"));
		else
			printf("  with run %s (%s \"%s\"), merged %s\n  its summary: %s\n",
			       js(rv, "run"), js(rv, "work_order"), js(rv, "title"),
			       js(rv, "merged_at"), *js(rv, "summary") ? js(rv, "summary") : "(none)");
		rival_where(rv);
	}
	return json_array_size(json_object_get(c, "rivals")) > 0;
}

static void show_rival(json_t *c)
{
	json_t *rv = json_object_get(c, "rival");

	if (show_rivals(c))
		return;
	if (json_is_object(rv))
		printf("  with run %s (%s \"%s\"), merged %s\n  its summary: %s\n", js(rv, "run"),
		       js(rv, "work_order"), js(rv, "title"), js(rv, "merged_at"),
		       *js(rv, "summary") ? js(rv, "summary") : "(none)");
}

/* A semantic conflict: the merge was clean, the merge gates failed on it. */
static void show_semantic(json_t *c)
{
	json_t *g, *ex;
	size_t i;

	printf("\nconflict (semantic): the merge gates failed on the merge:");
	json_array_foreach(json_object_get(c, "failed_gates"), i, g) {
		ex = json_object_get(g, "exit_code");
		printf("%s gate %s", i ? "," : "", js(g, "name"));
		if (json_is_integer(ex))
			printf(" (exit %lld)", (long long)json_integer_value(ex));
	}
	printf("\n");
	if (json_array_size(json_object_get(c, "rival_runs"))) {
		printf("  rival runs ahead of it:");
		json_array_foreach(json_object_get(c, "rival_runs"), i, g)
			printf(" %s", cli_esc(json_string_value(g)));
		printf("\n");
	}
	show_rival(c);
	json_array_foreach(json_object_get(c, "failed_gates"), i, g)
		if (*js(g, "output"))
			printf("  output of gate %s (its end):\n%s\n", js(g, "name"),
			       cli_esc_lines(json_string_value(json_object_get(g, "output")), 1));
}

static void show_conflict(json_t *d)
{
	json_t *c = json_object_get(d, "conflict"), *f;
	size_t i;

	if (!json_is_object(c))
		return;
	if (!strcmp(js(c, "kind"), "semantic")) {
		show_semantic(c);
		return;
	}
	printf("\nconflict in %zu file%s:", json_array_size(json_object_get(c, "files")),
	       json_array_size(json_object_get(c, "files")) == 1 ? "" : "s");
	json_array_foreach(json_object_get(c, "files"), i, f)
		printf(" %s", cli_esc(json_string_value(f)));
	printf("\n");
	show_rival(c);
	if (*js(c, "markers"))
		printf("  conflicted hunks%s:\n%s\n",
		       json_is_true(json_object_get(c, "markers_truncated")) ? " (truncated)" : "",
		       cli_esc_lines(json_string_value(json_object_get(c, "markers")), 1));
}

static void show_train_gates(json_t *t)
{
	json_t *g;
	size_t i;
	char el[32];

	json_array_foreach(json_object_get(t, "gates"), i, g) {
		cli_elapsed(el, sizeof(el), 1, 1 + json_integer_value(json_object_get(g, "duration_ms")));
		/* a gate's result, not a run state */
		printf("  merge gate %s: %s in %s%s\n", js(g, "name"),
		       json_is_true(json_object_get(g, "passed")) ? "passed" : "failed", el,
		       json_is_true(json_object_get(g, "timed_out")) ? " (timed out)" : "");
	}
}

/* "web, api" of the car's lanes (a static buffer). */
static const char *lane_names(json_t *t)
{
	static char buf[256];
	size_t i, len = 0;
	json_t *l;

	buf[0] = '\0';
	json_array_foreach(json_object_get(t, "lanes"), i, l)
		if (len < sizeof(buf))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? ", " : "",
						json_string_value(l) ? json_string_value(l) : "?");
	return buf;
}

/* The run's car in the merge train, or how it landed through it. */
static void show_train(json_t *d)
{
	json_t *t = json_object_get(d, "train");
	char el[32];

	if (!json_is_object(t))
		return;
	if (!strcmp(js(t, "source"), "train.json") && *js(t, "covered_by"))
		printf("\ntrain: landed through the merge train, %s; in a batch, covered by the "
		       "test of %s's car %.12s, which holds it (merge.batch)\n",
		       json_is_true(json_object_get(t, "green")) ? "green" : "NOT green",
		       js(t, "covered_by_work_order"), js(t, "tested_commit"));
	else if (!strcmp(js(t, "source"), "train.json") &&
		 strcmp(js(t, "tested_commit"), js(t, "commit")))
		printf("\ntrain: landed through the merge train, %s; tested as %.12s, on the tip "
		       "before another lane landed (merge.lanes)\n", json_is_true(json_object_get(t,
		       "green")) ? "green" : "NOT green", js(t, "tested_commit"));
	else if (!strcmp(js(t, "source"), "train.json"))
		printf("\ntrain: landed through the merge train, %s; the tested commit %.12s is the "
		       "merge commit\n", json_is_true(json_object_get(t, "green")) ? "green" :
		       "NOT green", js(t, "commit"));
	else if (json_is_integer(json_object_get(t, "position")))
		printf("\ntrain: car %lld of %lld, %s\n",
		       (long long)json_integer_value(json_object_get(t, "position")),
		       (long long)json_integer_value(json_object_get(t, "cars")), js(t, "status"));
	else
		printf("\ntrain: out of the line, %s\n", js(t, "status"));
	if (*js(t, "ahead"))
		printf("  on top of %s (run %s)\n", js(t, "ahead_work_order"), js(t, "ahead"));
	else
		printf("  on the tip of the target\n");
	printf("  base %.12s  commit %.12s  tree %.12s\n", *js(t, "base") ? js(t, "base") : "-",
	       *js(t, "commit") ? js(t, "commit") : "-", *js(t, "tree") ? js(t, "tree") : "-");
	show_train_gates(t);
	if (json_array_size(json_object_get(t, "lanes"))) /* docs/config.md, "Lanes" */
		printf("  in lane %s%s%.12s%s\n", lane_names(t), strcmp(js(t, "tested_commit"),
		       js(t, "commit")) && *js(t, "tested_commit") ? "; tested on " : "",
		       strcmp(js(t, "tested_commit"), js(t, "commit")) ? js(t, "tested_commit") : "",
		       strcmp(js(t, "tested_commit"), js(t, "commit")) && *js(t, "tested_commit") ?
		       ", before the tip moved: the lane's paths are the same in both trees" : "");
	if (*js(t, "covered_by") && strcmp(js(t, "source"), "train.json"))
		printf("  green in a batch: covered by the test of %s's car %.12s\n",
		       js(t, "covered_by_work_order"), js(t, "tested_commit"));
	if (*js(t, "tested_at")) {
		cli_elapsed(el, sizeof(el), 1, 1 + json_integer_value(json_object_get(t, "gates_ms")));
		printf("  tested at %s, gates took %s\n", js(t, "tested_at"), el);
	}
}

/* What the watch did about the run (docs/watch.md): a culprit, a revert or a fix-up. */
static void show_watch(json_t *d)
{
	json_t *e;
	size_t i;
	char line[1024];

	json_array_foreach(json_object_get(d, "watch"), i, e) {
		artifact_watch_line(e, line, sizeof(line));
		printf("%swatch: %s\n", i ? "" : "\n", line);
	}
}

static void show_tail(json_t *d)
{
	json_t *m = json_object_get(d, "merge"), *a;
	size_t i;

	if (json_is_object(m))
		printf("\nmerge: %s into %s at %s%s%s\n", js(m, "merge_commit"), js(m, "target"),
		       js(m, "merged_at"), *js(m, "resolved_with") ? ", resolved with " : "",
		       js(m, "resolved_with"));
	printf("\nworktree: %s\n", *js(d, "worktree") ? js(d, "worktree") : "none (removed or not made)");
	if (*js(d, "next"))
		printf("next: %s\n", js(d, "next"));
	if (json_is_true(json_object_get(d, "removed_by_gc"))) {
		printf("\nartifacts removed by gc (%s)\n", js(d, "artifacts_dir"));
		return;
	}
	printf("\nartifacts (%s):\n", js(d, "artifacts_dir"));
	json_array_foreach(json_object_get(d, "artifacts"), i, a)
		printf("  %s\n", js(a, "path"));
}

int cmd_show(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	struct sl_ctx ctx = SL_CTX_INIT;
	struct sl_err err = SL_ERR_INIT;
	json_t *d = NULL;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(show_help);
		if (!cli_common_opt(cli, c, optarg))
			return cli_usage("show", "unknown option");
	}
	if (argc - optind != 1)
		return cli_usage("show", "name one run");
	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	if (artifact_dossier(&ctx, argv[optind], &d, &err) != 0) {
		rc = cli_report(&err);
	} else if (cli->json) {
		rc = cli_print_json(d);
	} else {
		show_head(d);
		show_timeline(d);
		show_attempts(d);
		show_jobs(d);
		show_usage(d);
		printf("\n");
		show_gates(json_object_get(d, "gates"), "");
		show_verdict(json_object_get(d, "verdict"), "");
		show_summary(d);
		show_diffstat(d);
		show_conflict(d);
		show_train(d);
		show_watch(d);
		show_tail(d);
	}
	json_decref(d);
	runner_ctx_release(&ctx);
	return rc;
}
