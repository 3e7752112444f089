/* sl_template_render / sl_template_check / sl_template_prompt_var_known. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/template.h"

static const char *lookup(const char *name, void *data)
{
	if (strcmp(name, "work_order.title") == 0)
		return "Add login";
	if (strcmp(name, "attempt") == 0)
		return "3";
	if (strcmp(name, "empty") == 0)
		return "";
	if (strcmp(name, "gate.test.output") == 0)
		return "FAIL {x}";
	return NULL;
}

static void render_ok(const char *tmpl, const char *want)
{
	struct sl_buf out = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(sl_template_render(&out, tmpl, lookup, NULL, &err), 0);
	assert_string_equal(sl_buf_cstr(&out), want);
	sl_buf_release(&out);
}

static void test_render(void **state)
{
	render_ok("", "");
	render_ok("plain text", "plain text");
	render_ok("Fix {work_order.title} (attempt {attempt})", "Fix Add login (attempt 3)");
	render_ok("[{empty}]", "[]");
	/* values are not re-expanded */
	render_ok("{gate.test.output}", "FAIL {x}");
	render_ok("{attempt}{attempt}", "33");
}

static void test_braces_literal(void **state)
{
	render_ok("{{attempt}}", "{attempt}");
	render_ok("a {{ b }} c", "a { b } c");
	render_ok("json: { \"a\": 1 }", "json: { \"a\": 1 }");
	render_ok("{not a var} {} {", "{not a var} {} {");
	render_ok("}", "}");
	render_ok("{{{attempt}}}", "{3}");
	render_ok("tail {attempt", "tail {attempt");
}

static void test_render_unknown(void **state)
{
	struct sl_buf out = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(sl_template_render(&out, "hi {nope} there", lookup, NULL, &err), SL_EINVALID);
	assert_non_null(strstr(err.msg, "'{nope}'"));
	sl_buf_release(&out);
}

static void test_render_too_big(void **state)
{
	struct sl_buf out;
	struct sl_err err = SL_ERR_INIT;

	sl_buf_init(&out, 8);
	assert_int_equal(sl_template_render(&out, "{work_order.title} and more", lookup, NULL, &err),
			 SL_ETOOBIG);
	assert_non_null(strstr(err.msg, "too large"));
	sl_buf_release(&out);
}

static void test_prompt_known(void **state)
{
	const char *gates[] = { "test", "lint", NULL };

	assert_true(sl_template_prompt_var_known("error", gates));
	assert_true(sl_template_prompt_var_known("diff", gates));
	assert_true(sl_template_prompt_var_known("attempt", gates));
	assert_true(sl_template_prompt_var_known("review.comments", gates));
	assert_true(sl_template_prompt_var_known("work_order.title", gates));
	assert_true(sl_template_prompt_var_known("work_order.acceptance_criteria", gates));
	assert_true(sl_template_prompt_var_known("gate.test.output", gates));
	assert_true(sl_template_prompt_var_known("gate.lint.exit", gates));
	assert_false(sl_template_prompt_var_known("gate.build.output", gates));
	assert_false(sl_template_prompt_var_known("gate.test.stdout", gates));
	assert_false(sl_template_prompt_var_known("gate..output", gates));
	assert_false(sl_template_prompt_var_known("work_order.", gates));
	assert_false(sl_template_prompt_var_known("review", gates));
	assert_false(sl_template_prompt_var_known("errors", gates));
	assert_true(sl_template_prompt_var_known("gate.any.output", NULL));
}

static void test_check(void **state)
{
	const char *gates[] = { "test", NULL };
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(sl_template_check("Fix {error} in {gate.test.output}; {{literal}}",
					   sl_template_prompt_var_known, gates, "retry[0].prompt", &err),
			 0);
	assert_int_equal(sl_template_check("see {gate.lint.output}", sl_template_prompt_var_known, gates,
					   "retry[1].prompt", &err),
			 SL_EINVALID);
	assert_non_null(strstr(err.msg, "unknown variable '{gate.lint.output}' in retry[1].prompt"));
	assert_non_null(strstr(err.msg, "known variables: "));
	assert_non_null(strstr(err.msg, "{gate.test.output}"));
}

static int title_only(const char *name, void *data)
{
	return strncmp(name, "work_order.", 11) == 0 && name[11];
}

static void test_check_other_vocabulary(void **state)
{
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(sl_template_check("Merge {work_order.id}: {work_order.title}", title_only,
					   NULL, "merge.message", &err),
			 0);
	assert_int_equal(sl_template_check("Merge {error}", title_only, NULL, "merge.message", &err),
			 SL_EINVALID);
	assert_string_equal(err.msg, "unknown variable '{error}' in merge.message; known variables: "
				     "{work_order.<field>}");
}

/* The vocabulary of merge.message (core/config.c). */
static int merge_vocabulary(const char *name, void *data)
{
	(void)data;
	return !strncmp(name, "work_order.", 11) || !strcmp(name, "run.id") ||
	       !strcmp(name, "run.short") || !strcmp(name, "run.branch") || !strcmp(name, "reviewer");
}

static void test_check_lists_every_known(void **state)
{
	struct sl_err err = SL_ERR_INIT;

	(void)state;
	assert_int_equal(sl_template_check("{run.idx}", merge_vocabulary, NULL, "merge.message",
					   &err),
			 SL_EINVALID);
	assert_string_equal(err.msg, "unknown variable '{run.idx}' in merge.message; known "
				     "variables: {work_order.<field>}, {run.id}, {run.short}, "
				     "{run.branch}, {reviewer}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render),
		cmocka_unit_test(test_check_lists_every_known),
		cmocka_unit_test(test_braces_literal),
		cmocka_unit_test(test_render_unknown),
		cmocka_unit_test(test_render_too_big),
		cmocka_unit_test(test_prompt_known),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_check_other_vocabulary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
