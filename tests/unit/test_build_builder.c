/*
 * The builder process against real git worktrees and the fixture builders
 * of fixtures/builders/: environment, log, timeout, hooks, resolve.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/fs.h"
#include "core/proc.h"
#include "builder/builder.h"
#include "test_helpers.h"

static char tmpdir[] = "/tmp/sl-builder-XXXXXX";
static char repo[64], wt[64], run_dir[64], prompt[128];

/* Run a shell script in dir with a git identity; its exit code, stdout in out (may be NULL). */
static int git_sh(const char *dir, const char *script, struct sl_buf *out)
{
	static const char *const env[] = { "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
					   "GIT_COMMITTER_NAME=t",
					   "GIT_COMMITTER_EMAIL=t@example.invalid", NULL };

	return test_sh_run(dir, script, env, out, NULL);
}

static int setup(void **state)
{
	char script[4096];

	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(repo, sizeof(repo), "%s/repo", tmpdir);
	snprintf(wt, sizeof(wt), "%s/wt", tmpdir);
	snprintf(run_dir, sizeof(run_dir), "%s/run", tmpdir);
	snprintf(prompt, sizeof(prompt), "%s/attempts/1/prompt.md", run_dir);
	snprintf(script, sizeof(script),
		 "mkdir -p %s/attempts/1 && echo 'the prompt' > %s && git init -q -b main %s && "
		 "cd %s && printf 'a\\nb\\nc\\n' > f.txt && git add f.txt && git commit -q -m base && "
		 "git worktree add -q -b run/x %s && "
		 "printf '#!/bin/sh\\necho hook says no >&2\\nexit 1\\n' > .git/hooks/pre-commit && "
		 "chmod +x .git/hooks/pre-commit",
		 run_dir, prompt, repo, repo, wt);
	return git_sh(tmpdir, script, NULL);
}

static int teardown(void **state)
{
	struct sl_err err = SL_ERR_INIT;

	return sl_rm_rf(tmpdir, &err);
}

static void opts_init(struct build_opts *o, const struct sl_config *cfg, int attempt)
{
	memset(o, 0, sizeof(*o));
	o->cfg = cfg;
	o->run_id = "r-123";
	o->work_order_id = "WO-7";
	o->run_dir = run_dir;
	o->worktree = wt;
	o->prompt_file = prompt;
	o->attempt = attempt;
	o->kill_grace_ms = 200;
}

static char *fixture(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/builders/%s", SLUICE_FIXTURES, name);
	return buf;
}

static char s_sh[] = "sh", s_c[] = "-c", s_token[] = "SL_T_TOKEN", s_extra[] = "EXTRA=yes";
static char s_env_script[] = "env | sort > \"$SLUICE_RUN_DIR/env.txt\"; pwd -P > \"$SLUICE_RUN_DIR/pwd.txt\"";

static void test_env_contract(void **state)
{
	char *argv[] = { s_sh, s_c, s_env_script, NULL }, *extra[] = { s_extra, NULL };
	struct sl_config cfg;
	struct build_opts o;
	struct sl_proc_result res;
	struct sl_err err = SL_ERR_INIT;
	char *env, *pwd, real[512];

	setenv("SL_T_TOKEN", "secret", 1);
	setenv("GIT_DIR", "/nonexistent", 1);
	memset(&cfg, 0, sizeof(cfg));
	cfg.builder.command = argv;
	cfg.builder.env = extra;
	cfg.reviewer.token_env = s_token;
	opts_init(&o, &cfg, 2);
	o.mode = RUN_MODE_RESOLVE;
	assert_int_equal(build_run(&o, &res, &err), 0);
	unsetenv("SL_T_TOKEN");
	unsetenv("GIT_DIR");
	assert_int_equal(res.exit_code, 0);
	env = test_read_in(run_dir, "env.txt");
	assert_non_null(env);
	assert_non_null(strstr(env, "\nSLUICE_RUN_ID=r-123\n"));
	assert_non_null(strstr(env, "\nSLUICE_WORK_ORDER_ID=WO-7\n"));
	assert_non_null(strstr(env, "\nSLUICE_MODE=resolve\n"));
	assert_non_null(strstr(env, "\nSLUICE_ATTEMPT=2\n"));
	assert_non_null(strstr(env, "\nSLUICE_PROMPT_FILE="));
	assert_non_null(strstr(env, prompt));
	assert_non_null(strstr(env, "\nSLUICE_RUN_DIR="));
	assert_non_null(strstr(env, "\nEXTRA=yes\n"));
	assert_non_null(strstr(env, "\nGIT_CONFIG_COUNT=1\n"));
	assert_non_null(strstr(env, "\nGIT_CONFIG_KEY_0=core.hooksPath\n"));
	assert_non_null(strstr(env, "\nGIT_CONFIG_VALUE_0=/dev/null\n"));
	assert_null(strstr(env, "SL_T_TOKEN"));
	assert_null(strstr(env, "secret"));
	assert_null(strstr(env, "GIT_DIR="));
	pwd = test_read_in(run_dir, "pwd.txt");
	assert_non_null(realpath(wt, real));
	strcat(real, "\n");
	assert_string_equal(pwd, real);
	free(env);
	free(pwd);
}

