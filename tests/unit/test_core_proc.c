/* sl_proc_run with real processes: sh, cat, sleep, head. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/git.h"
#include "core/proc.h"
#include "test_helpers.h"

static char tmpdir[] = "/tmp/sl-proc-XXXXXX";

static int setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	struct sl_err err = SL_ERR_INIT;

	return sl_rm_rf(tmpdir, &err);
}

static void tmp_path(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", tmpdir, name);
}

/* Run sh -c script capturing stdout into out (may be NULL). */
static int run_sh(const char *script, struct sl_proc_opts *o, struct sl_proc_result *res)
{
	const char *argv[] = { "sh", "-c", script, NULL };
	struct sl_err err = SL_ERR_INIT;
	int error;

	o->argv = argv;
	error = sl_proc_run(o, res, &err);
	if (error)
		print_error("sl_proc_run: %s\n", err.msg);
	o->argv = NULL;
	return error;
}

static void test_exit_codes(void **state)
{
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	char desc[64];

	assert_int_equal(run_sh("exit 0", &o, &res), 0);
	assert_int_equal(res.exit_code, 0);
	sl_proc_describe(desc, sizeof(desc), &res);
	assert_string_equal(desc, "exit 0");
	assert_int_equal(run_sh("exit 3", &o, &res), 0);
	assert_int_equal(res.exit_code, 3);
	assert_int_equal(res.signaled, 0);
	assert_true(res.pid > 0);
	assert_int_equal(run_sh("kill -KILL $$", &o, &res), 0);
	assert_int_equal(res.signaled, SIGKILL);
	assert_int_equal(res.exit_code, 128 + SIGKILL);
	sl_proc_describe(desc, sizeof(desc), &res);
	assert_string_equal(desc, "killed by SIGKILL");
}

static void test_env_add_drop(void **state)
{
	const char *add[] = { "SL_T_A=one", "HOME=/nowhere", NULL };
	const char *drop[] = { "SL_T_GONE", NULL };
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf out = SL_BUF_INIT;

	setenv("SL_T_GONE", "secret", 1);
	o.env_add = add;
	o.env_drop = drop;
	o.out = &out;
	assert_int_equal(run_sh("echo \"$SL_T_A|$HOME|${SL_T_GONE-unset}\"", &o, &res), 0);
	assert_string_equal(sl_buf_cstr(&out), "one|/nowhere|unset\n");
	unsetenv("SL_T_GONE");
	sl_buf_release(&out);
}

static void test_env_clear(void **state)
{
	const char *add[] = { "PATH=/usr/bin:/bin", "ONLY=me", NULL };
	const char *argv[] = { "env", NULL };
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf out = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;

	o.argv = argv;
	o.clear_env = 1;
	o.env_add = add;
	o.out = &out;
	assert_int_equal(sl_proc_run(&o, &res, &err), 0);
	assert_string_equal(sl_buf_cstr(&out), "PATH=/usr/bin:/bin\nONLY=me\n");
	sl_buf_release(&out);
}

static void test_cwd(void **state)
{
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf out = SL_BUF_INIT;
	char want[512];

	o.cwd = tmpdir;
	o.out = &out;
	assert_int_equal(run_sh("pwd -P", &o, &res), 0);
	assert_non_null(realpath(tmpdir, want));
	strcat(want, "\n");
	assert_string_equal(sl_buf_cstr(&out), want);
	sl_buf_release(&out);
}

static void test_cwd_missing(void **state)
{
	const char *argv[] = { "true", NULL };
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_err err = SL_ERR_INIT;

	o.argv = argv;
	o.cwd = "/nonexistent/sluice-dir";
	assert_int_equal(sl_proc_run(&o, &res, &err), SL_ENOTFOUND);
	assert_non_null(strstr(err.msg, "cannot change to directory '/nonexistent/sluice-dir'"));
}

static void test_stdin_roundtrip(void **state)
{
	size_t n = 10u << 20;
	char *data = malloc(n);
	const char *argv[] = { "cat", NULL };
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf out;
	struct sl_err err = SL_ERR_INIT;

	for (size_t i = 0; i < n; i++)
		data[i] = (char)('a' + i % 23);
	sl_buf_init(&out, 16u << 20);
	o.argv = argv;
	o.stdin_data = data;
	o.stdin_len = n;
	o.out = &out;
	assert_int_equal(sl_proc_run(&o, &res, &err), 0);
	assert_int_equal(res.exit_code, 0);
	assert_int_equal(out.len, n);
	assert_memory_equal(out.ptr, data, n);
	assert_int_equal(res.out_truncated, 0);
	free(data);
	sl_buf_release(&out);
}

static void test_stdin_not_read(void **state)
{
	size_t n = 4u << 20;
	char *data = calloc(1, n);
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;

	o.stdin_data = data;
	o.stdin_len = n;
	/* The child never reads stdin: we get EPIPE, not SIGPIPE. */
	assert_int_equal(run_sh("exec 0<&-; exit 5", &o, &res), 0);
	assert_int_equal(res.exit_code, 5);
	free(data);
}

