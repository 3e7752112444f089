/* queue/parse.c and validate.c: the format, every field, every error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sha256.h"
#include "queue/queue.h"

/* Parse and validate text; return the error message (static) or NULL. */
static const char *problem(const char *text)
{
	static struct sl_err err;
	struct queue_wo *wo = NULL;

	sl_err_clear(&err);
	if (queue_parse(&wo, "wo.md", text, strlen(text), &err) == 0)
		queue_validate(wo, &err);
	queue_wo_free(wo);
	return err.msg[0] ? err.msg : NULL;
}

static void expect(const char *text, const char *needle)
{
	const char *msg = problem(text);

	if (!msg || !strstr(msg, needle))
		fail_msg("expected '%s', got '%s'", needle, msg ? msg : "(valid)");
}

static void test_seed_every_field(void **state)
{
	struct queue_wo *wo = NULL;
	struct sl_err err = SL_ERR_INIT;
	char hash[SL_SHA256_HEX_LEN + 1];

	(void)state;
	if (queue_parse_file(&wo, SLUICE_FIXTURES, "work_orders/seed/WO-2026-020.md", &err))
		fail_msg("%s", err.msg);
	assert_int_equal(queue_validate(wo, &err), 0);
	assert_string_equal(wo->id, "WO-2026-020");
	assert_string_equal(wo->title, "Runner Git Worktree Isolation with Conflict Resolution");
	assert_non_null(strstr(wo->goal, "Isolate each builder run"));
	assert_int_equal(sl_strv_len(wo->context), 3);
	assert_string_equal(wo->context[1], "server/db.ts (run tracking)");
	assert_int_equal(sl_strv_len(wo->acceptance_criteria), 7);
	assert_int_equal(sl_strv_len(wo->non_goals), 3);
	assert_int_equal(sl_strv_len(wo->stop_conditions), 2);
	assert_int_equal(sl_strv_len(wo->tags), 4);
	assert_string_equal(wo->tags[3], "autonomous");
	assert_int_equal(wo->priority, 1);
	assert_int_equal(wo->has_estimate, 1);
	assert_true(wo->estimate_hours == 8.0);
	assert_string_equal(wo->status, "done");
	assert_string_equal(wo->created_at, "2026-01-05");
	assert_string_equal(wo->updated_at, "2026-01-06");
	assert_string_equal(wo->depends_on[0], "WO-2025-004");
	assert_string_equal(json_string_value(json_object_get(wo->fields, "era")), "autonomous");
	assert_true(!strncmp(wo->body, "## Overview", 11));
	assert_string_equal(wo->path, "work_orders/seed/WO-2026-020.md");
	sl_sha256_hex(hash, wo->raw, wo->raw_len);
	assert_string_equal(hash, wo->content_hash);
	queue_wo_free(wo);
}

static void test_unknown_keys_kept(void **state)
{
	struct queue_wo *wo = NULL;
	struct sl_err err = SL_ERR_INIT;
	json_t *review;

	(void)state;
	if (queue_parse_file(&wo, SLUICE_FIXTURES, "work_orders/valid/WO-107.md", &err))
		fail_msg("%s", err.msg);
	assert_int_equal(queue_validate(wo, &err), 0);
	assert_string_equal(json_string_value(json_object_get(wo->fields, "owner")), "alice");
	review = json_object_get(wo->fields, "review");
	assert_true(json_is_true(json_object_get(review, "strict")));
	assert_int_equal(json_array_size(json_object_get(review, "reviewers")), 2);
	assert_true(wo->estimate_hours == 2.5);
	assert_int_equal(wo->priority, 4);
	queue_wo_free(wo);
}

static void test_defaults_and_marks(void **state)
{
	const char *text = "---\nid: WO-1\ntitle: t\ncontext:\n  - a.c\n  - b.c\n---\nbody\n";
	struct queue_wo *wo = NULL;
	struct sl_err err = SL_ERR_INIT;
	const struct queue_mark *m;

	(void)state;
	assert_int_equal(queue_parse(&wo, "x.md", text, strlen(text), &err), 0);
	assert_int_equal(wo->priority, 3);
	assert_null(wo->status);
	assert_int_equal(wo->has_estimate, 0);
	assert_string_equal(wo->body, "body\n");
	m = queue_wo_mark(wo, "context", 1);
	assert_non_null(m);
	assert_int_equal(m->line, 6);
	assert_int_equal(m->col, 5);
	m = queue_wo_mark(wo, "title", -1);
	assert_int_equal(m->line, 3);
	queue_wo_free(wo);
}