static void test_log_attempts_bounded(void **state)
{
	char f1[512], f2[512], *fail[] = { s_sh, fixture(f1, sizeof(f1), "fail.sh"), NULL };
	char *flood[] = { s_sh, fixture(f2, sizeof(f2), "flood.sh"), NULL };
	char bytes[] = "FLOOD_BYTES=3000000", *env[] = { bytes, NULL };
	struct sl_config cfg;
	struct build_opts o;
	struct sl_proc_result res;
	struct sl_err err = SL_ERR_INIT;
	char *log, *a2, logpath[600];
	struct stat st;

	snprintf(logpath, sizeof(logpath), "%s/builder.log", run_dir);
	unlink(logpath); /* start the log afresh for this test */
	memset(&cfg, 0, sizeof(cfg));
	cfg.builder.command = fail;
	cfg.builder.env = env;
	cfg.builder.log_max = 10000;
	opts_init(&o, &cfg, 1);
	assert_int_equal(build_run(&o, &res, &err), 0);
	assert_int_equal(res.exit_code, 3);
	/* attempt 2 with a retry override argv */
	opts_init(&o, &cfg, 2);
	o.argv_override = (const char *const *)flood;
	assert_int_equal(build_run(&o, &res, &err), 0);
	assert_int_equal(res.exit_code, 0);
	assert_int_equal(res.log_truncated, 1);
	log = test_read_in(run_dir, "builder.log");
	assert_non_null(log);
	assert_true(strncmp(log, "==== sluice: attempt 1 (build) started ", 39) == 0);
	assert_non_null(strstr(log, "fail.sh: attempt 1 giving up\n"));
	assert_non_null(strstr(log, "fail.sh: this goes to stderr\n"));
	assert_non_null(strstr(log, "==== sluice: attempt 1 ended: exit 3 ====\n"));
	assert_non_null(a2 = strstr(log, "==== sluice: attempt 2 (build) started "));
	assert_non_null(strstr(a2, "flood.sh"));
	assert_non_null(strstr(a2, "\n[sluice: log truncated at 10000 bytes]\n"));
	assert_non_null(strstr(a2, "==== sluice: attempt 2 ended: exit 0 ====\n"));
	assert_int_equal(stat(logpath, &st), 0);
	assert_true(st.st_size < 10000 + 2000);
	free(log);
	assert_int_equal(git_sh(wt, "git checkout -q -- . && git clean -qfd", NULL), 0);
}

static void test_timeout_hang(void **state)
{
	char f[512], *hang[] = { s_sh, fixture(f, sizeof(f), "hang.sh"), NULL };
	struct sl_config cfg;
	struct build_opts o;
	struct sl_proc_result res;
	struct sl_err err = SL_ERR_INIT;
	char *pids, *log;
	int leader = 0, child = 0;

	memset(&cfg, 0, sizeof(cfg));
	cfg.builder.command = hang;
	cfg.builder.timeout_ms = 500;
	opts_init(&o, &cfg, 1);
	assert_int_equal(build_run(&o, &res, &err), 0);
	assert_int_equal(res.timed_out, 1);
	pids = test_read_in(run_dir, "pids");
	assert_non_null(pids);
	assert_int_equal(sscanf(pids, "%d %d", &leader, &child), 2);
	for (int i = 0; i < 30000 && !(test_pid_gone(leader) && test_pid_gone(child)); i++)
		usleep(10000);
	assert_true(test_pid_gone(leader));
	assert_true(test_pid_gone(child));
	log = test_read_in(run_dir, "builder.log");
	assert_non_null(strstr(log, "==== sluice: attempt 1 ended: timed out after "));
	free(pids);
	free(log);
}