static void test_stdout_bounded(void **state)
{
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf out;

	sl_buf_init(&out, 100);
	o.out = &out;
	assert_int_equal(run_sh("head -c 100000 /dev/zero | tr '\\0' x", &o, &res), 0);
	assert_int_equal(res.exit_code, 0);
	assert_int_equal(out.len, 100);
	assert_int_equal(res.out_truncated, 1);
	assert_int_equal(out.ptr[99], 'x');
	sl_buf_release(&out);
}

static void test_stderr_capture(void **state)
{
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf out = SL_BUF_INIT, errout = SL_BUF_INIT;

	o.out = &out;
	o.errout = &errout;
	assert_int_equal(run_sh("echo to-out; echo to-err >&2", &o, &res), 0);
	assert_string_equal(sl_buf_cstr(&out), "to-out\n");
	assert_string_equal(sl_buf_cstr(&errout), "to-err\n");
	sl_buf_release(&out);
	sl_buf_release(&errout);
}

static void test_log_appends(void **state)
{
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf got = SL_BUF_INIT, errout = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	char log[512];

	tmp_path(log, sizeof(log), "append.log");
	o.log_path = log;
	o.errout = &errout;
	assert_int_equal(run_sh("echo one", &o, &res), 0);
	assert_int_equal(run_sh("echo two >&2", &o, &res), 0);
	assert_int_equal(sl_read_file(&got, log, 0, &err), 0);
	assert_string_equal(sl_buf_cstr(&got), "one\ntwo\n");
	assert_int_equal(errout.len, 0); /* stderr went to the log */
	sl_buf_release(&got);
}

static void test_log_bounded_flood(void **state)
{
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf got = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	const char *marker = "\n[sluice: log truncated at 65536 bytes]\n";
	char log[512];
	struct stat st;

	tmp_path(log, sizeof(log), "flood.log");
	o.log_path = log;
	o.log_max = 65536;
	assert_int_equal(run_sh("head -c 100000000 /dev/zero | tr '\\0' y; echo end", &o, &res), 0);
	assert_int_equal(res.exit_code, 0);
	assert_int_equal(res.log_truncated, 1);
	assert_int_equal(stat(log, &st), 0);
	assert_int_equal((size_t)st.st_size, 65536 + strlen(marker));
	assert_int_equal(sl_read_file(&got, log, 0, &err), 0);
	assert_string_equal(got.ptr + 65536, marker);
	assert_int_equal(got.ptr[65535], 'y');
	sl_buf_release(&got);
}

static pid_t read_pid(const char *path)
{
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	pid_t pid;

	assert_int_equal(sl_read_file(&b, path, 0, &err), 0);
	pid = (pid_t)atoi(sl_buf_cstr(&b));
	sl_buf_release(&b);
	assert_true(pid > 0);
	return pid;
}

static void test_timeout_kills_group(void **state)
{
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	char script[4096], pidfile[512], desc[64];
	pid_t grandchild;

	tmp_path(pidfile, sizeof(pidfile), "gc.pid");
	/* The grandchild ignores SIGTERM: only the group SIGKILL ends it. */
	snprintf(script, sizeof(script),
		 "sh -c 'trap \"\" TERM; echo $$ > %s.tmp; mv %s.tmp %s; exec sleep 1000' & "
		 "while [ ! -f %s ]; do sleep 0.01; done; echo ready; sleep 1000",
		 pidfile, pidfile, pidfile, pidfile);
	o.kill_grace_ms = 100;
	/*
	 * The timeout is to come once the grandchild is set up, which a loaded
	 * machine may take longer than 300 ms to do: then again, with twice the time.
	 */
	for (o.timeout_ms = 300;; o.timeout_ms *= 2) {
		assert_int_equal(run_sh(script, &o, &res), 0);
		if (access(pidfile, F_OK) == 0 || o.timeout_ms > 300 * 1000)
			break;
	}
	assert_int_equal(res.timed_out, 1);
	assert_int_equal(res.signaled, SIGTERM);
	sl_proc_describe(desc, sizeof(desc), &res);
	assert_non_null(strstr(desc, "timed out after"));
	grandchild = read_pid(pidfile);
	for (int i = 0; i < 30000 && !test_pid_gone(grandchild); i++)
		usleep(10000);
	assert_true(test_pid_gone(grandchild));
}

/* watch(): count the calls, stop once the file says "stop". */
struct watch_seen {
	char path[512];
	int calls;
};

static int watch_stop(void *arg, char *why, size_t n)
{
	struct watch_seen *w = arg;
	char buf[16] = "";
	FILE *f = fopen(w->path, "r");

	w->calls++;
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	if (strncmp(buf, "stop", 4))
		return 0;
	snprintf(why, n, "the file said stop after %d writes", w->calls);
	return 1;
}

/*
 * A child that writes the watched file twice (a write, then a rename into
 * place) and then waits forever is ended once it says stop, with the reason;
 * one whose writes never say stop runs to its end.
 */
