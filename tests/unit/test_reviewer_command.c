/* reviewer.mode: command - a real child process reads the request and writes the verdict. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "reviewer/reviewer.h"

#define TREE "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
#define TOKEN "cmd-token-90210-SECRET"

static json_t *request(void)
{
	struct sl_err err = SL_ERR_INIT;
	struct reviewer_input in;
	json_t *req;

	memset(&in, 0, sizeof(in));
	in.run_id = "r-cmd";
	in.kind = "build";
	in.tree = TREE;
	in.diff = "+CMD-DIFF\n";
	in.diff_len = strlen(in.diff);
	assert_int_equal(reviewer_request_new(&req, &in, &err), 0);
	return req;
}

/* Run `sh -c script` as the reviewer; returns the code. */
static int run(const char *script, int64_t timeout_ms, struct reviewer_verdict *v,
               struct sl_err *err)
{
	const char *argv[] = {"sh", "-c", script, NULL};
	struct sl_config cfg;
	json_t *req = request();
	int error;

	memset(&cfg, 0, sizeof(cfg));
	cfg.reviewer.mode = SL_REVIEWER_COMMAND;
	cfg.reviewer.command = (char **)argv;
	cfg.reviewer.timeout_ms = timeout_ms;
	cfg.reviewer.max_reply = 4096;
	cfg.reviewer.token_env = (char *)"SL_TEST_CMD_TOKEN";
	sl_err_clear(err);
	error = reviewer_review(&cfg, req, v, NULL, err);
	json_decref(req);
	assert_null(strstr(err->msg, TOKEN));
	if (getenv("SL_TEST_VERBOSE"))
		print_message("%d: %s\n", error, err->msg);
	if (error < 0) {
		assert_null(v->verdict);
		assert_false(reviewer_verdict_approves_tree(v, TREE));
	}
	return error;
}

static void test_command_verdicts(void **state)
{
	struct reviewer_verdict v;
	struct sl_err err = SL_ERR_INIT;

	/* The verdict depends on what came in on stdin: the diff must be there. */
	assert_int_equal(run("if grep -q CMD-DIFF; then echo '{\"verdict\":\"approve\"}'; "
	                     "else echo '{\"verdict\":\"reject\",\"comments\":\"no diff\"}'; fi",
	                     10000, &v, &err),
	                 0);
	assert_true(reviewer_verdict_approves_tree(&v, TREE));
	assert_string_equal(v.reviewer, "sh");
	reviewer_verdict_release(&v);
	assert_int_equal(
	        run("cat >/dev/null; echo 'Verdict follows:'; echo '```json'; "
	            "echo '{\"verdict\":\"request_changes\",\"comments\":\"more\"}'; echo '```'",
	            10000, &v, &err),
	        0);
	assert_string_equal(v.verdict, "request_changes");
	reviewer_verdict_release(&v);
}

static void test_command_faults(void **state)
{
	struct reviewer_verdict v;
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(
	        run("echo '{\"verdict\":\"approve\"}'; echo \"oops $SL_TEST_CMD_TOKEN\" >&2; "
	            "exit 3",
	            10000, &v, &err),
	        SL_EINVALID);
	assert_non_null(strstr(err.msg, "exit 3"));
	assert_non_null(strstr(err.msg, "oops [redacted]"));
	assert_int_equal(run("echo not json", 10000, &v, &err), SL_EINVALID);
	assert_int_equal(run("echo '{\"verdict\":\"maybe\"}'", 10000, &v, &err), SL_EINVALID);
	assert_int_equal(run("head -c 10000 /dev/zero | tr '\\0' x", 10000, &v, &err), SL_EINVALID);
	assert_int_equal(run("sleep 5; echo '{\"verdict\":\"approve\"}'", 300, &v, &err),
	                 SL_ETRANSIENT);
	assert_int_equal(run("exec /nonexistent/reviewer", 10000, &v, &err), SL_EINVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_command_verdicts),
	        cmocka_unit_test(test_command_faults),
	};

	setenv("SL_TEST_CMD_TOKEN", TOKEN, 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