static void test_hooks(void **state)
{
	char f[512], *commit[] = { s_sh, fixture(f, sizeof(f), "commit.sh"), NULL };
	struct sl_config cfg;
	struct build_opts o;
	struct sl_proc_result res;
	struct sl_err err = SL_ERR_INIT;
	struct sl_buf out = SL_BUF_INIT;

	memset(&cfg, 0, sizeof(cfg));
	cfg.builder.command = commit;
	opts_init(&o, &cfg, 1);
	/* hooks off (the default): the repository's failing pre-commit does not run */
	assert_int_equal(build_run(&o, &res, &err), 0);
	assert_int_equal(res.exit_code, 0);
	assert_int_equal(git_sh(wt, "git rev-list --count HEAD", &out), 0);
	assert_string_equal(sl_buf_cstr(&out), "2\n");
	/* worktree.hooks: on: the hook runs and the commit fails */
	cfg.worktree.hooks = 1;
	assert_int_equal(build_run(&o, &res, &err), 0);
	assert_int_not_equal(res.exit_code, 0);
	sl_buf_reset(&out);
	assert_int_equal(git_sh(wt, "git rev-list --count HEAD", &out), 0);
	assert_string_equal(sl_buf_cstr(&out), "2\n");
	assert_int_equal(git_sh(wt, "git reset -q --hard HEAD~1 && git clean -qfd", NULL), 0);
	sl_buf_release(&out);
}

static void test_resolve_fixture(void **state)
{
	char f[512], *resolve[] = { s_sh, fixture(f, sizeof(f), "resolve.sh"), NULL };
	struct sl_config cfg;
	struct build_opts o;
	struct sl_proc_result res;
	struct sl_err err = SL_ERR_INIT;
	struct sl_buf out = SL_BUF_INIT;
	char path[600], *text, *summary;

	assert_int_equal(git_sh(repo, "sed -i 's/^b$/main b/' f.txt && git -c core.hooksPath=/dev/null commit -q -am main", NULL), 0);
	assert_int_equal(git_sh(wt, "sed -i 's/^b$/run b/' f.txt && git -c core.hooksPath=/dev/null commit -q -am run && "
			    "! git -c merge.conflictStyle=diff3 merge -q main", NULL), 0);
	memset(&cfg, 0, sizeof(cfg));
	cfg.builder.command = resolve;
	opts_init(&o, &cfg, 1);
	o.mode = RUN_MODE_RESOLVE;
	assert_int_equal(build_run(&o, &res, &err), 0);
	assert_int_equal(res.exit_code, 0);
	snprintf(path, sizeof(path), "%s/f.txt", wt);
	text = test_read_file(path);
	assert_string_equal(text, "a\nrun b\nmain b\nc\n");
	assert_int_equal(git_sh(wt, "git ls-files -u | wc -l", &out), 0);
	assert_string_equal(sl_buf_cstr(&out), "0\n");
	summary = test_read_in(run_dir, "summary.md");
	assert_non_null(strstr(summary, "f.txt"));
	assert_int_equal(git_sh(wt, "git -c core.hooksPath=/dev/null commit -q --no-edit", NULL), 0);
	free(text);
	free(summary);
	sl_buf_release(&out);
}

static void test_not_configured(void **state)
{
	char missing[] = "sluice-no-such-builder", *argv[] = { missing, NULL };
	struct sl_config cfg;
	struct build_opts o;
	struct sl_proc_result res;
	struct sl_err err = SL_ERR_INIT;

	memset(&cfg, 0, sizeof(cfg));
	opts_init(&o, &cfg, 1);
	assert_int_equal(build_run(&o, &res, &err), SL_EINVALID);
	assert_non_null(strstr(err.msg, "builder.command"));
	sl_err_clear(&err);
	cfg.builder.command = argv;
	assert_int_equal(build_run(&o, &res, &err), SL_ENOTFOUND);
	assert_non_null(strstr(err.msg, "'sluice-no-such-builder'"));
	assert_non_null(strstr(err.msg, "builder.command"));
}

