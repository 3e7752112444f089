/*
 * Retry rules: the seed's tables, stickiness, not: gate.X, exit, the saved
 * state (in the store; the copy in the run folder is never read).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/fs.h"
#include "builder/builder.h"
#include "store/store.h"
#include "test_helpers.h"

/* the rules below are written positionally; fields added at the end of the struct stay 0 */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static char s_default[] = "claude-sonnet", s_thinking[] = "claude-sonnet-thinking",
	    s_opus[] = "claude-opus", s_test[] = "test", s_builder[] = "builder",
	    s_fix[] = "Fix {error}";
static char *agent_default[] = { s_default, NULL };
static char *agent_thinking[] = { s_thinking, NULL };
static char *agent_opus[] = { s_opus, NULL };

/* Which agent runs each attempt, following decisions from attempt 1. */
static const char *agent_for(const struct build_retry_overrides *ov)
{
	return ov->builder ? ov->builder[0] : agent_default[0];
}

static void test_seed_table(void **state)
{
	/* retry: [{attempt: 3, agent: sonnet-thinking}, {attempt: 5, agent: opus}, {exit: 7}] */
	struct sl_retry_rule rules[] = {
		{ .kind = SL_RETRY_ATTEMPT, .n = 3, .gate = NULL, .builder = agent_thinking, .prompt = NULL, .worktree_reset = 0, .line = 1 },
		{ .kind = SL_RETRY_ATTEMPT, .n = 5, .gate = NULL, .builder = agent_opus, .prompt = NULL, .worktree_reset = 0, .line = 3 },
		{ .kind = SL_RETRY_EXIT, .n = 7, .gate = NULL, .builder = NULL, .prompt = NULL, .worktree_reset = 0, .line = 5 },
	};
	struct sl_config cfg;
	struct build_retry_state st = BUILD_RETRY_STATE_INIT;
	struct build_retry_decision d;
	struct build_retry_overrides ov;
	const char *failed[] = { "test", NULL };
	const char *want[] = { NULL, "claude-sonnet", "claude-sonnet", "claude-sonnet-thinking",
			       "claude-sonnet-thinking", "claude-opus", "claude-opus", "claude-opus" };
	struct sl_err err = SL_ERR_INIT;

	memset(&cfg, 0, sizeof(cfg));
	cfg.retry = rules;
	cfg.nretry = 3;
	build_retry_overrides(&cfg, &st, &ov);
	assert_string_equal(agent_for(&ov), want[1]);
	for (int attempt = 1; attempt < 7; attempt++) {
		assert_int_equal(build_retry_decide(&cfg, &st, attempt, failed, 0, &d, &err), 0);
		assert_int_equal(d.retry, 1);
		assert_int_equal(d.next_attempt, attempt + 1);
		assert_string_equal(agent_for(&d.overrides), want[attempt + 1]);
		st = d.state;
	}
	assert_int_equal(build_retry_decide(&cfg, &st, 7, failed, 0, &d, &err), 0);
	assert_int_equal(d.retry, 0);
	assert_string_equal(d.reason, "gate 'test' failed on attempt 7; retry exit at 7");
}

static void test_no_rules_fatal(void **state)
{
	struct sl_config cfg;
	struct build_retry_state st = BUILD_RETRY_STATE_INIT;
	struct build_retry_decision d;
	const char *failed[] = { "test", "lint", NULL };
	struct sl_err err = SL_ERR_INIT;

	memset(&cfg, 0, sizeof(cfg));
	assert_int_equal(build_retry_decide(&cfg, &st, 1, failed, 0, &d, &err), 0);
	assert_int_equal(d.retry, 0);
	assert_string_equal(d.reason, "gates 'test', 'lint' failed on attempt 1; no retry rules");
}

static void test_no_exit_fatal(void **state)
{
	struct sl_retry_rule rules[] = { { .kind = SL_RETRY_ATTEMPT, .n = 2, .gate = NULL, .builder = agent_opus, .prompt = NULL, .worktree_reset = 0, .line = 1 } };
	struct sl_config cfg;
	struct build_retry_state st = BUILD_RETRY_STATE_INIT;
	struct build_retry_decision d;
	struct sl_err err = SL_ERR_INIT;

	memset(&cfg, 0, sizeof(cfg));
	cfg.retry = rules;
	cfg.nretry = 1;
	assert_int_equal(build_retry_decide(&cfg, &st, 1, NULL, 3, &d, &err), 0);
	assert_int_equal(d.retry, 0);
	assert_non_null(strstr(d.reason, "builder failed (exit 3) on attempt 1"));
	assert_non_null(strstr(d.reason, "no 'exit'"));
}

