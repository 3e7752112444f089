/* core/config.c: defaults, every section, retry rules, templates, presets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/fs.h"

static char dir[] = "/tmp/sluice-test-config.XXXXXX";

static char *write_config(const char *text)
{
	char *path = sl_path_join(dir, "config.yaml");
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(sl_write_file(path, text, strlen(text), &err), 0);
	return path;
}

/* Check text, return the problems (caller frees) and their count. */
static char *problems_of(const char *text, int *count)
{
	struct sl_buf out = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	char *path = write_config(text);

	*count = sl_config_check(path, &out, &err);
	free(path);
	return sl_buf_detach(&out);
}

static void expect_problem(const char *text, const char *needle)
{
	int n;
	char *p = problems_of(text, &n);

	if (!p || !strstr(p, needle))
		fail_msg("expected '%s' in:\n%s", needle, p ? p : "(nothing)");
	assert_true(n > 0);
	free(p);
}

static void test_defaults(void **state)
{
	struct sl_config *cfg = NULL;
	struct sl_err err = SL_ERR_INIT;

	(void)state;
	assert_int_equal(sl_config_default(&cfg, &err), 0);
	assert_string_equal(cfg->queue.inbox, "work_orders");
	assert_int_equal(cfg->queue.jobs, 2);
	assert_int_equal(cfg->queue.allow_overlap, 0);
	assert_int_equal(cfg->builder.timeout_ms, 30 * 60 * 1000);
	assert_null(cfg->builder.command);
	assert_int_equal(cfg->reviewer.mode, SL_REVIEWER_MANUAL);
	assert_int_equal(cfg->reviewer.timeout_ms, 120000);
	assert_string_equal(cfg->merge.resolver, "builder");
	assert_int_equal(cfg->merge.resolve_attempts, 2);
	assert_int_equal(cfg->merge.verify, 1);
	assert_int_equal(cfg->gc.keep_last, 20);
	sl_config_free(cfg);
}

static const char full[] =
        "target: main\n"
        "queue:\n  inbox: tasks\n  jobs: 4\n  allow_overlap: true\n"
        "builder:\n  command: [sh, -c, 'echo hi']\n  timeout: 90s\n  env:\n    FOO: bar\n"
        "  log_max: 2MiB\n"
        "worktree:\n  share: [node_modules]\n  copy: [.env]\n  setup: [npm, ci]\n"
        "  setup_timeout: 5m\n  hooks: on\n"
        "gates:\n  test: [make, test]\n  lint:\n    command: [make, lint]\n    timeout: 2m\n"
        "retry:\n  - not: gate.test\n    prompt: 'fix {gate.test.output} for {work_order.title}'\n"
        "  - attempt: 3\n    builder: [other-agent]\n    worktree: reset\n  - exit: 5\n"
        "reviewer:\n  mode: http\n  url: http://127.0.0.1:9/review\n  protocol: openai\n"
        "  model: m\n  token_env: TOKEN\n  timeout: 2m\n  connect_timeout: 5s\n  retries: 1\n"
        "  max_reply: 64KiB\n  name: robot\n"
        "merge:\n  resolver: none\n  resolve_attempts: 0\n  verify: false\n"
        "  message: 'Merge {work_order.id} ({run.id})'\n"
        "gc:\n  keep_last: 3\n";