static void test_argv_sources(void **state)
{
	char cmd[] = "mybuilder", *command[] = { cmd, NULL }, preset[] = "claude-code";
	char bogus[] = "no-such-preset";
	const char *over[] = { "other", "x", NULL };
	struct sl_config cfg;
	struct sl_err err = SL_ERR_INIT;
	sl_strv argv = NULL;

	memset(&cfg, 0, sizeof(cfg));
	cfg.builder.command = command;
	assert_int_equal(build_argv(&argv, &cfg, NULL, &err), 0);
	assert_string_equal(argv[0], "mybuilder");
	sl_strv_free(argv);
	assert_int_equal(build_argv(&argv, &cfg, over, &err), 0);
	assert_string_equal(argv[0], "other");
	assert_string_equal(argv[1], "x");
	sl_strv_free(argv);
	cfg.builder.command = NULL;
	cfg.builder.preset = preset;
	assert_int_equal(build_argv(&argv, &cfg, NULL, &err), 0);
	assert_non_null(argv);
	assert_non_null(argv[0]);
	sl_strv_free(argv);
	cfg.builder.preset = bogus;
	assert_int_equal(build_argv(&argv, &cfg, NULL, &err), SL_ENOTFOUND);
}

/* An agent name: a named builder (its command or preset), a preset; who is recorded. */
static void test_argv_agents(void **state)
{
	char mine[] = "mine", fast[] = "fast", cmd[] = "my-agent", codex[] = "codex";
	char aider[] = "aider", *command[] = { cmd, NULL };
	struct sl_builder named[2];
	const char *over[] = { "other", NULL };
	struct sl_config cfg;
	struct build_agent ag;
	struct sl_err err = SL_ERR_INIT;
	sl_strv argv = NULL;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	memset(named, 0, sizeof(named));
	named[0].name = mine;
	named[0].command = command;
	named[1].name = fast;
	named[1].preset = aider;
	cfg.builders = named;
	cfg.nbuilders = 2;
	cfg.builder.agent = mine;
	assert_int_equal(build_argv_agent(&argv, &cfg, NULL, NULL, &err), 0);
	assert_string_equal(argv[0], "my-agent");
	sl_strv_free(argv);
	assert_int_equal(build_argv_agent(&argv, &cfg, NULL, codex, &err), 0);
	assert_non_null(strstr(argv[2], "codex \"$@\" --json"));
	sl_strv_free(argv);
	assert_int_equal(build_argv_agent(&argv, &cfg, NULL, fast, &err), 0);
	assert_non_null(strstr(argv[2], "aider"));
	sl_strv_free(argv);
	assert_int_equal(build_argv_agent(&argv, &cfg, over, fast, &err), 0);
	assert_string_equal(argv[0], "other");
	sl_strv_free(argv);
	assert_int_equal(build_argv_agent(&argv, &cfg, NULL, "nope", &err), SL_EINVALID);
	build_agent_of(&cfg, NULL, NULL, &ag);
	assert_string_equal(ag.name, "mine");
	assert_int_equal(ag.resumes, 1); /* a command of the user's: SLUICE_SESSION tells it */
	build_agent_of(&cfg, NULL, fast, &ag);
	assert_string_equal(ag.name, "fast");
	assert_int_equal(ag.resumes, 0); /* aider */
	build_agent_of(&cfg, NULL, codex, &ag);
	assert_string_equal(ag.name, "codex");
	assert_int_equal(ag.resumes, 1);
	build_agent_of(&cfg, over, codex, &ag);
	assert_string_equal(ag.name, "retry.builder");
	cfg.builder.agent = NULL;
	cfg.builder.command = command;
	build_agent_of(&cfg, NULL, NULL, &ag);
	assert_string_equal(ag.name, "builder.command");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env_contract),
		cmocka_unit_test(test_log_attempts_bounded),
		cmocka_unit_test(test_timeout_hang),
		cmocka_unit_test(test_hooks),
		cmocka_unit_test(test_resolve_fixture),
		cmocka_unit_test(test_not_configured),
		cmocka_unit_test(test_argv_sources),
		cmocka_unit_test(test_argv_agents),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
