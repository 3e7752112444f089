/*
 * Validator conditions (build/validate.c): the rule (exit 0 and "true"
 * printed, trimmed), each way of not holding, the inputs as JSON on stdin
 * and in $SLUICE_VALIDATE_INPUT, the log, and the decision's use of it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/fs.h"
#include "builder/builder.h"
#include "test_helpers.h"

static char s_dir[4096];
static const char *s_diff; /* {diff} of the failed attempt, or NULL */

static struct sl_config *config_of(const char *validator_sh)
{
	struct sl_config *cfg = NULL;
	struct sl_buf yaml = SL_BUF_INIT, problems = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;

	sl_buf_addf(&yaml, "builder:\n  command: [x]\ngates:\n  test: [x]\nretry:\n"
		    "  - validate: [sh, -c, '%s']\n"
		    "    with: {error: \"{error}\", out: \"{gate.test.output}\", n: \"{attempt}\", d: \"{diff}\"}\n"
		    "    timeout: 10s\n"
		    "    prompt: again\n"
		    "  - exit: 3\n", validator_sh);
	if (sl_config_parse(&cfg, "config.yaml", yaml.ptr, yaml.len, &problems, &err) != 0)
		fail_msg("config: %s%s", problems.ptr ? problems.ptr : "", err.msg);
	sl_buf_release(&yaml);
	sl_buf_release(&problems);
	return cfg;
}

/* Run the validator of rule 0 after attempt 1; the verdict sentence into said. */
static int held_by(const char *validator_sh, char *said, size_t n)
{
	struct sl_config *cfg = config_of(validator_sh);
	struct build_validate_ctx vc = { 0 };
	struct build_prompt_ctx pc = BUILD_PROMPT_CTX_INIT;
	struct build_gate_result gr = { 0 };
	struct build_gate_results gates = BUILD_GATE_RESULTS_INIT;
	struct sl_err err = SL_ERR_INIT;
	char name[] = "test", out[] = "3 tests failed";
	int held = -1;

	gr.name = name;
	gr.output = out;
	gr.exit_code = 1;
	gates.v = &gr;
	gates.n = 1;
	gates.all_passed = 0;
	pc.attempt = 1;
	pc.error = "gate 'test' failed on attempt 1";
	pc.diff = s_diff;
	pc.gates = &gates;
	vc.run_id = "r1";
	vc.work_order_id = "wo1";
	vc.run_dir = s_dir;
	vc.worktree = s_dir;
	vc.vars = &pc;
	vc.kill_grace_ms = 100;
	assert_int_equal(build_validate_rule(cfg, 0, 1, &vc, &held, said, n, &err), 0);
	sl_config_free(cfg);
	return held;
}

static void test_holds(void **state)
{
	char said[1024];

	(void)state;
	assert_int_equal(held_by("echo true", said, sizeof(said)), 1);
	assert_string_equal(said, "retry rule 1 (validate: sh) held on attempt 1");
	assert_int_equal(held_by("printf \"\\n  true \\n\\n\"", said, sizeof(said)), 1);
	assert_int_equal(held_by("echo checking >&2; echo true", said, sizeof(said)), 1);
}

static void test_does_not_hold(void **state)
{
	char said[1024];

	(void)state;
	assert_int_equal(held_by("echo false", said, sizeof(said)), 0);
	assert_non_null(strstr(said, "did not hold on attempt 1: it printed 'false' (exit 0)"));
	assert_int_equal(held_by("echo false; exit 4", said, sizeof(said)), 0);
	assert_non_null(strstr(said, "it printed 'false' (exit 4)"));
	assert_int_equal(held_by("echo true; exit 1", said, sizeof(said)), 0);
	assert_non_null(strstr(said, "it ended with exit 1 (a 'true' counts with exit 0 only)"));
	assert_int_equal(held_by("exit 2", said, sizeof(said)), 0);
	assert_non_null(strstr(said, "it ended with exit 2"));
	assert_int_equal(held_by("echo TRUE", said, sizeof(said)), 0);
	assert_non_null(strstr(said, "it printed 'TRUE', neither true nor false"));
	assert_int_equal(held_by("true", said, sizeof(said)), 0);
	assert_non_null(strstr(said, "it printed nothing; a validator prints true or false"));
	assert_int_equal(held_by("echo true; echo true", said, sizeof(said)), 0);
	sh("rm -f '%s/validate/1-attempt1.log' && mkdir -p '%s/validate/1-attempt1.log/x'", s_dir, s_dir); /* planted where the log goes */
	assert_int_equal(held_by("echo true", said, sizeof(said)), 0);
	assert_non_null(strstr(said, "did not hold on attempt 1: cannot write its files"));
	sh("rm -rf '%s/validate/1-attempt1.log'", s_dir);
	assert_int_equal(held_by("sleep 30; echo true", said, sizeof(said)), 0);
	assert_non_null(strstr(said, "it timed out after"));
	assert_non_null(strstr(said, "and was killed"));
}

