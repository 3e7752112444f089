/* Gates: real processes, gates.json, logs, timeouts, environment. */
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
#include "core/config.h"
#include "core/fs.h"
#include "builder/builder.h"
#include "test_helpers.h"

static char tmpdir[] = "/tmp/sl-gates-XXXXXX";
static char wt[512], run_dir[512];

static int setup(void **state)
{
	struct sl_err err = SL_ERR_INIT;

	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(wt, sizeof(wt), "%s/wt", tmpdir);
	snprintf(run_dir, sizeof(run_dir), "%s/run", tmpdir);
	return sl_mkdir_p(wt, &err) || sl_mkdir_p(run_dir, &err);
}

static int teardown(void **state)
{
	struct sl_err err = SL_ERR_INIT;

	return sl_rm_rf(tmpdir, &err);
}

static char s_sh[] = "sh", s_c[] = "-c", s_true[] = "true", s_missing[] = "sluice-no-such-gate";
static char s_fail_script[] = "echo boom; echo more >&2; exit 2";
static char s_sleep_script[] = "sleep 100";
static char s_env_script[] = "echo \"$GIT_CONFIG_COUNT|$GIT_CONFIG_KEY_0|$GIT_CONFIG_VALUE_0|"
			     "${SL_T_TOKEN-unset}|$SLUICE_GATE|$(basename \"$PWD\")\"";
static char n_ok[] = "ok", n_fail[] = "fail", n_missing[] = "missing", n_slow[] = "slow",
	    n_env[] = "env";
static char s_token[] = "SL_T_TOKEN";

static void test_run_all_report_all(void **state)
{
	char *ok[] = { s_true, NULL }, *fail[] = { s_sh, s_c, s_fail_script, NULL };
	char *missing[] = { s_missing, NULL };
	struct sl_gate gates[] = { { n_fail, fail, 0 }, { n_missing, missing, 0 }, { n_ok, ok, 0 } };
	struct sl_config cfg;
	struct build_gate_results r = BUILD_GATE_RESULTS_INIT, back = BUILD_GATE_RESULTS_INIT;
	struct sl_err err = SL_ERR_INIT;
	const char **failed;
	char *log;
	json_t *j;

	memset(&cfg, 0, sizeof(cfg));
	cfg.gates = gates;
	cfg.ngates = 3;
	assert_int_equal(build_gates_run(&cfg, wt, run_dir, &r, &err), 0);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.all_passed, 0);
	assert_int_equal(r.v[0].exit_code, 2);
	assert_int_equal(r.v[0].passed, 0);
	assert_string_equal(r.v[0].output, "boom\nmore\n");
	assert_int_equal(r.v[1].exit_code, 127);
	assert_non_null(strstr(r.v[1].error, "sluice-no-such-gate"));
	assert_int_equal(r.v[2].passed, 1);
	failed = build_gates_failed(&r);
	assert_string_equal(failed[0], "fail");
	assert_string_equal(failed[1], "missing");
	assert_null(failed[2]);
	free(failed);

	log = test_read_in(run_dir, "gates/fail.log");
	assert_string_equal(log, "boom\nmore\n");
	free(log);
	log = test_read_in(run_dir, "gates.json");
	assert_non_null(log);
	j = json_loads(log, 0, NULL);
	assert_true(json_is_array(j));
	assert_int_equal(json_array_size(j), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(j, 0), "log")),
			    "gates/fail.log");
	assert_string_equal(json_string_value(json_array_get(
				    json_object_get(json_array_get(j, 0), "argv"), 0)), "sh");
	assert_true(json_is_false(json_object_get(json_array_get(j, 0), "passed")));
	assert_true(json_is_true(json_object_get(json_array_get(j, 2), "passed")));
	json_decref(j);
	free(log);

	assert_int_equal(build_gates_load(run_dir, &back, &err), 0);
	assert_int_equal(back.n, 3);
	assert_int_equal(back.all_passed, 0);
	assert_string_equal(back.v[0].name, "fail");
	assert_string_equal(back.v[0].output, "boom\nmore\n");
	assert_int_equal(back.v[0].exit_code, 2);
	assert_non_null(back.v[1].error);
	assert_string_equal(back.v[2].argv[0], "true");
	build_gate_results_release(&back);
	build_gate_results_release(&r);
}

