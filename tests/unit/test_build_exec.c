/*
 * Executors (build.h "Executors"): the Slurm back end's reading of
 * `scontrol show job -o` lines, and the job script itself, run here with
 * sh against a bare repository standing for executor.remote, with hostile
 * quoting in the remote's path, the builder's argv and its environment.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/fs.h"
#include "executor/executor_int.h"
#include "builder/builder.h"
#include "test_helpers.h"

static void expect_slurm(const char *line, enum exec_state state, int exit_code,
			 const char *detail)
{
	struct exec_status st;
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(exec_slurm_parse(line, &st, &err), 0);
	assert_int_equal(st.state, state);
	if (state == EXEC_DONE)
		assert_int_equal(st.exit_code, exit_code);
	assert_string_equal(st.detail, detail);
}

/* Lines as Slurm 22.05's `scontrol show job -o` prints them (shortened). */
static void test_slurm_parse(void **state)
{
	struct exec_status st;
	struct sl_err err = SL_ERR_INIT;

	(void)state;
	expect_slurm("JobId=12 JobName=sluice-x-a1-build UserId=root(0) JobState=COMPLETED "
		     "Reason=None Dependency=(null) Requeue=0 Restarts=0 ExitCode=0:0 "
		     "RunTime=00:00:01", EXEC_DONE, 0, "COMPLETED, ExitCode=0:0");
	expect_slurm("JobId=13 JobState=FAILED Reason=NonZeroExitCode ExitCode=3:0",
		     EXEC_DONE, 3, "FAILED, ExitCode=3:0");
	/* a script killed by a signal: FAILED with status 0: still a failure */
	expect_slurm("JobId=14 JobState=FAILED Reason=NonZeroExitCode ExitCode=0:9",
		     EXEC_DONE, 1, "FAILED, ExitCode=0:9");
	expect_slurm("JobId=15 JobState=CANCELLED Reason=None ExitCode=0:15", EXEC_LOST, 0,
		     "CANCELLED");
	/* cancelled, its shell exited 143 after its child died of the SIGTERM: the
	 * state says cancelled, the exit code does not (t1080) */
	expect_slurm("JobId=22 JobState=CANCELLED Reason=None ExitCode=143:0", EXEC_LOST, 0,
		     "CANCELLED");
	expect_slurm("JobId=16 JobState=NODE_FAIL Reason=NodeDown Dependency=(null) "
		     "ExitCode=0:0", EXEC_LOST, 0, "NODE_FAIL (NodeDown)");
	expect_slurm("JobId=17 JobState=TIMEOUT Reason=TimeLimit ExitCode=0:15", EXEC_LOST, 0,
		     "TIMEOUT (TimeLimit)");
	expect_slurm("JobId=18 JobState=PENDING Reason=Resources ExitCode=0:0", EXEC_PENDING, 0,
		     "PENDING (Resources)");
	expect_slurm("JobId=19 JobState=RUNNING Reason=None ExitCode=0:0", EXEC_RUNNING, 0,
		     "RUNNING");
	expect_slurm("JobId=20 JobState=COMPLETING Reason=None ExitCode=0:0", EXEC_RUNNING, 0,
		     "COMPLETING");
	/* a name holding "JobState=" is not the state: fields start a word */
	expect_slurm("JobId=21 JobName=xJobState=COMPLETED JobState=PREEMPTED Reason=None",
		     EXEC_LOST, 0, "PREEMPTED");
	assert_int_equal(exec_slurm_parse("slurm_load_jobs error: Invalid job id specified", &st,
					  &err), SL_EINVALID);
}

static char s_sh[] = "sh", s_c[] = "-c",
	    s_builder[] = "printf '%s\\n' \"it's $QUOTED\" >built.txt; "
			  "cat \"$SLUICE_PROMPT_FILE\" >>built.txt; "
			  "echo summary >\"$SLUICE_SUMMARY_FILE\"; echo to the log; exit 3",
	    s_env[] = "QUOTED=a 'b' \"c\" $(touch /tmp/pwned-by-sluice-test) `x`",
	    s_copy[] = "dir with space/.env";
static char *argv_builder[] = { s_sh, s_c, s_builder, NULL };
static char *env_builder[] = { s_env, NULL };
static char *copy_paths[] = { s_copy, NULL };