static void test_crlf_and_bom(void **state)
{
	(void)state;
	assert_null(problem("\xef\xbb\xbf---\r\nid: WO-1\r\ntitle: t\r\n---\r\nbody\r\n"));
	assert_null(problem("---\nid: 42\ntitle: numeric id\n---\n"));
	assert_null(problem("---\nid: WO-1\ntitle: no body\n---"));
}

static void test_file_errors(void **state)
{
	(void)state;
	expect("", "wo.md: empty file");
	expect("\n  \n", "empty file");
	expect("# title\n", "wo.md:1:1: no front matter");
	expect("---\nid: WO-1\n", "wo.md:1:1: front matter is not closed");
	expect("---\n---\n", "front matter is empty");
	expect("---\n- a\n---\n", "wo.md:2:1: front matter is a list, not a mapping");
	expect("---\njust text\n---\n", "front matter is a single value");
	expect("---\nid: [x\n---\n", "YAML syntax error");
	expect("---\nid: WO-1\ntitle: t\nctx:\n\t- a\n---\n", "wo.md:5:1: tab in the indentation");
	expect("---\nid: WO-1\ntitle: caf\xc3\n---\n", "wo.md:3:11: invalid UTF-8");
	expect("---\nid: WO-1\ntitle: \xed\xa0\x80\n---\n", "invalid UTF-8"); /* surrogate */
	expect("---\nid: WO-1\ntitle: overlong \xc0\xaf\n---\n", "invalid UTF-8");
	expect("---\nid: WO-1\ntitle: a &x b\nc: *x\n---\n", "wo.md:4:4: YAML alias '*x'");
	expect("---\nid: WO-1\ntitle: a\ntitle: b\n---\n", "wo.md:4:1: key 'title' appears twice");
	expect("---\nid: WO-1\ntitle: a\n? [k]\n: v\n---\n", "a key must be plain text");
	expect("---\nid: WO-1\n---\n---\n", "missing 'title'");
}

static void test_nul_and_size(void **state)
{
	struct queue_wo *wo = NULL;
	struct sl_err err = SL_ERR_INIT;
	const char text[] = "---\nid: WO-1\ntitle: a\0b\n---\n";
	size_t big = QUEUE_WO_MAX_BYTES + 1;
	char *data = malloc(big);

	(void)state;
	assert_int_equal(queue_parse(&wo, "n.md", text, sizeof(text) - 1, &err), SL_EINVALID);
	assert_non_null(strstr(err.msg, "n.md:3:9: NUL byte"));
	sl_err_clear(&err);
	memset(data, 'x', big);
	assert_int_equal(queue_parse(&wo, "big.md", data, big, &err), SL_ETOOBIG);
	assert_non_null(strstr(err.msg, "1 MiB"));
	assert_null(wo);
	free(data);
}

static void test_deep_nesting(void **state)
{
	char text[1024] = "---\nid: WO-1\ntitle: t\nx: ";
	int i;

	(void)state;
	for (i = 0; i < 100; i++)
		strcat(text, "[");
	strcat(text, "\n---\n");
	assert_non_null(problem(text));
}

static void test_alias_bomb(void **state)
{
	struct queue_wo *wo = NULL;
	struct sl_err err = SL_ERR_INIT;

	(void)state;
	assert_int_equal(
	        queue_parse_file(&wo, SLUICE_FIXTURES, "work_orders/invalid/alias-bomb.md", &err),
	        SL_EINVALID);
	assert_non_null(strstr(err.msg, "alias-bomb.md:5:8: YAML alias '*a'"));
}