static void test_exit_only_plain_retries(void **state)
{
	struct sl_retry_rule rules[] = { { .kind = SL_RETRY_EXIT, .n = 3, .gate = NULL, .builder = NULL, .prompt = NULL, .worktree_reset = 0, .line = 1 } };
	struct sl_config cfg;
	struct build_retry_state st = BUILD_RETRY_STATE_INIT;
	struct build_retry_decision d;
	const char *review[] = { "review", NULL };
	struct sl_err err = SL_ERR_INIT;

	memset(&cfg, 0, sizeof(cfg));
	cfg.retry = rules;
	cfg.nretry = 1;
	assert_int_equal(build_retry_decide(&cfg, &st, 1, review, 0, &d, &err), 0);
	assert_int_equal(d.retry, 1);
	assert_null(d.overrides.builder);
	assert_null(d.overrides.prompt);
	assert_int_equal(d.overrides.worktree_reset, 0);
	assert_string_equal(d.reason,
			    "reviewer requested changes on attempt 1; retrying as attempt 2 of 3");
	assert_int_equal(build_retry_decide(&cfg, &d.state, 3, review, 0, &d, &err), 0);
	assert_int_equal(d.retry, 0);
}

/* After a person's retry (from: the last attempt), the rules count again: attempt 3 is 1. */
static void test_person_restart(void **state)
{
	struct sl_retry_rule rules[] = {
		{ .kind = SL_RETRY_ATTEMPT, .n = 2, .gate = NULL, .builder = agent_opus, .prompt = NULL, .worktree_reset = 0, .line = 1 },
		{ .kind = SL_RETRY_EXIT, .n = 2, .gate = NULL, .builder = NULL, .prompt = NULL, .worktree_reset = 0, .line = 2 },
	};
	struct sl_config cfg;
	struct build_retry_state st = BUILD_RETRY_STATE_INIT;
	struct build_retry_decision d;
	const char *failed[] = { "test", NULL };
	struct sl_err err = SL_ERR_INIT;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.retry = rules;
	cfg.nretry = 2;
	st.from = 2;
	assert_int_equal(build_retry_decide(&cfg, &st, 3, failed, 0, &d, &err), 0);
	assert_true(d.retry);
	assert_int_equal(d.next_attempt, 4);
	assert_int_equal(d.state.from, 2);
	assert_string_equal(agent_for(&d.overrides), "claude-opus"); /* attempt: 2 of the round */
	assert_non_null(strstr(d.reason, "retrying as attempt 4 (2 of 2 since a person's retry)"));
	assert_int_equal(build_retry_decide(&cfg, &d.state, 4, failed, 0, &d, &err), 0);
	assert_false(d.retry);
	assert_non_null(strstr(d.reason, "on attempt 4; retry exit at 2 (counted since a person's retry)"));
}

static void test_not_gate(void **state)
{
	/* not: gate.test -> opus + reset; attempt: 3 -> a prompt; exit: 6 */
	struct sl_retry_rule rules[] = {
		{ .kind = SL_RETRY_NOT_GATE, .n = 0, .gate = s_test, .builder = agent_opus, .prompt = NULL, .worktree_reset = 1, .line = 1 },
		{ .kind = SL_RETRY_ATTEMPT, .n = 3, .gate = NULL, .builder = agent_thinking, .prompt = s_fix, .worktree_reset = 0, .line = 4 },
		{ .kind = SL_RETRY_EXIT, .n = 6, .gate = NULL, .builder = NULL, .prompt = NULL, .worktree_reset = 0, .line = 7 },
	};
	struct sl_config cfg;
	struct build_retry_state st = BUILD_RETRY_STATE_INIT;
	struct build_retry_decision d;
	const char *lint[] = { "lint", NULL }, *test[] = { "test", NULL };
	struct sl_err err = SL_ERR_INIT;

	memset(&cfg, 0, sizeof(cfg));
	cfg.retry = rules;
	cfg.nretry = 3;
	/* attempt 1 fails lint: no override */
	assert_int_equal(build_retry_decide(&cfg, &st, 1, lint, 0, &d, &err), 0);
	assert_null(d.overrides.builder);
	/* attempt 2 fails test: attempt 3 gets both rules; the later-listed builder wins */
	assert_int_equal(build_retry_decide(&cfg, &d.state, 2, test, 0, &d, &err), 0);
	assert_string_equal(d.overrides.builder[0], "claude-sonnet-thinking");
	assert_string_equal(d.overrides.prompt, "Fix {error}");
	assert_int_equal(d.overrides.worktree_reset, 1);
	assert_non_null(strstr(d.reason, "builder from retry rule 2"));
	/* attempt 3 fails lint: everything sticks */
	assert_int_equal(build_retry_decide(&cfg, &d.state, 3, lint, 0, &d, &err), 0);
	assert_string_equal(d.overrides.builder[0], "claude-sonnet-thinking");
	assert_int_equal(d.overrides.worktree_reset, 1);
	/* attempt 4 fails test again: not: gate.test activates again, opus replaces */
	assert_int_equal(build_retry_decide(&cfg, &d.state, 4, test, 0, &d, &err), 0);
	assert_string_equal(d.overrides.builder[0], "claude-opus");
	assert_string_equal(d.overrides.prompt, "Fix {error}");
	assert_int_equal(d.next_attempt, 5);
}

