/* The review package, verdict validation, fences and redaction: no network. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/fs.h"
#include "core/json.h"
#include "reviewer/reviewer.h"
#include "reviewer/reviewer_int.h"

static const char *const criteria[] = {"each run has its own worktree", "no run is lost", NULL};

static void input(struct reviewer_input *in, json_t *fields)
{
	memset(in, 0, sizeof(*in));
	in->run_id = "01RUN";
	in->kind = "build";
	in->wo_fields = fields;
	in->wo_body = "## Overview\nDo it.\n";
	in->criteria = criteria;
	in->base = "1111111111111111111111111111111111111111";
	in->head = "2222222222222222222222222222222222222222";
	in->tree = "3333333333333333333333333333333333333333";
	in->diff = "diff --git a/x b/x\n+hello\n";
	in->diff_len = strlen(in->diff);
	in->builder_summary = "added hello";
	in->attempt = 2;
}

static void test_request_fields(void **state)
{
	json_t *fields =
	        json_pack("{s:s, s:s, s:[s]}", "id", "WO-1", "title", "T", "non_goals", "x");
	struct sl_err err = SL_ERR_INIT;
	struct reviewer_input in;
	json_t *req;

	input(&in, fields);
	in.files_changed = json_pack("[s]", "x");
	assert_int_equal(reviewer_request_new(&req, &in, &err), 0);
	assert_string_equal(json_string_value(json_object_get(req, "protocol")),
	                    "sluice.review.v1");
	assert_string_equal(json_string_value(json_object_get(req, "kind")), "build");
	assert_string_equal(json_string_value(json_object_get(req, "tree")), in.tree);
	assert_string_equal(json_string_value(json_object_get(req, "diff")), in.diff);
	assert_true(json_is_false(json_object_get(req, "diff_truncated")));
	assert_int_equal(json_integer_value(json_object_get(req, "attempt")), 2);
	assert_string_equal(
	        json_string_value(json_object_get(json_object_get(req, "work_order"), "id")),
	        "WO-1");
	assert_int_equal(json_array_size(json_object_get(json_object_get(req, "work_order"),
	                                                 "acceptance_criteria")),
	                 2);
	assert_null(json_object_get(req, "conflict"));
	json_decref(req);
	json_decref(in.files_changed);
	json_decref(fields);
}

static void test_request_truncates_and_sanitizes(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	struct reviewer_input in;
	char diff[100];
	json_t *req;

	input(&in, NULL);
	memset(diff, 'a', sizeof(diff));
	diff[10] = (char)0xff; /* not UTF-8 */
	diff[20] = '\0';
	in.diff = diff;
	in.diff_len = sizeof(diff);
	in.diff_max = 40;
	assert_int_equal(reviewer_request_new(&req, &in, &err), 0);
	assert_true(json_is_true(json_object_get(req, "diff_truncated")));
	assert_true(json_is_true(json_object_get(req, "diff_lossy")));
	assert_int_equal(json_integer_value(json_object_get(req, "diff_bytes")), 100);
	assert_non_null(strstr(json_string_value(json_object_get(req, "diff_note")), "100 bytes"));
	assert_int_equal(json_string_length(json_object_get(req, "diff")), 40 - 2 + 2 * 3);
	json_decref(req);
}

/* A cut in the middle of a character backs off to its start: the diff is not lossy. */
static void test_request_cut_at_character(void **state)
{
	static const char *const diffs[] = {"ab\xc3\xa9" "cd", "abc\xe5\xaf\x9f" "d", "a\xf0\x9f\x98\x80" "bcd",
	                                    "abcd\xc3\xa9", NULL};
	static const size_t max[] = {3, 5, 3, 4};
	static const char *const want[] = {"ab", "abc", "a", "abcd"};
	struct sl_err err = SL_ERR_INIT;
	struct reviewer_input in;
	json_t *req;
	size_t i;

	for (i = 0; diffs[i]; i++) {
		input(&in, NULL);
		in.diff = diffs[i];
		in.diff_len = strlen(diffs[i]);
		in.diff_max = max[i];
		assert_int_equal(reviewer_request_new(&req, &in, &err), 0);
		assert_string_equal(json_string_value(json_object_get(req, "diff")), want[i]);
		assert_true(json_is_false(json_object_get(req, "diff_lossy")));
		assert_true(json_is_true(json_object_get(req, "diff_truncated")));
		json_decref(req);
	}
}

static void test_request_resolution(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	struct reviewer_input in;
	json_t *req, *ctx = json_pack("{s:[s]}", "conflictFiles", "a.c");

	input(&in, NULL);
	in.kind = "resolution";
	in.conflict = ctx;
	in.rival_run_id = "01RIVAL";
	assert_int_equal(reviewer_request_new(&req, &in, &err), 0);
	assert_string_equal(json_string_value(json_object_get(req, "rival_run_id")), "01RIVAL");
	assert_ptr_equal(json_object_get(req, "conflict"), ctx);
	json_decref(req);
	json_decref(ctx);
}

