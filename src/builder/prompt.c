/* The builder's prompt (builder.h): build mode, template overrides, resolve mode. */
#include "builder/builder.h"
#include "core/fs.h"
#include "core/template.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char preamble[] =
	"You are the builder of the work order below, run by sluice, a review-gated merge\n"
	"service. What you must do:\n"
	"\n"
	"- Work in the current directory: a git worktree on a branch made for this work order\n"
	"  only. Do not switch branches, do not rewrite history below the commit you started\n"
	"  from, and do not touch files outside this directory.\n"
	"- Make the changes the work order asks for and leave them uncommitted: sluice commits\n"
	"  what you leave when you exit. Do not run `git commit` (your sandbox may not let you\n"
	"  write the repository's .git, which is outside this directory).\n"
	"- Meet every acceptance criterion; stay inside the non-goals; if a stop condition is\n"
	"  met, stop and say why.\n"
	"- End with a short summary of what you changed and why as your final answer: sluice\n"
	"  keeps it as the run's summary, and the reviewer reads it with the diff. (A builder\n"
	"  that may write outside this directory can write it to $SLUICE_SUMMARY_FILE.)\n"
	"- Exit 0 when done. A non-zero exit counts as a failed attempt.\n";

/* ---- bounded pieces */

static void fenced(struct sl_buf *b, const char *lang, const char *text)
{
	size_t run = 0, longest = 0, len = strlen(text);
	char fence[64];

	for (const char *p = text; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	longest = longest < 3 ? 3 : longest + 1;
	if (longest >= sizeof(fence))
		longest = sizeof(fence) - 1;
	memset(fence, '`', longest);
	fence[longest] = '\0';
	sl_buf_addf(b, "%s%s\n%s%s%s\n\n", fence, lang ? lang : "", text,
		    len && text[len - 1] != '\n' ? "\n" : "", fence);
}

/* Skip UTF-8 continuation bytes so a cut never starts mid-character. */
static const char *utf8_start(const char *p)
{
	while ((*p & 0xC0) == 0x80)
		p++;
	return p;
}

static void head_text(struct sl_buf *out, const char *text, size_t max, const char *what)
{
	size_t len = strlen(text), cut = len;

	if (len > max) {
		cut = max;
		while (cut > 0 && (text[cut] & 0xC0) == 0x80)
			cut--;
	}
	sl_buf_add(out, text, cut);
	if (cut < len)
		sl_buf_addf(out, "\n[... %s truncated: %zu of %zu bytes shown ...]\n", what, cut,
			    len);
}

static void tail_text(struct sl_buf *out, const char *text, size_t max, const char *what)
{
	size_t len = strlen(text);

	if (len <= max) {
		sl_buf_puts(out, text);
		return;
	}
	sl_buf_addf(out, "[... %s truncated: the last %zu of %zu bytes follow ...]\n", what, max,
		    len);
	sl_buf_puts(out, utf8_start(text + len - max));
}

/* ---- the automatic retry section */

static void retry_gates(struct sl_buf *b, const struct build_gate_results *g)
{
	struct sl_buf tail = SL_BUF_INIT;
	size_t failed = 0;

	for (size_t i = 0; g && i < g->n; i++)
		failed += !g->v[i].passed;
	if (!failed)
		return;
	sl_buf_puts(b, "### Failed gates\n\n");
	for (size_t i = 0; i < g->n; i++) {
		const struct build_gate_result *r = &g->v[i];

		if (r->passed)
			continue;
		sl_buf_addf(b, "Gate `%s` %s%s (exit %d). The end of its output:\n\n", r->name,
			    r->timed_out ? "timed out" : "failed", /* a gate's: not a run state */
			    r->error ? ": could not start" : "", r->exit_code);
		sl_buf_reset(&tail);
		tail_text(&tail, r->output ? r->output : "", BUILD_PROMPT_GATE_MAX, "output");
		fenced(b, "", sl_buf_cstr(&tail));
	}
	sl_buf_release(&tail);
}

static void retry_section(struct sl_buf *b, const struct build_prompt_ctx *c)
{
	struct sl_buf part = SL_BUF_INIT;

	sl_buf_addf(b, "## Retry: this is attempt %d\n\n", c->attempt);
	sl_buf_addf(b, "Attempt %d failed: ", c->attempt - 1);
	head_text(b, c->error && *c->error ? c->error : "(no reason recorded)",
			    BUILD_PROMPT_TEXT_MAX, "reason");
	sl_buf_puts(b, "\n\nFix what failed and keep what was right. The worktree holds the\n"
		       "previous attempt's work unless a retry rule reset it.\n\n");
	retry_gates(b, c->gates);
	if (c->review_comments && *c->review_comments) {
		sl_buf_puts(b, "### The reviewer's comments\n\n");
		head_text(b, c->review_comments, BUILD_PROMPT_TEXT_MAX, "comments");
		sl_buf_puts(b, "\n\n");
	}
	if (c->diff && *c->diff) {
		sl_buf_puts(b, "### The previous attempt's diff\n\n");
		head_text(&part, c->diff, BUILD_PROMPT_DIFF_MAX, "diff");
		fenced(b, "diff", sl_buf_cstr(&part));
	}
	sl_buf_release(&part);
}

/* The work order's id: its field, else the front matter's "id:" line, else "?". */
static void wo_id(char *out, size_t n, const struct build_prompt_ctx *c)
{
	const char *id = json_string_value(json_object_get(c->work_order, "id"));
	const char *t = c->work_order_text, *p;

	snprintf(out, n, "?");
	if (id) {
		snprintf(out, n, "%s", id);
		return;
	}
	if (!t || strncmp(t, "---\n", 4) != 0)
		return;
	p = t + 4;
	while (p && *p && strncmp(p, "---", 3) != 0) {
		if (strncmp(p, "id:", 3) == 0) {
			p += 3 + strspn(p + 3, " \t\"'");
			snprintf(out, n, "%.*s", (int)strcspn(p, " \t\"'\r\n"), p);
			return;
		}
		if ((p = strchr(p, '\n')) != NULL)
			p++;
	}
}

/* ---- a retry rule's prompt template */

struct vars {
	const struct build_prompt_ctx *c;
	char *owned[64];  /* values made for this render, freed after it */
	size_t nowned;
};

static const char *keep(struct vars *v, char *s)
{
	if (!s)
		return NULL;
	if (v->nowned == sizeof(v->owned) / sizeof(*v->owned)) {
		free(s);
		return "";
	}
	return v->owned[v->nowned++] = s;
}

/* A front-matter value as text: strings as they are, lists as "- item" lines. */
static char *json_text(json_t *j)
{
	struct sl_buf b = SL_BUF_INIT;
	size_t i;
	json_t *e;

	if (!j || json_is_null(j))
		return strdup("");
	if (json_is_string(j))
		return strdup(json_string_value(j));
	if (!json_is_array(j))
		return json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
	json_array_foreach(j, i, e) {
		char *t = json_text(e);

		sl_buf_addf(&b, "%s- %s", i ? "\n" : "", t ? t : "");
		free(t);
	}
	return b.ptr ? sl_buf_detach(&b) : strdup("");
}

static const struct build_gate_result *find_gate(const struct build_gate_results *g,
						  const char *name, size_t len)
{
	for (size_t i = 0; g && i < g->n; i++)
		if (strlen(g->v[i].name) == len && strncmp(g->v[i].name, name, len) == 0)
			return &g->v[i];
	return NULL;
}

static const char *gate_var(struct vars *v, const char *rest)
{
	const char *dot = strrchr(rest, '.');
	const struct build_gate_result *r = NULL;
	struct sl_buf b = SL_BUF_INIT;
	char *num = NULL;

	if (dot)
		r = find_gate(v->c->gates, rest, (size_t)(dot - rest));
	if (!r)
		return ""; /* a configured gate that did not run */
	if (strcmp(dot, ".exit") == 0)
		return asprintf(&num, "%d", r->exit_code) < 0 ? "" : keep(v, num);
	tail_text(&b, r->output ? r->output : "", BUILD_PROMPT_GATE_MAX, "output");
	return b.ptr ? keep(v, sl_buf_detach(&b)) : "";
}

static const char *bounded(struct vars *v, const char *text, size_t max, const char *what)
{
	struct sl_buf b = SL_BUF_INIT;

	head_text(&b, text ? text : "", max, what);
	return b.ptr ? keep(v, sl_buf_detach(&b)) : "";
}

static const char *lookup(const char *name, void *data)
{
	struct vars *v = data;
	char *num = NULL;

	if (!sl_template_prompt_var_known(name, NULL))
		return NULL;
	if (strncmp(name, "work_order.", 11) == 0)
		return keep(v, json_text(json_object_get(v->c->work_order, name + 11)));
	if (strncmp(name, "gate.", 5) == 0)
		return gate_var(v, name + 5);
	if (strcmp(name, "attempt") == 0)
		return asprintf(&num, "%d", v->c->attempt) < 0 ? "" : keep(v, num);
	if (strcmp(name, "error") == 0)
		return bounded(v, v->c->error, BUILD_PROMPT_TEXT_MAX, "reason");
	if (strcmp(name, "diff") == 0)
		return bounded(v, v->c->diff, BUILD_PROMPT_DIFF_MAX, "diff");
	return bounded(v, v->c->review_comments, BUILD_PROMPT_TEXT_MAX, "comments");
}

static int render_override(struct sl_buf *b, const struct build_prompt_ctx *c, const char *tmpl,
			   struct sl_err *err)
{
	struct vars v = { .c = c };
	int error = sl_template_render(b, tmpl, lookup, &v, err);

	for (size_t i = 0; i < v.nowned; i++)
		free(v.owned[i]);
	return error;
}

int build_prompt_render_template(struct sl_buf *out, const struct build_prompt_ctx *c,
				 const char *tmpl, struct sl_err *err)
{
	return render_override(out, c, tmpl, err);
}

/* ---- resolve mode: the seed's conflict-resolution prompt */

static const char resolve_how[] =
	"How:\n"
	"\n"
	"- The current directory is your run's worktree. The target branch has been merged\n"
	"  into it; the conflicting files hold git's conflict markers (<<<<<<<, =======,\n"
	"  >>>>>>>).\n"
	"- Edit every conflicting file so that no marker remains and both intents are kept.\n"
	"  Do not abort the merge, reset, or switch branches: sluice checks that no marker and\n"
	"  no unmerged path remain, commits, runs the gates and sends the resolution to the\n"
	"  reviewer again.\n"
	"- End with your resolution reasoning as your final answer (or write it to\n"
	"  $SLUICE_SUMMARY_FILE): sluice keeps it as the run's summary.\n"
	"- Exit 0 when done. A non-zero exit counts as a failed resolution.\n\n";

/* The seed's words (seeds/003). */
static const char resolve_task[] =
	"\nYour task:\n"
	"- Understand both intents\n"
	"- Resolve the conflict preserving both goals where possible\n"
	"- If goals are mutually exclusive, preserve the higher-priority work order's intent\n"
	"- Document your resolution reasoning\n\n";

static const char *str_field(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* A run's work order id, title and priority (0: none) from its workOrder. */
static void run_wo(json_t *run, const char **id, const char **title, int *prio)
{
	json_t *wo = json_object_get(run, "workOrder");
	json_t *p = json_object_get(wo, "priority");

	*id = str_field(wo, "id");
	*title = str_field(wo, "title");
	*prio = json_is_integer(p) ? (int)json_integer_value(p) : 0;
	if (!**id)
		*id = str_field(run, "workOrderId");
	if (!**id)
		*id = str_field(run, "id");
}

static void run_line(struct sl_buf *b, const char *label, json_t *run)
{
	const char *id, *title, *summary = str_field(run, "builderSummary");
	int prio;

	run_wo(run, &id, &title, &prio);
	sl_buf_addf(b, "%s (%s", label, id);
	if (prio)
		sl_buf_addf(b, ", priority %d", prio);
	if (*str_field(run, "mergedAt"))
		sl_buf_addf(b, ", merged at %s", str_field(run, "mergedAt"));
	sl_buf_addf(b, "): %s\n", title);
	head_text(b, *summary ? summary : "(the builder left no summary; read the diff below)",
		  BUILD_PROMPT_TEXT_MAX, "summary");
	sl_buf_puts(b, "\n\n");
}

static void priority_note(struct sl_buf *b, json_t *cur, json_t *rival)
{
	const char *a, *b_id, *t;
	int pa, pb;

	run_wo(cur, &a, &t, &pa);
	run_wo(rival, &b_id, &t, &pb);
	if (pa && pb && pa != pb)
		sl_buf_addf(b, "Priority: %s (priority %d) is the more urgent work order "
			    "(1 is most urgent).\n\n", pa < pb ? a : b_id, pa < pb ? pa : pb);
	else if (pa && pb)
		sl_buf_addf(b, "Priority: both work orders have priority %d; if their goals "
			    "exclude each other, keep the merged run's behaviour and explain "
			    "in summary.md.\n\n", pa);
}

/* A run's work order (its exact text when given, else its fields) and diff. */
static void run_details(struct sl_buf *b, const char *heading, json_t *run, const char *wo_text)
{
	json_t *wo = json_object_get(run, "workOrder");
	struct sl_buf part = SL_BUF_INIT;
	char *text = NULL;
	int markdown = (wo_text && *wo_text) || json_is_string(wo);

	sl_buf_addf(b, "## %s: run %s\n\n### Work order\n\n", heading, str_field(run, "id"));
	if (wo_text && *wo_text)
		text = strdup(wo_text);
	else if (json_is_string(wo))
		text = strdup(json_string_value(wo));
	else if (wo)
		text = json_dumps(wo, JSON_INDENT(2) | JSON_ENCODE_ANY);
	head_text(&part, text ? text : "(not recorded)", BUILD_PROMPT_TEXT_MAX, "work order");
	fenced(b, markdown ? "markdown" : "json", sl_buf_cstr(&part));
	free(text);
	sl_buf_reset(&part);
	sl_buf_puts(b, "### Diff\n\n");
	head_text(&part, str_field(run, "diff"), BUILD_PROMPT_DIFF_MAX, "diff");
	fenced(b, "diff", sl_buf_cstr(&part));
	sl_buf_release(&part);
}

/* Where a rival of conflictingRuns changed the conflicting lines, from its "lines". */
static void rival_where(struct sl_buf *b, json_t *rv)
{
	json_t *l = json_object_get(rv, "lines");
	json_int_t line = json_integer_value(json_object_get(l, "line"));
	json_int_t n = json_integer_value(json_object_get(l, "lines"));

	if (!strcmp(str_field(l, "by"), "file"))
		sl_buf_addf(b, "(It changed %s; git blame named nobody for the conflicting "
			    "lines.)\n\n", *str_field(l, "path") ? str_field(l, "path") : "the files");
	else if (line > 0)
		sl_buf_addf(b, "(It last changed %lld of the conflicting lines on the target, from "
			    "%s:%lld.)\n\n", (long long)n, str_field(l, "path"), (long long)line);
}

/*
 * Every rival of conflictingRuns, one line each: who last changed the
 * conflicting lines on the target, a run or a person's commit. 0 when the
 * context has none (an older context: conflictingRun alone).
 */
static int rival_lines(struct sl_buf *b, json_t *rivals)
{
	json_t *rv, *p;
	size_t i;

	json_array_foreach(rivals, i, rv) {
		p = json_object_get(rv, "person");
		if (json_is_object(p))
			sl_buf_addf(b, "Conflicting commit by a person, not a sluice run (%s, commit "
				    "%s): %s\nKeep its intent as well.\n",
				    str_field(p, "author"), str_field(p, "commit"),
				    str_field(p, "subject"));
		else
			run_line(b, "Conflicting run", rv);
		rival_where(b, rv);
	}
	return json_array_size(rivals) > 0;
}

/* The work order and diff of every rival of conflictingRuns (0: none). */
static int rival_details(struct sl_buf *b, json_t *rivals)
{
	struct sl_buf part = SL_BUF_INIT;
	json_t *rv, *p;
	size_t i;

	json_array_foreach(rivals, i, rv) {
		p = json_object_get(rv, "person");
		if (!json_is_object(p)) {
			run_details(b, "Conflicting run", rv, NULL);
			continue;
		}
		sl_buf_addf(b, "## Conflicting commit by a person: commit %s\n\n%s: %s\n\n"
			    "### Diff\n\n", str_field(p, "commit"), str_field(p, "author"),
			    str_field(p, "subject"));
		sl_buf_reset(&part);
		head_text(&part, str_field(rv, "diff"), BUILD_PROMPT_DIFF_MAX, "diff");
		fenced(b, "diff", sl_buf_cstr(&part));
	}
	sl_buf_release(&part);
	return json_array_size(rivals) > 0;
}

static const char semantic_how[] =
	"How:\n"
	"\n"
	"- The current directory is your run's worktree. The target branch has been merged\n"
	"  into it without a textual conflict, but the merge gates failed on the merged code\n"
	"  (their output is below): the two changes do not work together (a renamed function\n"
	"  still called by its old name, a changed interface, a test that now fails).\n"
	"- Change the code so that the gates pass and both intents are kept. Do not abort\n"
	"  the merge, reset, switch branches or commit: sluice commits, runs the gates and\n"
	"  sends the resolution to the reviewer again, then tests the merge again.\n"
	"- End with your resolution reasoning as your final answer (or write it to\n"
	"  $SLUICE_SUMMARY_FILE): sluice keeps it as the run's summary.\n"
	"- Exit 0 when done. A non-zero exit counts as a failed resolution.\n\n";

/* A semantic conflict: the failed merge gates and their output's tail. */
static void failed_gates(struct sl_buf *b, json_t *conflict)
{
	struct sl_buf part = SL_BUF_INIT;
	json_t *g;
	size_t i;

	sl_buf_puts(b, "## The merge gates that failed on the merged code\n\n");
	json_array_foreach(json_object_get(conflict, "failedGates"), i, g) {
		sl_buf_addf(b, "### Gate %s (exit %d)\n\n", str_field(g, "name"),
			    (int)json_integer_value(json_object_get(g, "exit_code")));
		sl_buf_reset(&part);
		head_text(&part, str_field(g, "output"), BUILD_PROMPT_DIFF_MAX, "gate output");
		fenced(b, "", sl_buf_cstr(&part));
	}
	sl_buf_release(&part);
}

/* The rival of an older context (conflictingRun alone), or none at all. */
static void no_rival_line(struct sl_buf *b, json_t *conflict, json_t *rival)
{
	if (json_is_object(rival))
		run_line(b, "Conflicting run", rival);
	else
		sl_buf_addf(b, "Conflicting run: none; the conflicting changes on '%s' were not "
			    "made by a sluice run (a person's commits). Keep their intent as "
			    "well.\n\n",
			    *str_field(conflict, "target") ? str_field(conflict, "target") :
			    "the target branch");
}

static int render_resolve(struct sl_buf *b, const struct build_prompt_ctx *c, struct sl_err *err)
{
	json_t *cur = json_object_get(c->conflict, "currentRun");
	json_t *rival = json_object_get(c->conflict, "conflictingRun");
	json_t *files = json_object_get(c->conflict, "conflictFiles"), *f;
	struct sl_buf part = SL_BUF_INIT;
	const char *id, *title;
	int prio, semantic;
	size_t i;

	if (!json_is_object(cur))
		return sl_err_set(err, SL_EINVALID, "the conflict context has no currentRun; "
				  "the conflict is not recorded: a person must decide");
	run_wo(cur, &id, &title, &prio);
	semantic = !strcmp(str_field(c->conflict, "kind"), "semantic");
	sl_buf_addf(b, "# sluice: resolve a %s conflict of work order %s, attempt %d\n\n",
		    semantic ? "semantic" : "merge", id, c->attempt);
	sl_buf_puts(b, semantic ? "You are resolving a semantic conflict: your change merges "
				  "cleanly with the target, but the merged code fails its "
				  "gates.\n\n"
				: "You are resolving a merge conflict.\n\n");
	run_line(b, "Your run", cur);
	if (!rival_lines(b, json_object_get(c->conflict, "conflictingRuns")))
		no_rival_line(b, c->conflict, rival);
	if (!semantic) {
		sl_buf_puts(b, "Conflicting files:\n");
		json_array_foreach(files, i, f)
			sl_buf_addf(b, "- %s\n", json_string_value(f) ? json_string_value(f) : "?");
	}
	sl_buf_puts(b, resolve_task);
	if (json_is_object(rival))
		priority_note(b, cur, rival);
	sl_buf_puts(b, semantic ? semantic_how : resolve_how);
	if (semantic)
		failed_gates(b, c->conflict);
	run_details(b, "Your run", cur, c->work_order_text);
	if (!rival_details(b, json_object_get(c->conflict, "conflictingRuns")) &&
	    json_is_object(rival))
		run_details(b, "Conflicting run", rival, NULL);
	if (semantic)
		return 0;
	sl_buf_puts(b, "## Git's conflict output\n\n");
	head_text(&part, str_field(c->conflict, "gitConflictOutput"), BUILD_PROMPT_DIFF_MAX,
		  "conflict output");
	fenced(b, "", sl_buf_cstr(&part));
	sl_buf_release(&part);
	return 0;
}

static int render_build(struct sl_buf *b, const struct build_prompt_ctx *c, struct sl_err *err)
{
	const char *text = c->work_order_text ? c->work_order_text : "";
	size_t len = strlen(text);
	char id[128];
	int error = 0;

	wo_id(id, sizeof(id), c);
	sl_buf_addf(b, "# sluice: build work order %s, attempt %d\n\n", id, c->attempt);
	sl_buf_puts(b, preamble);
	sl_buf_puts(b, "\nThe work order, exactly as written (front matter and body), is between\n"
		       "the two marker lines:\n\n----- work order -----\n");
	sl_buf_puts(b, text);
	if (len && text[len - 1] != '\n')
		sl_buf_puts(b, "\n");
	sl_buf_puts(b, "----- end of work order -----\n\n");
	if (c->attempt <= 1)
		return 0;
	if (!c->prompt_override) {
		retry_section(b, c);
		return 0;
	}
	sl_buf_addf(b, "## Retry: this is attempt %d\n\n", c->attempt);
	error = render_override(b, c, c->prompt_override, err);
	sl_buf_puts(b, "\n");
	return error;
}

int build_prompt_render(struct sl_buf *out, const struct build_prompt_ctx *c, struct sl_err *err)
{
	struct sl_buf b;
	int error;

	sl_buf_init(&b, out->max ? out->max : BUILD_PROMPT_MAX);
	if (c->mode == RUN_MODE_RESOLVE)
		error = render_resolve(&b, c, err);
	else if (c->mode == RUN_MODE_BUILD)
		error = render_build(&b, c, err);
	else
		error = sl_err_set(err, SL_EINVALID, "unknown builder mode %d", (int)c->mode);
	if (!error && b.len + 1 >= b.max)
		error = sl_err_set(err, SL_ETOOBIG, "the prompt is too large (over %zu bytes); "
				   "shorten the work order or the retry prompt", b.max);
	if (!error && sl_buf_add(out, b.ptr ? b.ptr : "", b.len) < 0)
		error = sl_err_set(err, SL_ETOOBIG, "the prompt does not fit its buffer");
	sl_buf_release(&b);
	return error;
}

int build_prompt_write(const char *run_dir, const struct build_prompt_ctx *c, char **path_out,
			struct sl_err *err)
{
	struct sl_buf text = SL_BUF_INIT;
	char *dir = NULL, *path = NULL;
	int error;

	if (path_out)
		*path_out = NULL;
	if (asprintf(&dir, "%s/attempts/%d", run_dir, c->attempt) < 0) {
		dir = NULL;
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if (!(path = sl_path_join(dir, "prompt.md"))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = build_prompt_render(&text, c, err)) < 0 ||
	    (error = sl_mkdir_p(dir, err)) < 0 ||
	    (error = sl_write_file_atomic(path, sl_buf_cstr(&text), text.len, err)) < 0)
		goto out;
	if (path_out) {
		*path_out = path;
		path = NULL;
	}
out:
	sl_buf_release(&text);
	free(dir);
	free(path);
	return error;
}