static void test_full(void **state)
{
	struct sl_config *cfg = NULL;
	struct sl_err err = SL_ERR_INIT;
	char *path = write_config(full);

	(void)state;
	if (sl_config_load(&cfg, path, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(cfg->target, "main");
	assert_string_equal(cfg->queue.inbox, "tasks");
	assert_int_equal(cfg->queue.jobs, 4);
	assert_int_equal(cfg->queue.allow_overlap, 1);
	assert_int_equal(sl_strv_len(cfg->builder.command), 3);
	assert_string_equal(cfg->builder.command[2], "echo hi");
	assert_int_equal(cfg->builder.timeout_ms, 90000);
	assert_string_equal(cfg->builder.env[0], "FOO=bar");
	assert_int_equal(cfg->builder.log_max, 2 << 20);
	assert_string_equal(cfg->worktree.share[0], "node_modules");
	assert_string_equal(cfg->worktree.copy[0], ".env");
	assert_string_equal(cfg->worktree.setup[1], "ci");
	assert_int_equal(cfg->worktree.setup_timeout_ms, 300000);
	assert_int_equal(cfg->worktree.hooks, 1);
	assert_int_equal(cfg->ngates, 2);
	assert_string_equal(cfg->gates[0].name, "test");
	assert_string_equal(cfg->gates[1].name, "lint");
	assert_int_equal(cfg->gates[1].timeout_ms, 120000);
	assert_int_equal(cfg->nretry, 3);
	assert_int_equal(cfg->retry[0].kind, SL_RETRY_NOT_GATE);
	assert_string_equal(cfg->retry[0].gate, "test");
	assert_non_null(cfg->retry[0].prompt);
	assert_int_equal(cfg->retry[1].kind, SL_RETRY_ATTEMPT);
	assert_int_equal(cfg->retry[1].n, 3);
	assert_int_equal(cfg->retry[1].worktree_reset, 1);
	assert_string_equal(cfg->retry[1].builder[0], "other-agent");
	assert_int_equal(cfg->retry[2].kind, SL_RETRY_EXIT);
	assert_int_equal(cfg->retry[2].n, 5);
	assert_int_equal(cfg->reviewer.mode, SL_REVIEWER_HTTP);
	assert_int_equal(cfg->reviewer.protocol, SL_PROTOCOL_OPENAI);
	assert_string_equal(cfg->reviewer.token_env, "TOKEN");
	assert_int_equal(cfg->reviewer.connect_timeout_ms, 5000);
	assert_int_equal(cfg->reviewer.max_reply, 64 << 10);
	assert_string_equal(cfg->reviewer.name, "robot");
	assert_string_equal(cfg->merge.resolver, "none");
	assert_int_equal(cfg->merge.verify, 0);
	assert_int_equal(cfg->gc.keep_last, 3);
	sl_config_free(cfg);
	free(path);
}

static void test_missing_file(void **state)
{
	struct sl_config *cfg = NULL;
	struct sl_err err = SL_ERR_INIT;

	(void)state;
	assert_int_equal(sl_config_load(&cfg, "/nonexistent/config.yaml", &err), SL_ENOTFOUND);
	assert_null(cfg);
}

static void test_empty_is_defaults(void **state)
{
	int n;
	char *p = problems_of("# nothing\n", &n);

	(void)state;
	assert_int_equal(n, 0);
	free(p);
}

static void test_retry_without_exit(void **state)
{
	(void)state;
	expect_problem("gates:\n  test: [make]\nretry:\n  - attempt: 2\n",
	               "retry has no 'exit' entry; add '- exit: N' to say when to stop");
}

static void test_retry_rules(void **state)
{
	(void)state;
	expect_problem("retry:\n  - not: gate.nope\n  - exit: 3\n",
	               "'not: gate.nope' names no configured gate");
	expect_problem("retry:\n  - attempt: 2\n    exit: 3\n", "exactly one condition");
	expect_problem("retry:\n  - prompt: x\n  - exit: 3\n", "exactly one condition");
	expect_problem("retry:\n  - not: test\n  - exit: 3\n",
	               "'not:' must name a gate as 'gate.<name>'");
	expect_problem("retry:\n  - attempt: 2\n    agent: claude-opus\n  - exit: 3\n",
	               "'agent' is not a sluice retry override");
	expect_problem("retry:\n  - attempt: 2\n    worktree: keep\n  - exit: 3\n",
	               "can only be 'reset'");
	expect_problem("retry:\n  - exit: 3\n  - exit: 4\n", "2 'exit' entries");
	expect_problem("retry:\n  - attempt: 2\n    prompt: 'use {nonsense}'\n  - exit: 3\n",
	               "unknown variable '{nonsense}'");
	expect_problem("retry:\n  - validate: validators/x\n  - exit: 3\n",
	               "'retry.validate' must be a list (an argv)");
	expect_problem("retry:\n  - attempt: 2\n    with: {a: b}\n  - exit: 3\n",
	               "'with' in a retry entry goes with 'validate: [argv]'");
}

static void test_positions(void **state)
{
	int n;
	char *p = problems_of("queue:\n  jobs: lots\n  colour: blue\n", &n);

	(void)state;
	assert_int_equal(n, 2);
	assert_non_null(strstr(p, "config.yaml:2:9: 'queue.jobs' must be a whole number"));
	assert_non_null(strstr(p, "config.yaml:3:3: unknown key 'colour' in queue"));
	free(p);
}

static void test_bad_values(void **state)
{
	(void)state;
	expect_problem("builder:\n  command: make test\n", "must be a list (an argv)");
	expect_problem("builder:\n  preset: copilot\n", "unknown builder.preset 'copilot'");
	expect_problem("builder:\n  preset: aider\n  command: [x]\n",
	               "both 'command' and 'preset'");
	expect_problem("builder:\n  timeout: soon\n", "invalid duration 'soon'");
	expect_problem("queue:\n  inbox: ../out\n", "'queue.inbox' must be a directory");
	expect_problem("queue:\n  allow_overlap: maybe\n", "must be true or false");
	expect_problem("worktree:\n  share: [/etc]\n", "is not a path inside the repository");
	expect_problem("reviewer:\n  mode: http\n", "reviewer.url is not set");
	expect_problem("reviewer:\n  mode: telepathy\n", "must be manual, http or command");
	expect_problem("reviewer:\n  url: ftp://x\n", "must start with http://");
	expect_problem("merge:\n  message: 'Merge {nope}'\n", "unknown variable '{nope}'");
	expect_problem("merge:\n  resolver: magic\n", "builder or none");
	expect_problem("target: 'bad..name'\n", "not a valid branch name");
	expect_problem("gates:\n  'bad name': [x]\n", "gate name 'bad name'");
	expect_problem("queue: [\n", "YAML syntax error");
	expect_problem("nonsense: 1\n", "unknown key 'nonsense'");
}

/* What can never work is refused up front, not retried every tick. */
static void test_never_works(void **state)
{
	int n;
	char *p;

	(void)state;
	expect_problem("target: -x\n", "target '-x' starts with '-'");
	expect_problem("target: HEAD\n", "target 'HEAD' is not a branch");
	expect_problem("target: refs/heads/main\n", "name the branch without 'refs/heads/'");
	expect_problem("worktree:\n  share: [.git]\n", "'worktree.share' entry '.git'");
	expect_problem("worktree:\n  share: [.git/hooks]\n", "'worktree.share' entry '.git/hooks'");
	expect_problem("worktree:\n  copy: [.system]\n", "'worktree.copy' entry '.system'");
	expect_problem("worktree:\n  copy: [./.system/x]\n", "'worktree.copy' entry './.system/x'");
	expect_problem("worktree:\n  share: [a/../../x]\n", "is not a path inside the repository");
	expect_problem("merge:\n  message: '{work_order.title'\n",
	               "unterminated variable '{work_order.title'");
	expect_problem("merge:\n  message: 'Merge {work order}'\n", "'{' at column 7");
	expect_problem("merge:\n  message: 'Merge } x'\n", "'}' at column 7");
	/* still fine: braces doubled, known variables, a branch with a slash */
	p = problems_of("target: release/1.x\nmerge:\n  message: '{{x}} {work_order.id}: "
	                "{work_order.title} {run.id}'\nworktree:\n  share: [.github, node_modules]\n",
	                &n);
	if (n)
		fail_msg("unexpected: %s", p);
	free(p);
}

static void test_load_reports_first(void **state)
{
	struct sl_config *cfg = NULL;
	struct sl_err err = SL_ERR_INIT;
	char *path = write_config("gates:\n  t: [x]\nretry:\n  - attempt: 2\n");

	(void)state;
	assert_int_equal(sl_config_load(&cfg, path, &err), SL_EINVALID);
	assert_null(cfg);
	assert_non_null(strstr(err.msg, "retry has no 'exit' entry"));
	assert_null(strchr(err.msg, '\n'));
	free(path);
}

static void test_template_loads(void **state)
{
	struct sl_config *cfg = NULL;
	struct sl_err err = SL_ERR_INIT;
	char *text = sl_config_template("my-branch", "tasks/in box");
	char *path;

	(void)state;
	assert_non_null(text);
	assert_non_null(strstr(text, "target: my-branch\n"));
	assert_non_null(strstr(text, "# builder:"));
	path = write_config(text);
	if (sl_config_load(&cfg, path, &err))
		fail_msg("the template does not load: %s", err.msg);
	assert_string_equal(cfg->target, "my-branch");
	assert_string_equal(cfg->queue.inbox, "tasks/in box");
	assert_null(cfg->builder.command);
	sl_config_free(cfg);
	free(path);
	free(text);
}

static void test_presets(void **state)
{
	static const char *const names[] = {"claude-code", "codex", "aider", "gemini"};
	struct sl_err err = SL_ERR_INIT;
	sl_strv argv = NULL;
	size_t i;

	(void)state;
	for (i = 0; i < 4; i++) {
		assert_int_equal(sl_config_preset(&argv, names[i], &err), 0);
		assert_string_equal(argv[0], "sh");
		assert_string_equal(argv[1], "-c");
		assert_non_null(strstr(argv[2], "SLUICE_PROMPT_FILE"));
		assert_null(argv[3]);
		sl_strv_free(argv);
	}
	assert_int_equal(sl_config_preset(&argv, "nope", &err), SL_ENOTFOUND);
	assert_null(argv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_defaults),
	        cmocka_unit_test(test_full),
	        cmocka_unit_test(test_missing_file),
	        cmocka_unit_test(test_empty_is_defaults),
	        cmocka_unit_test(test_retry_without_exit),
	        cmocka_unit_test(test_retry_rules),
	        cmocka_unit_test(test_positions),
	        cmocka_unit_test(test_bad_values),
	        cmocka_unit_test(test_never_works),
	        cmocka_unit_test(test_load_reports_first),
	        cmocka_unit_test(test_template_loads),
	        cmocka_unit_test(test_presets),
	};
	struct sl_err err = SL_ERR_INIT;
	int rc;

	if (!mkdtemp(dir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	sl_rm_rf(dir, &err);
	return rc;
}