static void test_watch_stops_child(void **state)
{
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct watch_seen w = { "", 0 };
	char script[4096], other[512], desc[256];

	tmp_path(w.path, sizeof(w.path), "usage.json");
	tmp_path(other, sizeof(other), "other.json");
	snprintf(script, sizeof(script),
		 "echo go > %s; echo x > %s; echo stop > %s.tmp; mv %s.tmp %s; exec sleep 1000",
		 w.path, other, w.path, w.path, w.path);
	o.watch_file = w.path;
	o.watch = watch_stop;
	o.watch_arg = &w;
	o.kill_grace_ms = 100;
	assert_int_equal(run_sh(script, &o, &res), 0);
	assert_int_equal(res.stopped, 1);
	assert_int_equal(res.timed_out, 0);
	assert_int_equal(res.signaled, SIGTERM);
	/* one look or two: events that come together are one look */
	assert_true(w.calls == 1 || w.calls == 2);
	sl_proc_describe(desc, sizeof(desc), &res);
	assert_non_null(strstr(desc, "stopped: the file said stop after "));

	w.calls = 0;
	unlink(w.path);
	snprintf(script, sizeof(script), "echo go > %s; echo more > %s; exit 3", w.path, w.path);
	assert_int_equal(run_sh(script, &o, &res), 0);
	assert_int_equal(res.stopped, 0);
	assert_int_equal(res.exit_code, 3);

	/* its last act: it ends by itself within the grace, and is not stopped */
	unlink(w.path);
	o.kill_grace_ms = 60000;
	snprintf(script, sizeof(script), "echo stop > %s; exit 0", w.path);
	assert_int_equal(run_sh(script, &o, &res), 0);
	assert_int_equal(res.stopped, 0);
	assert_int_equal(res.exit_code, 0);
}

/* A watched file in a folder that does not exist: the child runs, unwatched, and that is said. */
static void test_watch_missing_folder(void **state)
{
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_err err = SL_ERR_INIT;
	const char *argv[] = { "true", NULL };
	struct watch_seen w = { "/nonexistent-sluice/usage.json", 0 };

	o.argv = argv;
	o.watch_file = w.path;
	o.watch = watch_stop;
	o.watch_arg = &w;
	assert_int_equal(sl_proc_run(&o, &res, &err), 0);
	assert_int_equal(res.exit_code, 0);
	assert_non_null(strstr(res.watch_failed, "cannot watch '/nonexistent-sluice/usage.json'"));
}

static void test_grandchild_holds_pipe(void **state)
{
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf out = SL_BUF_INIT;
	char script[2048], pidfile[512];
	pid_t grandchild;

	tmp_path(pidfile, sizeof(pidfile), "bg.pid");
	/* The leader exits at once; its background child keeps stdout open. */
	snprintf(script, sizeof(script), "sleep 1000 & echo $! > %s; echo hi", pidfile);
	o.out = &out;
	assert_int_equal(run_sh(script, &o, &res), 0);
	assert_int_equal(res.exit_code, 0);
	assert_int_equal(res.timed_out, 0);
	assert_string_equal(sl_buf_cstr(&out), "hi\n");
	grandchild = read_pid(pidfile);
	for (int i = 0; i < 30000 && !test_pid_gone(grandchild); i++)
		usleep(10000);
	assert_true(test_pid_gone(grandchild));
	sl_buf_release(&out);
}

static void test_not_found(void **state)
{
	const char *argv[] = { "sluice-no-such-program", "x", NULL };
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_err err = SL_ERR_INIT;

	o.argv = argv;
	assert_int_equal(sl_proc_run(&o, &res, &err), SL_ENOTFOUND);
	assert_non_null(strstr(err.msg, "'sluice-no-such-program'"));
	assert_non_null(strstr(err.msg, "PATH"));
}

static void test_not_executable(void **state)
{
	char path[512], want[600];
	const char *argv[] = { path, NULL };
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_err err = SL_ERR_INIT;
	FILE *f;

	tmp_path(path, sizeof(path), "not-executable");
	assert_non_null(f = fopen(path, "w"));
	fputs("echo hi\n", f);
	fclose(f);
	assert_int_equal(chmod(path, 0644), 0);
	o.argv = argv;
	assert_true(sl_proc_run(&o, &res, &err) < 0);
	snprintf(want, sizeof(want), "cannot run '%s': Permission denied", path);
	assert_string_equal(err.msg, want);
}

static void test_script_without_shebang(void **state)
{
	char path[512];
	const char *argv[] = { path, "arg1", NULL };
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf out = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	FILE *f;

	tmp_path(path, sizeof(path), "noshebang");
	assert_non_null(f = fopen(path, "w"));
	fputs("echo \"ran with $1\"\n", f);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
	o.argv = argv;
	o.out = &out;
	assert_int_equal(sl_proc_run(&o, &res, &err), 0);
	assert_int_equal(res.exit_code, 0);
	assert_string_equal(sl_buf_cstr(&out), "ran with arg1\n");
	sl_buf_release(&out);
}

static void test_closes_stdout_early(void **state)
{
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf out = SL_BUF_INIT;

	o.out = &out;
	assert_int_equal(run_sh("echo first; exec >&- 2>&-; sleep 0.2; exit 4", &o, &res), 0);
	assert_int_equal(res.exit_code, 4);
	assert_string_equal(sl_buf_cstr(&out), "first\n");
	sl_buf_release(&out);
}