/* The script of a build job against a remote whose path has a quote and a space: run it. */
static void test_script_runs(void **state)
{
	char tmp[PATH_MAX], repo[PATH_MAX + 8], remote[PATH_MAX + 64];
	struct sl_config *cfg = NULL;
	struct sl_err err = SL_ERR_INIT;
	struct sl_buf script = SL_BUF_INIT;
	struct exec_script sc = { 0 };
	char base[64], input[64];

	(void)state;
	assert_int_equal(test_git_tmpdir(tmp, repo, sizeof(repo), "/tmp/sluice-exec.XXXXXX"), 0);
	snprintf(remote, sizeof(remote), "%s/it's a remote.git", tmp);
	sh("git init -q --bare \"%s\" && git init -q \"%s\" && cd \"%s\" && echo one >a.txt && "
	   "git add a.txt && git commit -q -m one", remote, repo, repo);
	snprintf(base, sizeof(base), "%s", sh_line("git -C '%s' rev-parse HEAD", repo));
	/* the input: prompt.md and a copied file */
	sh("mkdir -p '%s/in/copy/dir with space' && echo PROMPT >'%s/in/prompt.md' && "
	   "echo SECRET=1 >'%s/in/copy/dir with space/.env'", tmp, tmp, tmp);
	sh("cd '%s' && t=$(GIT_INDEX_FILE='%s/i' git --work-tree='%s/in' add -A . && "
	   "GIT_INDEX_FILE='%s/i' git write-tree) && git commit-tree $t -m in >'%s/input'",
	   repo, tmp, tmp, tmp, tmp);
	snprintf(input, sizeof(input), "%s", sh_line("cat '%s/input'", tmp));
	sh("cd '%s' && git push -q \"%s\" %s:refs/sluice/runs/R1/a1/base "
	   "%s:refs/sluice/runs/R1/a1/input", repo, remote, base, input);

	assert_int_equal(sl_config_default(&cfg, &err), 0);
	cfg->executor.kind = SL_EXEC_SLURM;
	cfg->executor.remote = strdup(remote);
	cfg->worktree.copy = copy_paths;
	sc.cfg = cfg;
	sc.purpose = "build";
	sc.refs = "refs/sluice/runs/R1/a1";
	sc.run_id = "R1";
	sc.branch = "run/W-1";
	sc.attempt = 1;
	sc.argv = (const char *const *)argv_builder;
	sc.env = (const char *const *)env_builder;
	sc.timeout_ms = 60000;
	sc.log_max = 1 << 20;
	assert_int_equal(exec_script_write(&sc, &script, &err), 0);
	cfg->worktree.copy = NULL;
	{
		char path[PATH_MAX + 16];
		snprintf(path, sizeof(path), "%s/job.sh", tmp);
		assert_int_equal(sl_write_file(path, script.ptr, script.len, &err), 0);
		sh("sh -n '%s'", path);
		unlink("/tmp/pwned-by-sluice-test");
		sh("cd / && TMPDIR='%s' sh '%s' >'%s/job.out' 2>&1", tmp, path, tmp);
		assert_int_equal(access("/tmp/pwned-by-sluice-test", F_OK), -1);
	}
	/* the result: the builder's file on the base, the copy left out */
	assert_string_equal(sh_line("git --git-dir=\"%s\" rev-parse refs/sluice/runs/R1/a1/result^",
				    remote), base);
	assert_string_equal(sh_all("git --git-dir=\"%s\" show refs/sluice/runs/R1/a1/result:built.txt",
				   remote),
			    "it's a 'b' \"c\" $(touch /tmp/pwned-by-sluice-test) `x`\nPROMPT");
	assert_string_equal(sh_line("git --git-dir=\"%s\" cat-file -e 'refs/sluice/runs/R1/a1/result:"
				    "dir with space/.env' 2>/dev/null && echo kept || echo left out",
				    remote), "left out");
	/* the out: its exit, its log, its summary */
	assert_string_equal(sh_line("git --git-dir=\"%s\" show refs/sluice/runs/R1/a1/out:exit", remote), "3");
	assert_string_equal(sh_line("git --git-dir=\"%s\" show refs/sluice/runs/R1/a1/out:builder.log", remote),
			    "to the log");
	assert_string_equal(sh_line("git --git-dir=\"%s\" show refs/sluice/runs/R1/a1/out:summary.md", remote),
			    "summary");
	/* the job's folder is gone */
	assert_string_equal(sh_line("ls '%s' | grep -c sluice-job || true", tmp), "0");
	sl_buf_release(&script);
	sl_config_free(cfg);
	sh("rm -rf '%s'", tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slurm_parse),
		cmocka_unit_test(test_script_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