static void test_inputs_and_log(void **state)
{
	char said[1024], *stdin_copy, *file, *log;

	(void)state;
	assert_int_equal(held_by("cat >stdin.json; cp \"$SLUICE_VALIDATE_INPUT\" file.json; "
				 "echo \"rule $SLUICE_RETRY_RULE run $SLUICE_RUN_ID\"; echo true",
				 said, sizeof(said)),
			 0); /* two lines printed: not "true" */
	stdin_copy = strdup(sh_line("cat '%s/stdin.json'", s_dir));
	file = strdup(sh_line("cat '%s/file.json'", s_dir));
	assert_string_equal(stdin_copy, file);
	assert_string_equal(stdin_copy, "{\"error\":\"gate 'test' failed on attempt 1\","
			    "\"out\":\"3 tests failed\",\"n\":\"1\",\"d\":\"\"}");
	log = strdup(sh_all("cat '%s/validate/1-attempt1.log'", s_dir));
	assert_non_null(strstr(log, "rule 1 run r1"));
	assert_non_null(strstr(log, "did not hold"));
	free(stdin_copy);
	free(file);
	free(log);
}

/* A validator that reads none of a big input (over a pipe's 64 KiB) still decides. */
static void test_unread_input(void **state)
{
	char said[1024], *big = malloc(200000);

	(void)state;
	assert_non_null(big);
	memset(big, 'x', 199999);
	big[199999] = '\0';
	s_diff = big;
	assert_int_equal(held_by("echo true", said, sizeof(said)), 1);
	s_diff = "caf\xe9 \xff";
	assert_int_equal(held_by("grep -qF \"caf\\\\uFFFD \\\\uFFFD\" && echo true", said, sizeof(said)), 1);
	s_diff = NULL;
	free(big);
}

static void test_decision(void **state)
{
	struct sl_config *cfg = config_of("echo x >>calls; echo true");
	struct build_retry_state prev = BUILD_RETRY_STATE_INIT;
	struct build_retry_decision d;
	struct build_validate_ctx vc = { 0 };
	struct build_prompt_ctx pc = BUILD_PROMPT_CTX_INIT;
	struct sl_err err = SL_ERR_INIT;
	const char *failed[] = { "test", NULL };
	char *calls;

	(void)state;
	vc.run_id = "r1";
	vc.run_dir = s_dir;
	vc.worktree = s_dir;
	vc.vars = &pc;
	sh("rm -f '%s/calls'", s_dir);
	assert_int_equal(build_retry_decide_validated(cfg, &prev, 1, failed, 0, &vc, &d, &err), 0);
	assert_int_equal(d.retry, 1);
	assert_int_equal(d.state.prompt_rule, 0);
	assert_string_equal(d.overrides.prompt, "again");
	assert_string_equal(d.verdicts, "retry rule 1 (validate: sh) held on attempt 1");
	/* at the exit no validator runs */
	assert_int_equal(build_retry_decide_validated(cfg, &prev, 3, failed, 0, &vc, &d, &err), 0);
	assert_int_equal(d.retry, 0);
	assert_string_equal(d.verdicts, "");
	/* without a context (build_retry_decide) a validator never holds nor runs */
	assert_int_equal(build_retry_decide(cfg, &prev, 1, failed, 0, &d, &err), 0);
	assert_int_equal(d.state.prompt_rule, -1);
	calls = sh_line("wc -l <'%s/calls'", s_dir);
	assert_string_equal(calls, "1");
	sl_config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_holds),
		cmocka_unit_test(test_does_not_hold),
		cmocka_unit_test(test_inputs_and_log),
		cmocka_unit_test(test_unread_input),
		cmocka_unit_test(test_decision),
	};
	int rc;

	snprintf(s_dir, sizeof(s_dir), "/tmp/sluice-test-validate.XXXXXX");
	if (!mkdtemp(s_dir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	sh("rm -rf '%s'", s_dir);
	return rc;
}