static void test_no_fd_leak(void **state)
{
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf out = SL_BUF_INIT;

	o.out = &out;
	/* Only 0, 1, 2 and ls's own directory fd (3) are open in the child. */
	assert_int_equal(run_sh("exec ls /proc/self/fd", &o, &res), 0);
	assert_string_equal(sl_buf_cstr(&out), "0\n1\n2\n3\n");
	sl_buf_release(&out);
}

/*
 * Under a low RLIMIT_NOFILE a child either runs or its failure is reported
 * (rc < 0, "Too many open files"): never a silent exit 127 with no message,
 * which the child's fd shuffle used to give when it could not move its
 * exec report above 0..2.
 */
static void test_low_nofile(void **state)
{
	const char *argv[] = { "/bin/true", NULL };
	struct rlimit old, low;
	int ran = 0, refused = 0;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	for (rlim_t n = 4; n <= 40; n++) {
		struct sl_proc_opts o = SL_PROC_OPTS_INIT;
		struct sl_proc_result res;
		struct sl_err err = SL_ERR_INIT;
		int rc;

		low = old;
		low.rlim_cur = n < old.rlim_max ? n : old.rlim_max;
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
		o.argv = argv;
		rc = sl_proc_run(&o, &res, &err);
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
		if (rc == 0) {
			assert_int_equal(res.exit_code, 0);
			ran++;
		} else {
			assert_true(strstr(err.msg, "Too many open files") != NULL);
			refused++;
		}
	}
	assert_true(ran > 0 && refused > 0);
}

static volatile sig_atomic_t ticks;

static void on_alarm(int sig)
{
	(void)sig;
	ticks++;
}