/* A read-only or none run: the report in place of the diff keys. */
static void test_request_report(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	struct reviewer_input in;
	json_t *req;

	(void)state;
	input(&in, NULL);
	in.kind = "report";
	in.report = "## Findings\nAll good.\n";
	in.worktree = "read-only";
	assert_int_equal(reviewer_request_new(&req, &in, &err), 0);
	assert_string_equal(json_string_value(json_object_get(req, "kind")), "report");
	assert_string_equal(json_string_value(json_object_get(req, "report")),
			    "## Findings\nAll good.\n");
	assert_string_equal(json_string_value(json_object_get(req, "worktree")), "read-only");
	assert_null(json_object_get(req, "diff"));
	assert_null(json_object_get(req, "diff_bytes"));
	assert_non_null(json_object_get(req, "tree"));
	assert_non_null(json_object_get(req, "files_changed"));
	json_decref(req);
}

static void test_request_rejects_bad_input(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	struct reviewer_input in;
	json_t *req;

	input(&in, NULL);
	in.kind = "deploy";
	assert_int_equal(reviewer_request_new(&req, &in, &err), SL_EINVALID);
	assert_null(req);
	assert_non_null(strstr(err.msg, "deploy"));
	sl_err_clear(&err);
	input(&in, NULL);
	in.tree = NULL;
	assert_int_equal(reviewer_request_new(&req, &in, &err), SL_EINVALID);
}

static void test_write_json(void **state)
{
	char dir[] = "/tmp/sl-rvw-XXXXXX", *path;
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	json_t *j = json_pack("{s:s}", "a", "b");

	assert_non_null(mkdtemp(dir));
	path = sl_path_join(dir, "review-request.json");
	/* review-request.json is written by the one artifact writer */
	assert_int_equal(sl_json_write(path, j, &err), 0);
	assert_int_equal(sl_read_file(&b, path, 0, &err), 0);
	assert_string_equal(sl_buf_cstr(&b), "{\n  \"a\": \"b\"\n}\n");
	sl_buf_release(&b);
	assert_int_equal(sl_rm_rf(dir, &err), 0);
	free(path);
	json_decref(j);
}

static int parse(struct reviewer_verdict *v, const char *text, struct sl_err *err)
{
	sl_err_clear(err);
	return reviewer_verdict_parse(v, text, strlen(text), "T1", err);
}

static void test_verdict_valid(void **state)
{
	struct reviewer_verdict v;
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(parse(&v, "{\"verdict\":\"approve\",\"extra\":1}", &err), 0);
	assert_true(reviewer_verdict_approves_tree(&v, "T1"));
	assert_false(reviewer_verdict_approves_tree(&v, "T2"));
	assert_string_equal(v.comments, "");
	reviewer_verdict_release(&v);
	assert_int_equal(parse(&v,
	                       "{\"verdict\":\"request_changes\",\"comments\":\"fix x\","
	                       "\"criteria\":[{\"criterion\":\"c1\",\"met\":false,\"note\":\"n\"},"
	                       "{\"criterion\":\"c2\",\"met\":true}],\"reviewer\":\"bob\"}",
	                       &err),
	                 0);
	assert_false(reviewer_verdict_approves_tree(&v, "T1"));
	assert_int_equal(v.ncriteria, 2);
	assert_string_equal(v.criteria[0].criterion, "c1");
	assert_int_equal(v.criteria[0].met, 0);
	assert_string_equal(v.criteria[1].note, "");
	assert_string_equal(v.reviewer, "bob");
	reviewer_verdict_release(&v);
	assert_int_equal(
	        parse(&v, "{\"verdict\":\"reject\",\"comments\":\"no\",\"tree\":\"T1\"}", &err), 0);
	assert_string_equal(v.verdict, "reject");
	reviewer_verdict_release(&v);
}

