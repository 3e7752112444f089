/* Prompt rendering: build, automatic retry context, template override, resolve. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/fs.h"
#include "builder/builder.h"

static const char wo_text[] =
	"---\n"
	"id: WO-7\n"
	"title: Add login\n"
	"priority: 2\n"
	"acceptance_criteria:\n"
	"  - users can log in\n"
	"  - bad passwords are refused\n"
	"---\n"
	"## Body\n\nDo it well.\n";

static json_t *wo_fields(void)
{
	return json_pack("{s:s, s:s, s:i, s:[s,s]}", "id", "WO-7", "title", "Add login", "priority",
			 2, "acceptance_criteria", "users can log in", "bad passwords are refused");
}

static char s_test[] = "test", s_lint[] = "lint", s_log[] = "gates/x.log";

static void render(const struct build_prompt_ctx *c, struct sl_buf *out)
{
	struct sl_err err = SL_ERR_INIT;

	if (build_prompt_render(out, c, &err) < 0)
		fail_msg("%s", err.msg);
}

static void test_first_attempt(void **state)
{
	struct build_prompt_ctx c = BUILD_PROMPT_CTX_INIT;
	struct sl_buf out = SL_BUF_INIT;
	json_t *wo = wo_fields();

	c.work_order_text = wo_text;
	c.work_order = wo;
	c.attempt = 1;
	c.error = "ignored on attempt 1";
	render(&c, &out);
	assert_true(strncmp(out.ptr, "# sluice: build work order WO-7, attempt 1\n", 43) == 0);
	assert_non_null(strstr(out.ptr, "$SLUICE_SUMMARY_FILE"));
	assert_non_null(strstr(out.ptr, "acceptance criterion"));
	assert_non_null(strstr(out.ptr, "stop condition"));
	assert_non_null(strstr(out.ptr, "----- work order -----\n---\nid: WO-7\n"));
	assert_non_null(strstr(out.ptr, "Do it well.\n----- end of work order -----\n"));
	assert_null(strstr(out.ptr, "Retry"));
	assert_null(strstr(out.ptr, "ignored on attempt 1"));
	json_decref(wo);
	sl_buf_release(&out);
}

static void test_retry_context(void **state)
{
	struct build_gate_result g[] = {
		{ s_test, NULL, 1, 0, 0, 10, s_log, NULL, NULL, NULL },
		{ s_lint, NULL, 0, 1, 0, 10, s_log, NULL, NULL, NULL },
	};
	struct build_gate_results gates = { g, 2, 0 };
	struct build_prompt_ctx c = BUILD_PROMPT_CTX_INIT;
	struct sl_buf out = SL_BUF_INIT;
	char *big = malloc(BUILD_PROMPT_GATE_MAX * 3);
	char diff[] = "--- a/f\n+++ b/f\n+```code```\n";

	memset(big, 'o', BUILD_PROMPT_GATE_MAX * 3 - 6);
	strcpy(big + BUILD_PROMPT_GATE_MAX * 3 - 6, "FAIL\n");
	g[0].output = big;
	g[1].output = (char *)"lint is fine";
	c.work_order_text = wo_text;
	c.attempt = 3;
	c.error = "gate 'test' failed on attempt 2";
	c.gates = &gates;
	c.review_comments = "Please handle empty passwords.";
	c.diff = diff;
	render(&c, &out);
	assert_non_null(strstr(out.ptr, "## Retry: this is attempt 3\n"));
	assert_non_null(strstr(out.ptr, "Attempt 2 failed: gate 'test' failed on attempt 2"));
	assert_non_null(strstr(out.ptr, "Gate `test` failed (exit 1)"));
	assert_non_null(strstr(out.ptr, "the last 8192 of"));
	assert_non_null(strstr(out.ptr, "oooFAIL\n"));
	assert_null(strstr(out.ptr, "lint is fine"));
	assert_non_null(strstr(out.ptr, "Please handle empty passwords."));
	/* the diff holds three backticks, so its fence has four */
	assert_non_null(strstr(out.ptr, "````diff\n--- a/f\n"));
	assert_non_null(strstr(out.ptr, "+```code```\n````\n"));
	/* the work order is still there */
	assert_non_null(strstr(out.ptr, "Do it well.\n"));
	free(big);
	sl_buf_release(&out);
}

static void test_diff_bounded(void **state)
{
	struct build_prompt_ctx c = BUILD_PROMPT_CTX_INIT;
	struct sl_buf out = SL_BUF_INIT;
	size_t n = BUILD_PROMPT_DIFF_MAX * 4;
	char *diff = malloc(n + 1);

	memset(diff, '+', n);
	diff[n] = '\0';
	c.work_order_text = wo_text;
	c.attempt = 2;
	c.diff = diff;
	render(&c, &out);
	assert_non_null(strstr(out.ptr, "[... diff truncated: 65536 of 262144 bytes shown ...]"));
	assert_true(out.len < BUILD_PROMPT_DIFF_MAX + 8192);
	assert_non_null(strstr(out.ptr, "(no reason recorded)"));
	free(diff);
	sl_buf_release(&out);
}