static void test_not_builder(void **state)
{
	struct sl_retry_rule rules[] = {
		{ .kind = SL_RETRY_NOT_GATE, .n = 0, .gate = s_builder, .builder = agent_opus, .prompt = NULL, .worktree_reset = 0, .line = 1 },
		{ .kind = SL_RETRY_EXIT, .n = 3, .gate = NULL, .builder = NULL, .prompt = NULL, .worktree_reset = 0, .line = 2 },
	};
	struct sl_config cfg;
	struct build_retry_state st = BUILD_RETRY_STATE_INIT;
	struct build_retry_decision d;
	struct sl_err err = SL_ERR_INIT;

	memset(&cfg, 0, sizeof(cfg));
	cfg.retry = rules;
	cfg.nretry = 2;
	assert_int_equal(build_retry_decide(&cfg, &st, 1, NULL, 124, &d, &err), 0);
	assert_int_equal(d.retry, 1);
	assert_string_equal(d.overrides.builder[0], "claude-opus");
}

/* A store holding one claimed run, "R-1" (the state's rows refer to it). */
static int setup_run(void **state)
{
	struct test_store *f;
	struct sl_err err = SL_ERR_INIT;
	struct store_wo wo = STORE_WO_INIT;
	struct store_run r;

	if (test_store_setup(state, "/tmp/sluice-test-retry.XXXXXX"))
		return -1;
	f = *state;
	wo.id = (char *)"WO-1";
	wo.path = (char *)"work_orders/WO-1.md";
	wo.content_hash = (char *)"h1";
	wo.fields_json = (char *)"{}";
	wo.body = wo.title = wo.created_at = (char *)"";
	wo.status = wo.state = wo.reason = (char *)"ready";
	wo.priority = 3;
	wo.present = 1;
	memset(&r, 0, sizeof(r));
	r.id = (char *)"R-1";
	r.work_order_id = (char *)"WO-1";
	r.wo_content_hash = (char *)"h1";
	r.target = (char *)"refs/heads/main";
	if (store_begin(f->st, &err) || store_wo_put_tx(f->st, &wo, "bytes", 5, &err) ||
	    store_commit(f->st, &err) || store_run_claim(f->st, &r, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return 0;
}

static void test_save_load(void **state)
{
	struct test_store *f = *state;
	struct build_retry_state st = { 2, -1, 0, 1 }, back = { 9, 9, 9, 9 };
	struct sl_err err = SL_ERR_INIT;
	char *copy = sl_path_join(f->dir, "retry.json");
	struct sl_buf b = SL_BUF_INIT;

	assert_int_equal(build_retry_load(f->st, "R-1", &back, &err), 0);
	assert_int_equal(back.builder_rule, -1);
	assert_int_equal(back.prompt_rule, -1);
	assert_int_equal(back.reset_rule, -1);
	assert_int_equal(build_retry_save(f->st, "R-1", f->dir, &st, &err), 0);
	assert_int_equal(build_retry_load(f->st, "R-1", &back, &err), 0);
	assert_int_equal(back.builder_rule, 2);
	assert_int_equal(back.prompt_rule, -1);
	assert_int_equal(back.reset_rule, 0);
	assert_int_equal(back.session_rule, 1);
	/* the copy for people says the same */
	assert_int_equal(sl_read_file(&b, copy, 4096, &err), 0);
	assert_non_null(strstr(sl_buf_cstr(&b), "\"builder_rule\": 2"));
	sl_buf_release(&b);
	free(copy);
}

static void test_copy_never_read(void **state)
{
	/* what a builder or a gate writes over the copy changes nothing */
	struct test_store *f = *state;
	struct build_retry_state st = { -1, 1, -1, -1 }, back;
	struct sl_err err = SL_ERR_INIT;
	char *copy = sl_path_join(f->dir, "retry.json");
	const char *forged[] = { "{not json", "{\"builder_rule\": 0, \"prompt_rule\": 0, "
			         "\"reset_rule\": 0}", "" };

	assert_int_equal(build_retry_save(f->st, "R-1", f->dir, &st, &err), 0);
	for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
		assert_int_equal(sl_write_file_atomic(copy, forged[i], strlen(forged[i]), &err), 0);
		assert_int_equal(build_retry_load(f->st, "R-1", &back, &err), 0);
		assert_int_equal(back.builder_rule, -1);
		assert_int_equal(back.prompt_rule, 1);
		assert_int_equal(back.reset_rule, -1);
	}
	/* a copy that cannot be written (a folder in its place) is no error */
	assert_int_equal(unlink(copy), 0);
	assert_int_equal(mkdir(copy, 0700), 0);
	assert_int_equal(build_retry_save(f->st, "R-1", f->dir, &st, &err), 0);
	/* a person's retry forgets the state */
	assert_int_equal(rmdir(copy), 0);
	assert_int_equal(build_retry_forget(f->st, "R-1", f->dir, &err), 0);
	assert_int_equal(build_retry_load(f->st, "R-1", &back, &err), 0);
	assert_int_equal(back.prompt_rule, -1);
	free(copy);
}

static void test_stale_state_ignored(void **state)
{
	/* A state from an older config (index past the list) means no override. */
	struct sl_config cfg;
	struct build_retry_state st = { 5, 5, 5, 5 };
	struct build_retry_overrides ov;

	memset(&cfg, 0, sizeof(cfg));
	build_retry_overrides(&cfg, &st, &ov);
	assert_null(ov.builder);
	assert_null(ov.prompt);
	assert_int_equal(ov.worktree_reset, 0);
}

static char n_thinking[] = "thinking", n_opus[] = "opus";
static char *argv_other[] = { s_builder, NULL };

/* agent: shares its keyword with builder: the later one wins; session is its own. */
static void test_agent_and_session(void **state)
{
	struct sl_retry_rule rules[] = {
		{ .kind = SL_RETRY_ATTEMPT, .n = 2, .builder = argv_other, .line = 1 },
		{ .kind = SL_RETRY_ATTEMPT, .n = 3, .agent = n_thinking, .session = SL_SESSION_KEEP,
		  .line = 3 },
		{ .kind = SL_RETRY_ATTEMPT, .n = 4, .agent = n_opus, .session = SL_SESSION_NEW,
		  .line = 6 },
		{ .kind = SL_RETRY_EXIT, .n = 5, .line = 9 },
	};
	struct sl_config cfg;
	struct build_retry_state st = BUILD_RETRY_STATE_INIT;
	struct build_retry_decision d;
	const char *failed[] = { "test", NULL };
	struct sl_err err = SL_ERR_INIT;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.retry = rules;
	cfg.nretry = 4;
	assert_int_equal(build_retry_decide(&cfg, &st, 1, failed, 0, &d, &err), 0);
	assert_non_null(d.overrides.builder);
	assert_null(d.overrides.agent);
	assert_int_equal(d.overrides.session, 0);
	st = d.state;
	assert_int_equal(build_retry_decide(&cfg, &st, 2, failed, 0, &d, &err), 0);
	assert_null(d.overrides.builder); /* the agent replaced the argv */
	assert_string_equal(d.overrides.agent, "thinking");
	assert_int_equal(d.overrides.session, SL_SESSION_KEEP);
	assert_non_null(strstr(d.reason, "with agent thinking from retry rule 2, session keep "
				 "from retry rule 2"));
	st = d.state;
	assert_int_equal(build_retry_decide(&cfg, &st, 3, failed, 0, &d, &err), 0);
	assert_string_equal(d.overrides.agent, "opus");
	assert_int_equal(d.overrides.session, SL_SESSION_NEW);
	assert_int_equal(d.state.builder_rule, 2);
	assert_int_equal(d.state.session_rule, 2);
	st = d.state;
	assert_int_equal(build_retry_decide(&cfg, &st, 4, failed, 0, &d, &err), 0);
	assert_string_equal(d.overrides.agent, "opus"); /* sticky */
	assert_int_equal(build_retry_decide(&cfg, &d.state, 5, failed, 0, &d, &err), 0);
	assert_int_equal(d.retry, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seed_table),
		cmocka_unit_test(test_agent_and_session),
		cmocka_unit_test(test_no_rules_fatal),
		cmocka_unit_test(test_no_exit_fatal),
		cmocka_unit_test(test_exit_only_plain_retries),
		cmocka_unit_test(test_person_restart),
		cmocka_unit_test(test_not_gate),
		cmocka_unit_test(test_not_builder),
		cmocka_unit_test_setup_teardown(test_save_load, setup_run, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_copy_never_read, setup_run,
						test_store_teardown),
		cmocka_unit_test(test_stale_state_ignored),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