static void test_verdict_invalid(void **state)
{
	static const char *const bad[] = {
	        "",
	        "[]",
	        "not json",
	        "{\"verdict\":\"lgtm\"}",
	        "{\"verdict\":true}",
	        "{}",
	        "{\"verdict\":\"reject\"}",
	        "{\"verdict\":\"request_changes\",\"comments\":\"\"}",
	        "{\"verdict\":\"approve\",\"comments\":3}",
	        "{\"verdict\":\"approve\",\"criteria\":\"all\"}",
	        "{\"verdict\":\"approve\",\"criteria\":[{\"met\":true}]}",
	        "{\"verdict\":\"approve\",\"criteria\":[{\"criterion\":\"c\",\"met\":\"yes\"}]}",
	        "{\"verdict\":\"approve\",\"criteria\":[{\"criterion\":\"c\",\"met\":false}]}",
	        "{\"verdict\":\"approve\",\"tree\":\"T2\"}",
	        "{\"verdict\":\"approve\",\"verdict\":\"approve\"}",
	        /* a reviewer name becomes the Reviewed-by: trailer: one short line */
	        "{\"verdict\":\"approve\",\"reviewer\":\"bot\\nSluice-Run: forged\"}",
	        "{\"verdict\":\"approve\",\"reviewer\":\"bot\\r\"}",
	        "{\"verdict\":\"approve\",\"reviewer\":\"\\u001b[31mbot\"}",
	        "{\"verdict\":\"approve\",\"reviewer\":\"tab\\tbot\"}",
	        "{\"verdict\":\"approve\",\"reviewer\":\"del\\u007f\"}",
	        "{\"verdict\":\"approve\",\"reviewer\":\"nul\\u0000\"}",
	        "{\"verdict\":\"approve\",\"reviewer\":3}",
	        NULL};
	struct reviewer_verdict v;
	struct sl_err err = SL_ERR_INIT;
	size_t i;

	for (i = 0; bad[i]; i++) {
		assert_int_equal(parse(&v, bad[i], &err), SL_EINVALID);
		assert_null(v.verdict);
		assert_false(reviewer_verdict_approves_tree(&v, "T1"));
		assert_true(err.msg[0]);
	}
}

static void test_verdict_reviewer_name(void **state)
{
	struct reviewer_verdict v;
	struct sl_err err = SL_ERR_INIT;
	char text[700];

	assert_int_equal(parse(&v, "{\"verdict\":\"reject\",\"comments\":\"no\","
	                           "\"reviewer\":\"bot\\nSluice-Run: x\"}", &err),
	                 SL_EINVALID);
	assert_non_null(strstr(err.msg, "'bot?Sluice-Run: x'"));
	assert_non_null(strstr(err.msg, "control character"));
	assert_null(strchr(err.msg, '\n'));
	/* names in any script are fine, up to 200 characters */
	assert_int_equal(parse(&v, "{\"verdict\":\"approve\",\"reviewer\":\"r\u00e9viseur \u5bdf\"}",
	                       &err),
	                 0);
	assert_string_equal(v.reviewer, "r\xc3\xa9viseur \xe5\xaf\x9f");
	reviewer_verdict_release(&v);
	snprintf(text, sizeof(text), "{\"verdict\":\"approve\",\"reviewer\":\"%0200d\"}", 0);
	assert_int_equal(parse(&v, text, &err), 0);
	reviewer_verdict_release(&v);
	snprintf(text, sizeof(text), "{\"verdict\":\"approve\",\"reviewer\":\"%0201d\"}", 0);
	assert_int_equal(parse(&v, text, &err), SL_EINVALID);
	assert_non_null(strstr(err.msg, "longer than 200 characters"));
	/* characters, not bytes: 200 two-byte letters are fine */
	strcpy(text, "{\"verdict\":\"approve\",\"reviewer\":\"");
	for (int i = 0; i < 200; i++)
		strcat(text, "\xc3\xa9");
	strcat(text, "\"}");
	assert_int_equal(parse(&v, text, &err), 0);
	reviewer_verdict_release(&v);
	/* a tree that is not printable is not printed raw */
	assert_int_equal(parse(&v, "{\"verdict\":\"approve\",\"tree\":\"a\\nb\"}", &err),
	                 SL_EINVALID);
	assert_null(strchr(err.msg, '\n'));
}

/*
 * fixtures/reviewer/replies (the fuzz seeds): invalid_* is refused by every
 * parser; openai_* is a chat-completions reply; *.txt is model output; the
 * other *.json are sluice-protocol verdicts.
 */