static void test_override(void **state)
{
	struct build_gate_result g[] = { { s_test, NULL, 4, 0, 0, 10, s_log, NULL, NULL, NULL } };
	struct build_gate_results gates = { g, 1, 0 };
	struct build_prompt_ctx c = BUILD_PROMPT_CTX_INIT;
	struct sl_buf out = SL_BUF_INIT;
	json_t *wo = wo_fields();

	g[0].output = (char *)"1 test failed";
	c.work_order_text = wo_text;
	c.work_order = wo;
	c.attempt = 4;
	c.error = "boom";
	c.gates = &gates;
	c.review_comments = "too slow";
	c.prompt_override = "Fix {error} in {work_order.title} (priority {work_order.priority}).\n"
			    "Criteria:\n{work_order.acceptance_criteria}\n"
			    "test exit {gate.test.exit}: {gate.test.output}; lint: [{gate.lint.output}]\n"
			    "review: {review.comments}; attempt {attempt}; {{literal}}; "
			    "missing: [{work_order.nope}]";
	render(&c, &out);
	assert_non_null(strstr(out.ptr,
		"## Retry: this is attempt 4\n\n"
		"Fix boom in Add login (priority 2).\n"
		"Criteria:\n- users can log in\n- bad passwords are refused\n"
		"test exit 4: 1 test failed; lint: []\n"
		"review: too slow; attempt 4; {literal}; missing: []\n"));
	/* no automatic retry section */
	assert_null(strstr(out.ptr, "### Failed gates"));
	assert_null(strstr(out.ptr, "Attempt 3 failed"));
	/* the work order is still there */
	assert_non_null(strstr(out.ptr, "----- work order -----\n---\nid: WO-7\n"));
	json_decref(wo);
	sl_buf_release(&out);
}

static void test_override_unknown(void **state)
{
	struct build_prompt_ctx c = BUILD_PROMPT_CTX_INIT;
	struct sl_buf out = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;

	c.work_order_text = wo_text;
	c.attempt = 2;
	c.prompt_override = "Fix {task.files}";
	assert_int_equal(build_prompt_render(&out, &c, &err), SL_EINVALID);
	assert_non_null(strstr(err.msg, "'{task.files}'"));
	assert_int_equal(out.len, 0);
	sl_buf_release(&out);
}

static json_t *conflict_ctx(void)
{
	return json_pack(
		"{s:{s:s, s:{s:s, s:s, s:i}, s:s, s:s},"
		" s:{s:s, s:{s:s, s:s, s:i}, s:s, s:s, s:s},"
		" s:[s,s], s:s}",
		"currentRun", "id", "r-cur", "workOrder", "id", "WO-A", "title", "Add login", "priority",
		1, "diff", "+login\n", "builderSummary", "Added a login form.",
		"conflictingRun", "id", "r-riv", "workOrder", "id", "WO-B", "title", "Add signup",
		"priority", 2, "diff", "+signup\n", "builderSummary", "Added signup.", "mergedAt",
		"2026-11-21T10:00:00Z",
		"conflictFiles", "app.c", "README.md",
		"gitConflictOutput", "<<<<<<< ours\nlogin\n=======\nsignup\n>>>>>>> theirs\n");
}

static void test_resolve(void **state)
{
	struct build_prompt_ctx c = BUILD_PROMPT_CTX_INIT;
	struct sl_buf out = SL_BUF_INIT;
	json_t *cc = conflict_ctx();

	c.mode = RUN_MODE_RESOLVE;
	c.attempt = 1;
	c.conflict = cc;
	render(&c, &out);
	assert_true(strncmp(out.ptr, "# sluice: resolve a merge conflict of work order WO-A", 53) == 0);
	assert_non_null(strstr(out.ptr,
		"You are resolving a merge conflict.\n\n"
		"Your run (WO-A, priority 1): Add login\nAdded a login form.\n\n"
		"Conflicting run (WO-B, priority 2, merged at 2026-11-21T10:00:00Z): Add signup\n"
		"Added signup.\n\n"
		"Conflicting files:\n- app.c\n- README.md\n\n"
		"Your task:\n- Understand both intents\n"
		"- Resolve the conflict preserving both goals where possible\n"
		"- If goals are mutually exclusive, preserve the higher-priority work order's intent\n"
		"- Document your resolution reasoning\n\n"
		"Priority: WO-A (priority 1) is the more urgent work order"));
	assert_non_null(strstr(out.ptr, "no marker"));
	assert_non_null(strstr(out.ptr, "$SLUICE_SUMMARY_FILE"));
	assert_non_null(strstr(out.ptr, "```diff\n+signup\n```\n"));
	assert_non_null(strstr(out.ptr, "<<<<<<< ours\nlogin\n"));
	json_decref(cc);
	sl_buf_release(&out);
}