static void test_eintr(void **state)
{
	struct sigaction sa, old;
	struct itimerval every = { { 0, 500 }, { 0, 500 } }, off = { { 0, 0 }, { 0, 0 } };
	size_t n = 4u << 20;
	char *data = malloc(n);
	const char *argv[] = { "cat", NULL };
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf out;
	struct sl_err err = SL_ERR_INIT;

	/* A signal without SA_RESTART every 0.5 ms interrupts poll, read and write. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, &old);
	setitimer(ITIMER_REAL, &every, NULL);
	for (size_t i = 0; i < n; i++)
		data[i] = (char)(i * 7);
	sl_buf_init(&out, 8u << 20);
	o.argv = argv;
	o.stdin_data = data;
	o.stdin_len = n;
	o.out = &out;
	assert_int_equal(sl_proc_run(&o, &res, &err), 0);
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, &old, NULL);
	assert_true(ticks > 0);
	assert_int_equal(res.exit_code, 0);
	assert_int_equal(out.len, n);
	assert_memory_equal(out.ptr, data, n);
	free(data);
	sl_buf_release(&out);
}

static void test_child_signals_reset(void **state)
{
	const char *argv[] = { "grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status", NULL };
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf out = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	sigset_t usr1, oldmask;
	void (*oldpipe)(int) = signal(SIGPIPE, SIG_IGN);

	/* What the parent ignores or blocks must not leak into the child. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &oldmask);
	o.argv = argv;
	o.out = &out;
	assert_int_equal(sl_proc_run(&o, &res, &err), 0);
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	signal(SIGPIPE, oldpipe);
	assert_string_equal(sl_buf_cstr(&out), "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
	sl_buf_release(&out);
}

/* A git started the way sluice starts every git ignores what a builder planted. */
static void test_git_overrides_beat_repo_config(void **state)
{
	char repo[4096], cmd[8192], ceiling[4200];
	const char *cfg_args[] = { "config", "--get", "core.hooksPath", NULL };
	const char *ls_args[] = { "ls-remote", "origin", NULL };
	const char *env[8];
	const char **argv;
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_err err = SL_ERR_INIT;
	struct sl_buf out, errout;

	(void)state;
	tmp_path(repo, sizeof(repo), "planted");
	assert_true(snprintf(cmd, sizeof(cmd),
			     "git init -q '%s' && cd '%s' && git config core.hooksPath /tmp/evil && "
			     "git config protocol.file.allow always && git config protocol.allow always && "
			     "git remote add origin 'file://%s'",
			     repo, repo, repo) < (int)sizeof(cmd));
	assert_int_equal(system(cmd), 0);
	sl_git_ceiling(ceiling, sizeof(ceiling), repo);
	sl_git_env(env, 8, ceiling);
	o.cwd = repo;
	o.env_add = env;
	o.env_drop = sl_git_env_drop;
	o.timeout_ms = sl_git_timeout_ms();
	sl_buf_init(&out, 4096);
	sl_buf_init(&errout, 4096);
	o.out = &out;
	o.errout = &errout;
	assert_non_null(argv = sl_git_argv(cfg_args));
	assert_string_equal(argv[1], "--no-pager");
	o.argv = argv;
	assert_int_equal(sl_proc_run(&o, &res, &err), 0);
	assert_int_equal(res.exit_code, 0);
	assert_string_equal(sl_buf_cstr(&out), "/dev/null\n");
	free(argv);
	/* no transport, whatever protocol.*.allow the repository sets */
	assert_non_null(argv = sl_git_argv(ls_args));
	o.argv = argv;
	assert_int_equal(sl_proc_run(&o, &res, &err), 0);
	assert_int_not_equal(res.exit_code, 0);
	assert_non_null(strstr(sl_buf_cstr(&errout), "not allowed"));
	free(argv);
	sl_buf_release(&out);
	sl_buf_release(&errout);
}

/* ---- env_drop patterns, the one list of git variables, sl_git_run() */

static void test_env_drop_pattern(void **state)
{
	const char *drop[] = { "SL_T_KEY_*", NULL };
	const char *add[] = { "SL_T_KEY_9=mine", NULL };
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf out = SL_BUF_INIT;

	(void)state;
	setenv("SL_T_KEY_0", "a", 1);
	setenv("SL_T_KEY_12", "b", 1);
	setenv("SL_T_KEYS", "c", 1);
	o.env_drop = drop;
	o.out = &out;
	assert_int_equal(run_sh("echo \"${SL_T_KEY_0-unset}|${SL_T_KEY_12-unset}|$SL_T_KEYS\"", &o,
				&res), 0);
	assert_string_equal(sl_buf_cstr(&out), "unset|unset|c\n");
	/* as for a plain name, a dropped pattern drops an added entry too */
	sl_buf_reset(&out);
	o.env_add = add;
	assert_int_equal(run_sh("echo \"${SL_T_KEY_9-unset}\"", &o, &res), 0);
	assert_string_equal(sl_buf_cstr(&out), "unset\n");
	assert_true(sl_env_name_matches("GIT_CONFIG_KEY_0=core.x", "GIT_CONFIG_KEY_*"));
	assert_true(sl_env_name_matches("GIT_CONFIG_KEY_0=core.x", "GIT_CONFIG_KEY_0=y"));
	assert_false(sl_env_name_matches("GIT_CONFIG_KEY=x", "GIT_CONFIG_KEY_*"));
	assert_false(sl_env_name_matches("GIT_CONFIG_COUNTS=1", "GIT_CONFIG_COUNT"));
	unsetenv("SL_T_KEY_0");
	unsetenv("SL_T_KEY_12");
	unsetenv("SL_T_KEYS");
	sl_buf_release(&out);
}

static int list_has(const char *const *list, const char *name)
{
	for (; *list; list++)
		if (!strcmp(*list, name))
			return 1;
	return 0;
}

static void test_git_env_drop_list(void **state)
{
	const char *config[] = { "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
				 "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
				 "GIT_CONFIG_KEY_*", "GIT_CONFIG_VALUE_*", "GIT_DIR", "GIT_WORK_TREE",
				 "GIT_INDEX_FILE", "GIT_PAGER", "GIT_SSH_COMMAND", "GIT_QUARANTINE_PATH",
				 "GIT_SHALLOW_FILE", NULL };
	const char *keep[] = { "GIT_SSH_COMMAND", "GIT_CONFIG_GLOBAL", NULL };
	const char *add[] = { "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.hooksPath",
			      "GIT_DIR=/x", NULL };
	const char *out[64];
	size_t n, all = 0;

	(void)state;
	for (const char *const *c = config; *c; c++)
		assert_true(list_has(sl_git_env_drop, *c));
	while (sl_git_env_drop[all])
		all++;
	n = sl_git_env_drop_but(out, 64, NULL, NULL);
	assert_int_equal(n, all);
	n = sl_git_env_drop_but(out, 64, keep, add);
	assert_int_equal(n, all - 5);
	assert_null(out[n]);
	assert_false(list_has(out, "GIT_SSH_COMMAND"));
	assert_false(list_has(out, "GIT_CONFIG_GLOBAL"));
	assert_false(list_has(out, "GIT_CONFIG_COUNT"));
	assert_false(list_has(out, "GIT_CONFIG_KEY_*"));
	assert_false(list_has(out, "GIT_DIR"));
	assert_true(list_has(out, "GIT_CONFIG_VALUE_*"));
	assert_true(list_has(out, "GIT_CONFIG_PARAMETERS"));
	/* bounded */
	assert_int_equal(sl_git_env_drop_but(out, 3, NULL, NULL), 2);
	assert_null(out[2]);
}

static void test_git_ceiling(void **state)
{
	char out[64], longdir[5000];
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	struct sl_err err = SL_ERR_INIT;
	const char *args[] = { "status", NULL };

	(void)state;
	assert_int_equal(sl_git_ceiling(out, sizeof(out), "/r/.system/runs/R1/worktree"), 0);
	assert_string_equal(out, "GIT_CEILING_DIRECTORIES=/r/.system/runs/R1");
	assert_int_equal(sl_git_ceiling(out, sizeof(out), "/wt"), 0);
	assert_string_equal(out, "GIT_CEILING_DIRECTORIES=/");
	/* a cut path would name another folder: refused */
	assert_int_equal(sl_git_ceiling(out, 30, "/r/.system/runs/R1/worktree"), -1);
	assert_string_equal(out, "");
	memset(longdir, 'a', sizeof(longdir) - 1);
	longdir[0] = '/';
	longdir[sizeof(longdir) - 1] = '\0';
	longdir[4500] = '/'; /* its parent does not fit in the 4200 bytes */
	o.cwd = longdir;
	o.ceiling = 1;
	assert_int_equal(sl_git_run(&o, args, NULL, &err), SL_EINVALID);
	assert_non_null(strstr(err.msg, "too long"));
}

/* SLUICE_GIT = a fake git that evals the argument after "run". */
static void fake_git(char *path, size_t n)
{
	const char *script = "#!/bin/sh\nwhile test \"$1\" != run; do shift; done\neval \"$2\"\n";
	struct sl_err err = SL_ERR_INIT;

	tmp_path(path, n, "fake-git");
	assert_int_equal(sl_write_file(path, script, strlen(script), &err), 0);
	assert_int_equal(chmod(path, 0755), 0);
	setenv("SLUICE_GIT", path, 1);
}

static int git_run(const char *script, struct sl_git_opts *o, struct sl_git_result *res,
		   struct sl_err *err)
{
	const char *args[] = { "run", script, NULL };

	if (!o->cwd)
		o->cwd = tmpdir;
	sl_err_clear(err);
	return sl_git_run(o, args, res, err);
}

static void test_git_run_exit_codes(void **state)
{
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	struct sl_git_result res;
	struct sl_err err = SL_ERR_INIT;
	char prog[512], want[1024];

	(void)state;
	fake_git(prog, sizeof(prog));
	assert_int_equal(git_run("exit 0", &o, &res, &err), 0);
	assert_int_equal(res.exit_code, 0);
	/* 0..ok_max succeed, with the code in res */
	o.ok_max = 1;
	assert_int_equal(git_run("exit 1", &o, &res, &err), 0);
	assert_int_equal(res.exit_code, 1);
	/* above: the last line of stderr in the message */
	assert_int_equal(git_run("echo hint: one >&2; echo 'fatal: two' >&2; exit 2", &o, &res,
				 &err), SL_ERROR);
	assert_int_equal(res.exit_code, 2);
	assert_string_equal(res.errtail, "fatal: two");
	snprintf(want, sizeof(want), "'git run' in '%s' failed (exit 2): fatal: two", tmpdir);
	assert_string_equal(err.msg, want);
	assert_int_equal(git_run("exit 5", &o, &res, &err), SL_ERROR);
	assert_non_null(strstr(err.msg, "failed (exit 5): no message"));
	/* the caller's own code and words */
	o.fail_code = SL_EINVALID;
	o.what = "git diff a b";
	assert_int_equal(git_run("exit 128", &o, &res, &err), SL_EINVALID);
	assert_non_null(strstr(err.msg, "'git diff a b' in '"));
	/* killed is never the caller's code: it may be load */
	assert_int_equal(git_run("kill -KILL $$", &o, &res, &err), SL_ERROR);
	assert_non_null(strstr(err.msg, "killed by SIGKILL"));
	/* a lock file in the way: SL_ELOCKED, try again later */
	assert_int_equal(git_run("echo \"fatal: Unable to create '/r/.git/index.lock': File "
				 "exists.\" >&2; exit 128", &o, &res, &err), SL_ELOCKED);
	assert_non_null(strstr(err.msg, "a git lock file exists"));
	/* caller_checks: only res tells */
	o.caller_checks = 1;
	assert_int_equal(git_run("exit 7", &o, &res, &err), 0);
	assert_int_equal(res.exit_code, 7);
	assert_string_equal(res.how, "exit 7");
	/* not found */
	setenv("SLUICE_GIT", "/nonexistent/git", 1);
	assert_int_equal(git_run("exit 0", &o, &res, &err), SL_ENOTFOUND);
	unsetenv("SLUICE_GIT");
}

static void test_git_run_output(void **state)
{
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	struct sl_git_result res;
	struct sl_err err = SL_ERR_INIT;
	struct sl_buf out;
	char prog[512];

	(void)state;
	fake_git(prog, sizeof(prog));
	sl_buf_init(&out, 8);
	o.out = &out;
	assert_int_equal(git_run("printf 1234", &o, &res, &err), 0);
	assert_string_equal(sl_buf_cstr(&out), "1234");
	sl_buf_reset(&out);
	/* past the buffer's max: SL_ETOOBIG */
	assert_int_equal(git_run("printf 0123456789abcdef", &o, &res, &err), SL_ETOOBIG);
	assert_non_null(strstr(err.msg, "output of 'git run' in '"));
	/* or cut, with the whole size in res */
	sl_buf_reset(&out);
	o.out_cut_ok = 1;
	assert_int_equal(git_run("printf 0123456789abcdef", &o, &res, &err), 0);
	assert_int_equal(out.len, 8);
	assert_int_equal(res.out_bytes, 16);
	/* stdin */
	sl_buf_reset(&out);
	o.stdin_data = "in";
	o.stdin_len = 2;
	assert_int_equal(git_run("cat", &o, &res, &err), 0);
	assert_string_equal(sl_buf_cstr(&out), "in");
	sl_buf_release(&out);
	unsetenv("SLUICE_GIT");
}

#define ENV_OF_GIT "env | grep -E '^(GIT_CONFIG|GIT_DIR|GIT_CEIL|GIT_ALLOW|PAGER)' | sort"

static void test_git_run_env(void **state)
{
	const char *extra[] = { "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=k", "GIT_DIR=/own", NULL };
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	struct sl_git_result res;
	struct sl_err err = SL_ERR_INIT;
	struct sl_buf out;
	char prog[512], want[600], wt[600];

	(void)state;
	fake_git(prog, sizeof(prog));
	setenv("GIT_CONFIG_PARAMETERS", "'core.hookspath'='/evil'", 1);
	setenv("GIT_CONFIG_COUNT", "2", 1);
	setenv("GIT_CONFIG_KEY_0", "core.hooksPath", 1);
	setenv("GIT_CONFIG_VALUE_0", "/evil", 1);
	setenv("GIT_CONFIG_KEY_1", "alias.x", 1);
	setenv("GIT_CONFIG_GLOBAL", "/evil.cfg", 1);
	setenv("GIT_DIR", "/elsewhere", 1);
	setenv("PAGER", "evil", 1);
	sl_buf_init(&out, 1 << 16);
	o.out = &out;
	assert_int_equal(git_run(ENV_OF_GIT, &o, &res, &err), 0);
	assert_string_equal(sl_buf_cstr(&out), "GIT_ALLOW_PROTOCOL=none\n");
	/* the caller's own entries stay; so do the ones it did not set */
	sl_buf_reset(&out);
	o.env = extra;
	o.ceiling = 1;
	tmp_path(wt, sizeof(wt), "wt");
	assert_int_equal(mkdir(wt, 0755), 0);
	o.cwd = wt;
	assert_int_equal(git_run(ENV_OF_GIT, &o, &res, &err), 0);
	snprintf(want, sizeof(want), "GIT_ALLOW_PROTOCOL=none\nGIT_CEILING_DIRECTORIES=%s\n"
		 "GIT_CONFIG_COUNT=1\nGIT_CONFIG_KEY_0=k\nGIT_CONFIG_KEY_1=alias.x\nGIT_DIR=/own\n",
		 tmpdir);
	assert_string_equal(sl_buf_cstr(&out), want);
	unsetenv("GIT_CONFIG_PARAMETERS");
	unsetenv("GIT_CONFIG_COUNT");
	unsetenv("GIT_CONFIG_KEY_0");
	unsetenv("GIT_CONFIG_VALUE_0");
	unsetenv("GIT_CONFIG_KEY_1");
	unsetenv("GIT_CONFIG_GLOBAL");
	unsetenv("GIT_DIR");
	unsetenv("PAGER");
	unsetenv("SLUICE_GIT");
	sl_buf_release(&out);
}

static void test_git_run_timeout(void **state)
{
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	struct sl_git_result res;
	struct sl_err err = SL_ERR_INIT;
	char prog[512];

	(void)state;
	fake_git(prog, sizeof(prog));
	setenv("SLUICE_GIT_TIMEOUT_MS", "300", 1);
	assert_int_equal(git_run("sleep 30", &o, &res, &err), SL_ERROR);
	assert_int_equal(res.timed_out, 1);
	assert_non_null(strstr(err.msg, "'git run' in '"));
	assert_non_null(strstr(err.msg, "timed out after"));
	assert_non_null(strstr(err.msg, "did not end"));
	o.caller_checks = 1;
	assert_int_equal(git_run("sleep 30", &o, &res, &err), 0);
	assert_int_equal(res.timed_out, 1);
	unsetenv("SLUICE_GIT_TIMEOUT_MS");
	unsetenv("SLUICE_GIT");
}

/* The real git: configuration from the environment does not reach it. */
static void test_git_run_ignores_env_config(void **state)
{
	const char *get[] = { "config", "--get-regexp", "^sltest\\.", NULL };
	char repo[4096], cmd[8192], cfg[4200];
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	struct sl_git_result res;
	struct sl_err err = SL_ERR_INIT;
	struct sl_buf out;

	(void)state;
	tmp_path(repo, sizeof(repo), "envcfg");
	tmp_path(cfg, sizeof(cfg), "evil.cfg");
	assert_true(snprintf(cmd, sizeof(cmd), "git init -q '%s' && "
			     "printf '[sltest]\\n\\tglobal = 1\\n' >'%s'", repo, cfg) < (int)sizeof(cmd));
	assert_int_equal(system(cmd), 0);
	setenv("GIT_CONFIG_COUNT", "1", 1);
	setenv("GIT_CONFIG_KEY_0", "sltest.count", 1);
	setenv("GIT_CONFIG_VALUE_0", "1", 1);
	setenv("GIT_CONFIG_PARAMETERS", "'sltest.parameters'='1'", 1);
	setenv("GIT_CONFIG_GLOBAL", cfg, 1);
	setenv("GIT_CONFIG_SYSTEM", cfg, 1);
	/* the same git from a shell sees all three */
	snprintf(cmd, sizeof(cmd), "test $(git -C '%s' config --get-regexp '^sltest\\.' | "
		 "sort -u | wc -l) -ge 3", repo);
	assert_int_equal(system(cmd), 0);
	sl_buf_init(&out, 4096);
	o.cwd = repo;
	o.ceiling = 1;
	o.out = &out;
	o.ok_max = 1;
	assert_int_equal(sl_git_run(&o, get, &res, &err), 0);
	assert_int_equal(res.exit_code, 1); /* none found */
	assert_string_equal(sl_buf_cstr(&out), "");
	unsetenv("GIT_CONFIG_COUNT");
	unsetenv("GIT_CONFIG_KEY_0");
	unsetenv("GIT_CONFIG_VALUE_0");
	unsetenv("GIT_CONFIG_PARAMETERS");
	unsetenv("GIT_CONFIG_GLOBAL");
	unsetenv("GIT_CONFIG_SYSTEM");
	sl_buf_release(&out);
}

#define SECRET_VAR "SL_PROC_TEST_SECRET"
#define SECRET_VAL "s3cret-value-for-the-proc-test"

static int environ_has(const char *path, const char *needle)
{
	static char buf[1 << 20];
	size_t len = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	while (len < sizeof(buf) && (r = read(fd, buf + len, sizeof(buf) - len)) > 0)
		len += (size_t)r;
	close(fd);
	return memmem(buf, len, needle, strlen(needle)) != NULL;
}

/* main() put SECRET_VAR in our original environment block (by re-exec). */
static void test_env_take_scrubs_block(void **state)
{
	const char *argv[] = { "sh", "-c", "cat /proc/$PPID/environ; env", NULL };
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_err err = SL_ERR_INIT;
	struct sl_buf out;
	char *v;

	(void)state;
	assert_true(environ_has("/proc/self/environ", SECRET_VAL));
	v = sl_env_take(SECRET_VAR);
	assert_non_null(v);
	assert_string_equal(v, SECRET_VAL);
	assert_null(getenv(SECRET_VAR));
	assert_false(environ_has("/proc/self/environ", SECRET_VAL));
	/* a child sees it neither in its environment nor in ours */
	sl_buf_init(&out, 1 << 20);
	o.argv = argv;
	o.out = &out;
	assert_int_equal(sl_proc_run(&o, &res, &err), 0);
	assert_true(out.len > 0);
	assert_null(memmem(out.ptr, out.len, SECRET_VAL, strlen(SECRET_VAL)));
	sl_buf_release(&out);
	sl_secret_free(v);
	assert_null(sl_env_take(SECRET_VAR));
}

static void test_secret_pipe(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char *got = NULL, big[70000];
	int fd;

	(void)state;
	assert_int_equal(sl_secret_pipe("NAME=value", 10, &fd, &err), 0);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(sl_secret_read(fd, &got, &err), 0);
	assert_string_equal(got, "NAME=value");
	assert_int_equal(fcntl(fd, F_GETFD), -1); /* closed */
	sl_secret_free(got);
	memset(big, 'x', sizeof(big));
	assert_int_equal(sl_secret_pipe(big, sizeof(big), &fd, &err), SL_EINVALID);
	assert_int_equal(fd, -1);
}

int main(void)
{
	if (!getenv(SECRET_VAR)) { /* into the block the kernel shows, as from a shell */
		char *const argv[] = { (char *)"test_core_proc", NULL };

		setenv(SECRET_VAR, SECRET_VAL, 1);
		execv("/proc/self/exe", argv);
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_codes),
		cmocka_unit_test(test_watch_stops_child),
		cmocka_unit_test(test_watch_missing_folder),
		cmocka_unit_test(test_env_add_drop),
		cmocka_unit_test(test_env_clear),
		cmocka_unit_test(test_cwd),
		cmocka_unit_test(test_cwd_missing),
		cmocka_unit_test(test_stdin_roundtrip),
		cmocka_unit_test(test_stdin_not_read),
		cmocka_unit_test(test_stdout_bounded),
		cmocka_unit_test(test_stderr_capture),
		cmocka_unit_test(test_log_appends),
		cmocka_unit_test(test_log_bounded_flood),
		cmocka_unit_test(test_timeout_kills_group),
		cmocka_unit_test(test_grandchild_holds_pipe),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_not_executable),
		cmocka_unit_test(test_script_without_shebang),
		cmocka_unit_test(test_closes_stdout_early),
		cmocka_unit_test(test_no_fd_leak),
		cmocka_unit_test(test_low_nofile),
		cmocka_unit_test(test_eintr),
		cmocka_unit_test(test_child_signals_reset),
		cmocka_unit_test(test_env_take_scrubs_block),
		cmocka_unit_test(test_secret_pipe),
		cmocka_unit_test(test_git_overrides_beat_repo_config),
		cmocka_unit_test(test_env_drop_pattern),
		cmocka_unit_test(test_git_env_drop_list),
		cmocka_unit_test(test_git_ceiling),
		cmocka_unit_test(test_git_run_exit_codes),
		cmocka_unit_test(test_git_run_output),
		cmocka_unit_test(test_git_run_env),
		cmocka_unit_test(test_git_run_timeout),
		cmocka_unit_test(test_git_run_ignores_env_config),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