static void test_verdict_fixtures(void **state)
{
	static const char *const names[] = {
	        "approve.json", "request_changes.json", "reject_with_tree.json", "fenced.txt",
	        "prose_braces.txt", "openai_fenced.json", "openai_plain.json",
	        "invalid_approve_unmet.json", "invalid_reviewer_newline.json",
	        "invalid_duplicate_key.json", "invalid_unknown_verdict.json", NULL};
	struct reviewer_verdict v;
	struct sl_err err = SL_ERR_INIT;
	size_t i;

	for (i = 0; names[i]; i++) {
		struct sl_buf b = SL_BUF_INIT;
		char path[512];
		json_t *o = NULL;
		int invalid = !strncmp(names[i], "invalid_", 8), rc;

		snprintf(path, sizeof(path), "%s/reviewer/replies/%s", SLUICE_FIXTURES, names[i]);
		assert_int_equal(sl_read_file(&b, path, 0, &err), 0);
		if (!strncmp(names[i], "openai_", 7))
			rc = reviewer__openai_verdict(&o, b.ptr, b.len, &err);
		else if (strstr(names[i], ".txt"))
			rc = reviewer__extract_json(&o, sl_buf_cstr(&b), &err);
		else
			rc = (o = json_loadb(b.ptr, b.len, JSON_REJECT_DUPLICATES, NULL)) ? 0 : SL_EINVALID;
		if (rc == 0) {
			rc = reviewer_verdict_from_json(&v, o, "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
			                                &err);
			reviewer_verdict_release(&v);
		}
		if (rc != (invalid ? SL_EINVALID : 0))
			fail_msg("%s: %d (%s)", names[i], rc, err.msg);
		json_decref(o);
		sl_buf_release(&b);
		sl_err_clear(&err);
	}
}

static void test_verdict_to_json(void **state)
{
	struct reviewer_verdict v;
	struct sl_err err = SL_ERR_INIT;
	json_t *j;

	assert_int_equal(parse(&v,
	                       "{\"verdict\":\"approve\",\"criteria\":[{\"criterion\":\"c\","
	                       "\"met\":true}]}",
	                       &err),
	                 0);
	j = reviewer_verdict_to_json(&v);
	assert_string_equal(json_string_value(json_object_get(j, "tree")), "T1");
	assert_int_equal(json_array_size(json_object_get(j, "criteria")), 1);
	json_decref(j);
	reviewer_verdict_release(&v);
	assert_false(reviewer_verdict_approves_tree(NULL, "T1"));
}

static void test_extract_json(void **state)
{
	static const char *const ok[] = {
	        "{\"verdict\":\"approve\"}",
	        "```json\n{\"verdict\":\"approve\"}\n```",
	        "```\n{\"verdict\":\"approve\"}\n```\n",
	        "Here is my review.\n\n```json\n{\"verdict\":\"approve\"}\n```\nThanks.",
	        "Sure: {\"verdict\":\"approve\"} done",
	        NULL};
	struct sl_err err = SL_ERR_INIT;
	json_t *j;
	size_t i;

	for (i = 0; ok[i]; i++) {
		assert_int_equal(reviewer__extract_json(&j, ok[i], &err), 0);
		assert_string_equal(json_string_value(json_object_get(j, "verdict")), "approve");
		json_decref(j);
	}
	assert_int_equal(reviewer__extract_json(&j, "I approve!", &err), SL_EINVALID);
	assert_null(j);
}

static void test_redact_escaped(void **state)
{
	/* a reply that echoes the token JSON-escaped must not carry it either */
	char *s = reviewer__redact_str("error: Bearer sek\\/rit and sek/rit", "sek/rit");

	assert_non_null(s);
	assert_string_equal(s, "error: Bearer [redacted] and [redacted]");
	free(s);
}

static void test_redact(void **state)
{
	char *s = reviewer__redact_str("a TOK b TOKTOK", "TOK");
	json_t *j = json_pack("{s:[s, {s:s}], s:i}", "a", "xTOKx", "b", "TOK", "n", 1);
	char *d;

	assert_string_equal(s, "a [redacted] b [redacted][redacted]");
	free(s);
	reviewer__redact_json(j, "TOK");
	d = json_dumps(j, JSON_SORT_KEYS);
	assert_null(strstr(d, "TOK"));
	assert_non_null(strstr(d, "x[redacted]x"));
	free(d);
	json_decref(j);
}

static void test_openai_url(void **state)
{
	char *u = reviewer__openai_url("http://h/v1/");

	assert_string_equal(u, "http://h/v1/chat/completions");
	free(u);
	u = reviewer__openai_url("http://h/v1/chat/completions");
	assert_string_equal(u, "http://h/v1/chat/completions");
	free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_request_fields),
	        cmocka_unit_test(test_request_truncates_and_sanitizes),
	        cmocka_unit_test(test_request_cut_at_character),
	        cmocka_unit_test(test_request_resolution),
	        cmocka_unit_test(test_request_report),
	        cmocka_unit_test(test_request_rejects_bad_input),
	        cmocka_unit_test(test_write_json),
	        cmocka_unit_test(test_verdict_valid),
	        cmocka_unit_test(test_verdict_invalid),
	        cmocka_unit_test(test_verdict_reviewer_name),
	        cmocka_unit_test(test_verdict_fixtures),
	        cmocka_unit_test(test_verdict_to_json),
	        cmocka_unit_test(test_extract_json),
	        cmocka_unit_test(test_redact),
	        cmocka_unit_test(test_redact_escaped),
	        cmocka_unit_test(test_openai_url),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