static void test_resolve_no_rival(void **state)
{
	struct build_prompt_ctx c = BUILD_PROMPT_CTX_INIT;
	struct sl_buf out = SL_BUF_INIT;
	json_t *cc = conflict_ctx();

	json_object_set_new(cc, "conflictingRun", json_null());
	json_object_set_new(cc, "target", json_string("main"));
	c.mode = RUN_MODE_RESOLVE;
	c.attempt = 2;
	c.conflict = cc;
	c.work_order_text = wo_text;
	render(&c, &out);
	assert_non_null(strstr(out.ptr, "Conflicting run: none; the conflicting changes on 'main'"));
	assert_null(strstr(out.ptr, "Priority:"));
	/* the current run's work order is its exact text */
	assert_non_null(strstr(out.ptr, "```markdown\n---\nid: WO-7\n"));
	json_decref(cc);
	sl_buf_release(&out);
}

/* conflictingRuns: every rival, a run and a person's commit, with where each clashed */
static void test_resolve_every_rival(void **state)
{
	struct build_prompt_ctx c = BUILD_PROMPT_CTX_INIT;
	struct sl_buf out = SL_BUF_INIT;
	json_t *cc = conflict_ctx(), *riv = json_deep_copy(json_object_get(cc, "conflictingRun"));

	json_object_set_new(riv, "lines", json_pack("{s:s, s:i, s:i, s:s}", "path", "app.c", "line",
						    10, "lines", 3, "by", "lines"));
	json_object_set_new(cc, "conflictingRuns", json_pack(
		"[o, {s:n, s:{s:s, s:s, s:s}, s:n, s:s, s:s, s:{s:s, s:i, s:i, s:s}}]", riv, "id",
		"person", "commit", "0123abcd", "author", "Pat Person <pat@x>", "subject",
		"fix by hand", "workOrder", "diff", "+by hand\n", "builderSummary", "", "lines",
		"path", "app.c", "line", 500, "lines", 1, "by", "lines"));
	c.mode = RUN_MODE_RESOLVE;
	c.attempt = 1;
	c.conflict = cc;
	render(&c, &out);
	assert_non_null(strstr(out.ptr,
		"Conflicting run (WO-B, priority 2, merged at 2026-11-21T10:00:00Z): Add signup\n"
		"Added signup.\n\n"
		"(It last changed 3 of the conflicting lines on the target, from app.c:10.)\n\n"
		"Conflicting commit by a person, not a sluice run (Pat Person <pat@x>, commit "
		"0123abcd): fix by hand\nKeep its intent as well.\n"
		"(It last changed 1 of the conflicting lines on the target, from app.c:500.)\n\n"
		"Conflicting files:"));
	assert_non_null(strstr(out.ptr, "## Conflicting run: run r-riv\n"));
	assert_non_null(strstr(out.ptr, "## Conflicting commit by a person: commit 0123abcd\n\n"
					"Pat Person <pat@x>: fix by hand\n\n### Diff\n\n"
					"```diff\n+by hand\n```\n"));
	assert_non_null(strstr(out.ptr, "Priority: WO-A (priority 1)"));
	json_decref(cc);
	sl_buf_release(&out);
}

static void test_id_from_text(void **state)
{
	struct build_prompt_ctx c = BUILD_PROMPT_CTX_INIT;
	struct sl_buf out = SL_BUF_INIT;

	c.work_order_text = "---\ntitle: x\nid: \"WO-9\"\n---\nid: not-this\n";
	c.attempt = 1;
	render(&c, &out);
	assert_true(strncmp(out.ptr, "# sluice: build work order WO-9, attempt 1\n", 43) == 0);
	sl_buf_release(&out);
}

static void test_resolve_needs_context(void **state)
{
	struct build_prompt_ctx c = BUILD_PROMPT_CTX_INIT;
	struct sl_buf out = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;

	c.mode = RUN_MODE_RESOLVE;
	c.attempt = 1;
	assert_int_equal(build_prompt_render(&out, &c, &err), SL_EINVALID);
	assert_non_null(strstr(err.msg, "conflict"));
	sl_buf_release(&out);
}

static void test_write(void **state)
{
	char dir[] = "/tmp/sl-prompt-XXXXXX", want[128];
	struct build_prompt_ctx c = BUILD_PROMPT_CTX_INIT;
	struct sl_err err = SL_ERR_INIT;
	struct sl_buf text = SL_BUF_INIT;
	char *path = NULL;

	assert_non_null(mkdtemp(dir));
	c.work_order_text = wo_text;
	c.attempt = 2;
	assert_int_equal(build_prompt_write(dir, &c, &path, &err), 0);
	snprintf(want, sizeof(want), "%s/attempts/2/prompt.md", dir);
	assert_string_equal(path, want);
	assert_int_equal(sl_read_file(&text, path, 0, &err), 0);
	assert_non_null(strstr(sl_buf_cstr(&text), "attempt 2"));
	assert_int_equal(sl_rm_rf(dir, &err), 0);
	free(path);
	sl_buf_release(&text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_attempt),
		cmocka_unit_test(test_retry_context),
		cmocka_unit_test(test_diff_bounded),
		cmocka_unit_test(test_override),
		cmocka_unit_test(test_override_unknown),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_resolve_no_rival),
		cmocka_unit_test(test_resolve_every_rival),
		cmocka_unit_test(test_id_from_text),
		cmocka_unit_test(test_resolve_needs_context),
		cmocka_unit_test(test_write),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