static void test_log_rewritten(void **state)
{
	char *fail[] = { s_sh, s_c, s_fail_script, NULL };
	struct sl_gate gates[] = { { n_fail, fail, 0 } };
	struct sl_config cfg;
	struct build_gate_results r = BUILD_GATE_RESULTS_INIT;
	struct sl_err err = SL_ERR_INIT;
	char *log;

	memset(&cfg, 0, sizeof(cfg));
	cfg.gates = gates;
	cfg.ngates = 1;
	assert_int_equal(build_gates_run(&cfg, wt, run_dir, &r, &err), 0);
	build_gate_results_release(&r);
	assert_int_equal(build_gates_run(&cfg, wt, run_dir, &r, &err), 0);
	build_gate_results_release(&r);
	log = test_read_in(run_dir, "gates/fail.log");
	assert_string_equal(log, "boom\nmore\n");
	free(log);
}

static void test_timeout(void **state)
{
	char *slow[] = { s_sh, s_c, s_sleep_script, NULL }, *ok[] = { s_true, NULL };
	struct sl_gate gates[] = { { n_slow, slow, 200 }, { n_ok, ok, 0 } };
	struct sl_config cfg;
	struct build_gate_results r = BUILD_GATE_RESULTS_INIT;
	struct sl_err err = SL_ERR_INIT;

	memset(&cfg, 0, sizeof(cfg));
	cfg.gates = gates;
	cfg.ngates = 2;
	assert_int_equal(build_gates_run(&cfg, wt, run_dir, &r, &err), 0);
	assert_int_equal(r.v[0].timed_out, 1);
	assert_int_equal(r.v[0].passed, 0);
	assert_int_equal(r.v[1].passed, 1);
	assert_int_equal(r.all_passed, 0);
	build_gate_results_release(&r);
}

static void test_environment(void **state)
{
	char *env[] = { s_sh, s_c, s_env_script, NULL };
	struct sl_gate gates[] = { { n_env, env, 0 } };
	struct sl_config cfg;
	struct build_gate_results r = BUILD_GATE_RESULTS_INIT;
	struct sl_err err = SL_ERR_INIT;

	setenv("SL_T_TOKEN", "secret", 1);
	memset(&cfg, 0, sizeof(cfg));
	cfg.gates = gates;
	cfg.ngates = 1;
	cfg.reviewer.token_env = s_token;
	assert_int_equal(build_gates_run(&cfg, wt, run_dir, &r, &err), 0);
	assert_string_equal(r.v[0].output, "1|core.hooksPath|/dev/null|unset|env|wt\n");
	build_gate_results_release(&r);
	cfg.worktree.hooks = 1;
	assert_int_equal(build_gates_run(&cfg, wt, run_dir, &r, &err), 0);
	assert_string_equal(r.v[0].output, "|||unset|env|wt\n");
	build_gate_results_release(&r);
	unsetenv("SL_T_TOKEN");
}

static void test_no_gates(void **state)
{
	struct sl_config cfg;
	struct build_gate_results r = BUILD_GATE_RESULTS_INIT;
	struct sl_err err = SL_ERR_INIT;
	char *text;

	memset(&cfg, 0, sizeof(cfg));
	assert_int_equal(build_gates_run(&cfg, wt, run_dir, &r, &err), 0);
	assert_int_equal(r.n, 0);
	assert_int_equal(r.all_passed, 1);
	text = test_read_in(run_dir, "gates.json");
	assert_string_equal(text, "[]\n"); /* the artifact format: a final newline */
	free(text);
	build_gate_results_release(&r);
}

static void test_load_missing(void **state)
{
	struct build_gate_results r = BUILD_GATE_RESULTS_INIT;
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(build_gates_load(wt, &r, &err), SL_ENOTFOUND);
	assert_int_equal(r.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_all_report_all),
		cmocka_unit_test(test_log_rewritten),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_environment),
		cmocka_unit_test(test_no_gates),
		cmocka_unit_test(test_load_missing),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