static void test_ids(void **state)
{
	char long_id[80];

	(void)state;
	assert_true(queue_id_valid("WO-2026-020"));
	assert_true(queue_id_valid("a"));
	assert_true(queue_id_valid("A.b_c-9"));
	assert_false(queue_id_valid(""));
	assert_false(queue_id_valid("-x"));
	assert_false(queue_id_valid(".x"));
	assert_false(queue_id_valid("a/b"));
	assert_false(queue_id_valid("a..b"));
	assert_false(queue_id_valid("a b"));
	assert_false(queue_id_valid("a."));
	assert_false(queue_id_valid("a.lock"));
	assert_false(queue_id_valid("a~b"));
	memset(long_id, 'x', 64);
	long_id[64] = '\0';
	assert_true(queue_id_valid(long_id));
	long_id[64] = 'x';
	long_id[65] = '\0';
	assert_false(queue_id_valid(long_id));
	expect("---\nid: a/b\ntitle: t\n---\n", "wo.md:2:1: id 'a/b' contains '/'");
	expect("---\nid: 'a b'\ntitle: t\n---\n", "contains a space");
	expect("---\nid: -a\ntitle: t\n---\n", "starts with '-'");
	expect("---\nid: a..b\ntitle: t\n---\n", "contains '..'");
	expect("---\nid: a.\ntitle: t\n---\n", "ends with '.'");
	expect("---\nid: a.lock\ntitle: t\n---\n", "ends with '.lock'");
	expect("---\nid: [a]\ntitle: t\n---\n", "'id' must be text");
	expect("---\ntitle: t\n---\n", "wo.md:2:1: missing 'id'");
}

static void test_fields(void **state)
{
	(void)state;
	expect("---\nid: W\n---\n", "missing 'title'");
	expect("---\nid: W\ntitle: ''\n---\n", "missing 'title'");
	expect("---\nid: W\ntitle: [a]\n---\n", "'title' must be text, not a list");
	expect("---\nid: W\ntitle: t\npriority: high\n---\n",
	       "wo.md:4:1: priority 'high' is not an integer");
	expect("---\nid: W\ntitle: t\npriority: 1.5\n---\n", "is not an integer");
	expect("---\nid: W\ntitle: t\ncontext: a.c\n---\n", "'context' must be a list");
	expect("---\nid: W\ntitle: t\ntags:\n  - [a]\n---\n",
	       "wo.md:5:5: entry 1 of 'tags' must be text, not a list");
	expect("---\nid: W\ntitle: t\ncontext:\n  - ok.c\n  - /abs\n---\n",
	       "wo.md:6:5: context path '/abs' is absolute");
	expect("---\nid: W\ntitle: t\ncontext: [../up]\n---\n", "climbs out of the repository");
	expect("---\nid: W\ntitle: t\nstatus: wip\n---\n", "unknown status 'wip'");
	expect("---\nid: W\ntitle: t\ndepends_on: [W]\n---\n", "'W' depends on itself");
	expect("---\nid: W\ntitle: t\ndepends_on: ['a b']\n---\n", "not a valid work-order id");
	expect("---\nid: W\ntitle: t\nestimate_hours: lots\n---\n",
	       "estimate_hours must be a number");
	assert_null(
	        problem("---\nid: W\ntitle: t\nstatus: hold\npriority: 0\ntags: [1, x]\n---\n"));
}

static void test_context_path(void **state)
{
	char *p;

	(void)state;
	p = queue_context_path("server/db.ts (run tracking)");
	assert_string_equal(p, "server/db.ts");
	free(p);
	p = queue_context_path(".system/runs/ (run artifacts storage)");
	assert_string_equal(p, ".system/runs");
	free(p);
	p = queue_context_path("src/a (b).c");
	assert_string_equal(p, "src/a (b).c");
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_seed_every_field),
	        cmocka_unit_test(test_unknown_keys_kept),
	        cmocka_unit_test(test_defaults_and_marks),
	        cmocka_unit_test(test_crlf_and_bom),
	        cmocka_unit_test(test_file_errors),
	        cmocka_unit_test(test_nul_and_size),
	        cmocka_unit_test(test_deep_nesting),
	        cmocka_unit_test(test_alias_bomb),
	        cmocka_unit_test(test_ids),
	        cmocka_unit_test(test_fields),
	        cmocka_unit_test(test_context_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
