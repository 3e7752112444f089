/*
 * core/config.c's messages for the settings read by words (T_ENUM rows) and
 * for a retry entry's keys, word for word and at their line:column: the
 * table reads them now, and each message stays what the hand-written
 * readers said.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/config.h"

static const struct {
	const char *yaml, *want;
} cases[] = {
	{"queue:\n  overlap: maybe\n",
	 "config.yaml:2:12: 'queue.overlap' must be 'resolve' or 'fatal', not 'maybe'\n"},
	{"queue:\n  overlap: [a]\n", "config.yaml:2:12: 'queue.overlap' must be a text value\n"},
	{"worktree:\n  recycle: dirty\n",
	 "config.yaml:2:12: unknown worktree.recycle 'dirty'; use clean (the default: a reused "
	 "worktree loses its ignored files too) or keep-ignored (node_modules/, build/ and other "
	 "ignored files stay from run to run)\n"},
	{"worktree:\n  mode: rw\n",
	 "config.yaml:2:9: unknown worktree.mode 'rw'; use read-write, read-only or none "
	 "(read-write, the default: the builder's changes are merged; read-only: it may change "
	 "nothing and the run ends in a report; none: it works in an empty folder)\n"},
	{"gates:\n  t:\n    command: [true]\n    worktree: none\n",
	 "config.yaml:4:15: unknown gates.<name>.worktree 'none'; use read-write (the default) or "
	 "read-only (the gate must change no file: a write fails it)\n"},
	{"reviewer:\n  mode: auto\n",
	 "config.yaml:2:9: reviewer.mode must be manual, http or command, not 'auto'\n"},
	{"reviewer:\n  protocol: {a: b}\n",
	 "config.yaml:2:13: reviewer.protocol must be sluice or openai, not '(a list or "
	 "mapping)'\n"},
	{"executor:\n  kind: aws\n",
	 "config.yaml:2:9: 'executor.kind' must be local, slurm or kubernetes, not 'aws'\n"},
	{"executor:\n  kind: slurm\n  remote: -x\n",
	 "config.yaml:3:11: 'executor.remote' must not be empty or start with '-' (it is given to "
	 "the engine's CLI as a value)\n"
	 "config.yaml:3:11: executor.remote '-x' is neither a URL nor an absolute path; the "
	 "workers clone it from another folder\n"},
	{"retry:\n  - attempt: 2\n    session: old\n  - exit: 3\n",
	 "config.yaml:3:14: 'session' in a retry entry must be 'new' or 'keep', not 'old'\n"},
	{"retry:\n  - attempt: 2\n    worktree: clean\n  - exit: 3\n",
	 "config.yaml:3:15: 'worktree' in a retry entry can only be 'reset'\n"},
	{"retry:\n  - attempt: 0\n  - exit: 3\n",
	 "config.yaml:2:14: 'retry.attempt' must be a whole number from 1 to 1000, not '0'\n"},
	{"retry:\n  - not: test\n  - exit: 3\n",
	 "config.yaml:2:10: 'not:' must name a gate as 'gate.<name>', not 'test'\n"},
	{"retry:\n  - attempt: 2\n    promt: x\n  - exit: 3\n",
	 "config.yaml:3:5: unknown key 'promt' in a retry entry; did you mean 'prompt'? (known "
	 "keys: attempt, not, exit, validate, with, timeout, builder, agent, session, prompt, "
	 "worktree)\n"},
	{"retry:\n  - attempt: 2\n    exit: 3\n",
	 "config.yaml:2:5: a retry entry needs exactly one condition (attempt: N, not: gate.NAME, "
	 "validate: [argv] or exit: N); this one has 2\n"},
	{"retry:\n  - validate: [v]\n    with: {a: x, a: y}\n  - exit: 3\n",
	 "config.yaml:3:18: input 'a' is given twice in 'with'; keep one\n"},
	{"retry:\n  - validate: [v]\n    with: [x]\n  - exit: 3\n",
	 "config.yaml:3:11: 'with' must be a mapping of inputs to templates, e.g. 'with: {diff: "
	 "\"{diff}\"}'\n"},
	{"retry:\n  - attempt: 2\n    timeout: soon\n  - exit: 3\n",
	 "config.yaml:3:14: 'retry.timeout': "},
	{"retry:\n  - attempt: 2\n    timeout: 5s\n  - exit: 3\n",
	 "config.yaml:2:5: 'timeout' in a retry entry goes with 'validate: [argv]' (the validator "
	 "it configures); add one or remove it\n"},
	{"retry:\n  - attempt: 2\n    agent: robot\n  - exit: 3\n",
	 "config.yaml:3:12: unknown agent 'robot'; known agents: claude-code, codex, aider or "
	 "gemini (presets)\n"},
	{"retry:\n  - attempt: 2\n    agent: codex\n    builder: [b]\n  - exit: 3\n",
	 "config.yaml:2:5: a retry entry has both 'agent' and 'builder'; keep one (both say what "
	 "builds from then on)\n"},
	{"retry:\n  - validate: []\n  - exit: 3\n",
	 "config.yaml:2:15: 'retry.validate' is an empty list; give the program and its "
	 "arguments\n"},
	{"merge:\n  resolver: human\n",
	 "config.yaml:2:13: merge.resolver must be builder or none, not 'human'\n"},
	{"notify:\n  url: ftp://u:secret@h/\n",
	 "config.yaml:2:8: notify.url 'ftp://h/' must start with http:// or https://\n"},
	{"reviewer:\n  url: http://h:80a/\n",
	 "config.yaml:2:8: reviewer.url 'http://h:80a/' has a port that is not a number from 1 "
	 "to 65535; write http://HOST:PORT/ with digits, or leave the port out\n"},
	{"reviewer:\n  name: \"a\\tb\"\n",
	 "config.yaml:2:9: reviewer.name holds a control character (a newline, a tab, an "
	 "escape); it becomes the Reviewed-by: trailer: write one line\n"},
	{"retry:\n  - 5\n", "config.yaml:2:5: each retry entry must be a mapping such as '- "
	 "attempt: 2' or '- exit: 4'\n"},
};

static void test_messages(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sl_buf out = SL_BUF_INIT;
		struct sl_err err = SL_ERR_INIT;
		int n = sl_config_parse(NULL, "config.yaml", cases[i].yaml, strlen(cases[i].yaml),
		                        &out, &err);
		if (n <= 0 || strncmp(sl_buf_cstr(&out), cases[i].want, strlen(cases[i].want)))
			fail_msg("case %zu:\n%s\nwant:\n%s\ngot (%d):\n%s", i, cases[i].yaml,
			         cases[i].want, n, sl_buf_cstr(&out));
		sl_buf_release(&out);
	}
}

/* What the retry rows read, and that a good entry has no problem. */
static void test_retry_values(void **state)
{
	static const char text[] =
	        "gates:\n  test: [true]\nretry:\n  - not: gate.test\n    agent: codex\n"
	        "    session: new\n    worktree: reset\n    prompt: again\n"
	        "  - validate: [v, x]\n    with: {d: \"{diff}\"}\n    builder: [b]\n"
	        "    session: keep\n  - exit: 4\n";
	struct sl_buf out = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	struct sl_config *cfg = NULL;
	int n;

	(void)state;
	n = sl_config_parse(&cfg, "config.yaml", text, strlen(text), &out, &err);
	if (n != 0)
		fail_msg("%s", sl_buf_cstr(&out));
	assert_int_equal(cfg->nretry, 3);
	assert_int_equal(cfg->retry[0].kind, SL_RETRY_NOT_GATE);
	assert_string_equal(cfg->retry[0].gate, "test");
	assert_string_equal(cfg->retry[0].agent, "codex");
	assert_int_equal(cfg->retry[0].session, SL_SESSION_NEW);
	assert_int_equal(cfg->retry[0].worktree_reset, 1);
	assert_string_equal(cfg->retry[0].prompt, "again");
	assert_int_equal(cfg->retry[1].kind, SL_RETRY_VALIDATE);
	assert_string_equal(cfg->retry[1].validate[1], "x");
	assert_string_equal(cfg->retry[1].with[0], "d={diff}");
	assert_int_equal(cfg->retry[1].validate_timeout_ms, 120000);
	assert_string_equal(cfg->retry[1].builder[0], "b");
	assert_int_equal(cfg->retry[1].session, SL_SESSION_KEEP);
	assert_int_equal(cfg->retry[2].kind, SL_RETRY_EXIT);
	assert_int_equal(cfg->retry[2].n, 4);
	sl_config_free(cfg);
	sl_buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_messages),
	        cmocka_unit_test(test_retry_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
