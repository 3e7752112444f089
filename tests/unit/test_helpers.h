#ifndef SL_TEST_HELPERS_H
#define SL_TEST_HELPERS_H
/*
 * Helpers shared by the unit tests (test-only, everything static): shell
 * commands with printf formatting, temporary directories, git identities,
 * reading files, and (when store/store.h is included first) a store in a
 * temporary directory. Include after <cmocka.h>.
 *
 * Two ways to run a shell command:
 * - sh(), sh_line(), sh_all(): through system()/popen() in our directory,
 *   with the output left on the terminal; sh() fails the test on a non-zero exit.
 * - sh_in(), sh_line_in(), test_sh_run(): through sl_proc_run() in a given
 *   directory, returning the exit code for the test to check.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/proc.h"

/* Run a command (printf format); fails the test unless it exits 0. */
static inline void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		fail_msg("command failed: %s", cmd);
}

/* The first line of a command's output, trailing newline removed (static buffer). */
static inline char *sh_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline char *sh_line(const char *fmt, ...)
{
	static char line[4096];
	char cmd[8192];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	line[0] = '\0';
	if ((f = popen(cmd, "r"))) {
		if (!fgets(line, sizeof(line), f))
			line[0] = '\0';
		pclose(f);
	}
	line[strcspn(line, "\n")] = '\0';
	return line;
}

/* The whole output of a command, newlines kept but the last ones (static buffer). */
static inline char *sh_all(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline char *sh_all(const char *fmt, ...)
{
	static char buf[16384];
	char cmd[8192];
	size_t n = 0;
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if ((f = popen(cmd, "r"))) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		pclose(f);
	}
	while (n && buf[n - 1] == '\n')
		n--;
	buf[n] = '\0';
	return buf;
}

/*
 * Run `sh -c script` in cwd (NULL: ours) with env_add (may be NULL) added to
 * the environment; its exit code. stdout goes into out, stderr into errout
 * (either may be NULL). Fails the test if the shell cannot be run.
 */
static inline int test_sh_run(const char *cwd, const char *script, const char *const *env_add,
			      struct sl_buf *out, struct sl_buf *errout)
{
	const char *argv[] = { "sh", "-c", script, NULL };
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_proc_result r;
	struct sl_err err = SL_ERR_INIT;

	o.argv = argv;
	o.env_add = env_add;
	o.cwd = cwd;
	o.out = out;
	o.errout = errout;
	if (sl_proc_run(&o, &r, &err) != 0)
		fail_msg("cannot run '%s': %s", script, err.msg);
	return r.exit_code;
}

/* Run a script (printf format) under `set -e` in dir; its exit code. Output shown on failure. */
static inline int sh_in(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int sh_in(const char *dir, const char *fmt, ...)
{
	char script[8192];
	struct sl_buf out = SL_BUF_INIT;
	va_list ap;
	int n = snprintf(script, sizeof(script), "set -e; cd '%s'; ", dir);
	int code;

	va_start(ap, fmt);
	vsnprintf(script + n, sizeof(script) - (size_t)n, fmt, ap);
	va_end(ap);
	code = test_sh_run(NULL, script, NULL, &out, &out);
	if (code)
		print_message("script failed (%d): %s\n%s\n", code, script, sl_buf_cstr(&out));
	sl_buf_release(&out);
	return code;
}

/* The first line of a script's stdout, run in dir (static buffer; script is not a format). */
static inline const char *sh_line_in(const char *dir, const char *script)
{
	static char line[4096];
	struct sl_buf out = SL_BUF_INIT;

	test_sh_run(dir, script, NULL, &out, NULL);
	snprintf(line, sizeof(line), "%s", sl_buf_cstr(&out));
	line[strcspn(line, "\n")] = '\0';
	sl_buf_release(&out);
	return line;
}

/* A clean git configuration (no system file) and the given identity for commits. */
static inline void test_git_env(const char *name, const char *email)
{
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_AUTHOR_NAME", name, 1);
	setenv("GIT_AUTHOR_EMAIL", email, 1);
	setenv("GIT_COMMITTER_NAME", name, 1);
	setenv("GIT_COMMITTER_EMAIL", email, 1);
}

/* mkdtemp() from the template tpl into tmp[size], and HOME set to it: 0, or -1. */
static inline int test_home_tmpdir(char *tmp, size_t size, const char *tpl)
{
	snprintf(tmp, size, "%s", tpl);
	if (!mkdtemp(tmp))
		return -1;
	setenv("HOME", tmp, 1);
	return 0;
}

#ifdef INCLUDE_git_git_h__
/* cmocka group setup and teardown for tests that use libgit2 and commit as Test. */
static inline int test_git_group_setup(void **state)
{
	test_git_env("Test", "test@example.com");
	git_libgit2_init();
	return 0;
}

static inline int test_git_group_teardown(void **state)
{
	git_libgit2_shutdown();
	return 0;
}
#endif

/*
 * Make a directory from the mkdtemp() template tpl, its real path into
 * tmp[PATH_MAX] and <tmp>/repo into repo[repo_size]; HOME is set to it and
 * git gets identity T <t@example.com>. 0, or -1 when it cannot be made.
 */
static inline int test_git_tmpdir(char *tmp, char *repo, size_t repo_size, const char *tpl)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", tpl);
	if (!mkdtemp(dir) || !realpath(dir, tmp))
		return -1;
	snprintf(repo, repo_size, "%s/repo", tmp);
	setenv("HOME", tmp, 1);
	test_git_env("T", "t@example.com");
	return 0;
}

/* A file's whole content, or NULL if it cannot be read; the caller frees it. */
static inline char *test_read_file(const char *path)
{
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;

	if (sl_read_file(&b, path, 0, &err) < 0)
		return NULL;
	return b.ptr ? sl_buf_detach(&b) : strdup("");
}

/* The file dir/name's whole content, or NULL if it cannot be read; the caller frees it. */
static inline char *test_read_in(const char *dir, const char *name)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return test_read_file(path);
}

/* 1 when pid no longer runs (gone, or a zombie waiting for init). */
static inline int test_pid_gone(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int gone;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 1;
	/* A killed orphan may linger as a zombie until init reaps it. */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return 1;
	gone = fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[2] == 'Z';
	fclose(f);
	return gone;
}

#ifdef SL_STORE_H
/* A store in a temporary directory: the cmocka state of the store tests. */
struct test_store {
	char dir[64];
	struct store *st;
};

/* Make the directory from the mkdtemp() template tpl and open <dir>/sluice.db in it. */
static inline int test_store_setup(void **state, const char *tpl)
{
	struct test_store *f = calloc(1, sizeof(*f));
	struct sl_err err = SL_ERR_INIT;
	char *path;

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s", tpl);
	if (!mkdtemp(f->dir))
		return -1;
	path = sl_path_join(f->dir, "sluice.db");
	if (store_open(&f->st, path, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	free(path);
	*state = f;
	return 0;
}

static inline int test_store_teardown(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;

	store_free(f->st);
	sl_rm_rf(f->dir, &err);
	free(f);
	return 0;
}

/* The first column of the first row of sql as an integer, or -1. */
static inline long long query_int(struct store *st, const char *sql)
{
	sqlite3_stmt *s = NULL;
	long long v = -1;

	if (sqlite3_prepare_v2(store_db(st), sql, -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}
#endif

#ifdef SL_RUNNER_H
#include "system/system.h" /* system_init(): `sluice init` */
/*
 * A sluice repository for the runner tests (when runner/runner.h is included
 * first): a git repository with one commit on main in a temporary
 * directory, `sluice init` done (system_init), a builder that writes the
 * file f-<work order id>, and `extra` appended to .system/config.yaml (a
 * reviewer, ...). Then runner_ctx_open() on it into t->ctx.
 */
struct test_sluice {
	char tmp[PATH_MAX];
	char repo[PATH_MAX + 16];
	struct sl_ctx ctx;
};

static inline int test_sluice_setup(struct test_sluice *t, const char *tpl, const char *extra)
{
	struct system_init_opts o = SYSTEM_INIT_OPTS_INIT;
	struct system_init_result res = { 0, NULL };
	struct sl_repo r = SL_REPO_INIT;
	struct sl_err err = SL_ERR_INIT;
	struct sl_ctx init = SL_CTX_INIT;
	char cfg[PATH_MAX + 64];
	FILE *f;
	int rc;

	t->ctx = init;
	if (test_git_tmpdir(t->tmp, t->repo, sizeof(t->repo), tpl))
		return -1;
	sh("git init -q -b main '%s' && cd '%s' && echo readme >README && git add -A && "
	   "git commit -qm base", t->repo, t->repo);
	if (sl_repo_find(&r, t->repo, &err) != 0)
		return -1;
	rc = system_init(&r, &o, &res, &err);
	system_init_result_release(&res);
	sl_repo_release(&r);
	snprintf(cfg, sizeof(cfg), "%s/.system/config.yaml", t->repo);
	if (rc || !(f = fopen(cfg, "a")))
		return -1;
	fprintf(f, "builder:\n  command: [sh, -c, 'echo x >\"f-$SLUICE_WORK_ORDER_ID\"']\n%s",
		extra ? extra : "");
	fclose(f);
	if (runner_ctx_open(&t->ctx, t->repo, &err) != 0) {
		print_message("runner_ctx_open: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static inline void test_sluice_teardown(struct test_sluice *t)
{
	runner_ctx_release(&t->ctx);
	sh("chmod -R u+w '%s'; rm -rf '%s'", t->tmp, t->tmp);
}

/* Config lines for a command reviewer that approves everything it is shown. */
#define TEST_APPROVE_REVIEWER                                                                      \
	"reviewer:\n  mode: command\n  command: [sh, -c, 'cat >/dev/null; echo "                 \
	"\"{\\\"verdict\\\": \\\"approve\\\", \\\"reviewer\\\": \\\"approve-bot\\\"}\"']\n"

/* Write the work order <repo>/work_orders/<id>.md (extra: front-matter lines or ""). */
static inline void test_sluice_wo(const struct test_sluice *t, const char *id, const char *extra)
{
	sh("mkdir -p '%s/work_orders' && printf -- '---\\nid: %s\\ntitle: Work order %s\\n%s---\\n"
	   "Do the work of %s.\\n' >'%s/work_orders/%s.md'",
	   t->repo, id, id, extra, id, t->repo, id);
}

/*
 * A tick's workers are `/proc/self/exe -C ROOT advance-run RUN`: the test
 * binary itself. Its main() calls this first; when argv is such a worker's,
 * it does what `sluice advance-run` does (cli/cmd_advance_run.c, without
 * the token pipe: the tests configure no token) and returns the exit code;
 * -1 when there are no arguments (run the tests). Any other command line
 * is refused (2), so that a worker never runs the tests itself.
 */
static inline int test_runner_worker(int argc, char **argv)
{
	struct sl_ctx ctx = SL_CTX_INIT;
	struct sl_err err = SL_ERR_INIT;
	int rc;

	if (argc < 2)
		return -1;
	/* never the suite again in a child: a tick would start it over and over */
	if (argc != 5 || strcmp(argv[1], "-C") || strcmp(argv[3], "advance-run")) {
		fprintf(stderr, "worker: not an advance-run command line\n");
		return 2;
	}
	git_libgit2_init();
	if ((rc = runner_ctx_open(&ctx, argv[2], &err)) == 0)
		rc = runner_advance(&ctx, argv[4], RUNNER_STAGE_ANY, &err);
	if (rc && rc != SL_ELOCKED)
		fprintf(stderr, "worker: run %s: %s\n", argv[4], err.msg);
	runner_ctx_release(&ctx);
	git_libgit2_shutdown();
	return rc && rc != SL_ELOCKED ? 1 : 0;
}

/* One tick with max_runs and only_wo; fails the test on an error. */
static inline struct runner_tick_result test_sluice_tick(struct test_sluice *t, int max_runs,
							 const char *only_wo)
{
	struct runner_tick_opts o = RUNNER_TICK_OPTS_INIT;
	struct runner_tick_result res;
	struct sl_err err = SL_ERR_INIT;

	o.max_runs = max_runs;
	o.only_wo = only_wo;
	if (runner_tick(&t->ctx, &o, &res, &err) != 0)
		fail_msg("runner_tick: %s", err.msg);
	return res;
}

/* The newest run of a work order, into id[64]; fails the test when there is none. */
static inline void test_sluice_run_of(struct test_sluice *t, const char *wo, char id[64])
{
	struct store_run *runs = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0;

	if (store_runs_list(t->ctx.st, RUN_STATES_ALL, wo, &runs, &n, &err) != 0 || !n)
		fail_msg("no run of %s", wo);
	snprintf(id, 64, "%s", runs[0].id);
	store_runs_free(runs, n);
}

/* A run's state now. */
static inline enum run_state test_sluice_state(struct test_sluice *t, const char *run)
{
	struct store_run r;
	struct sl_err err = SL_ERR_INIT;
	enum run_state s;

	memset(&r, 0, sizeof(r));
	if (store_run_get(t->ctx.st, run, &r, &err) != 0)
		fail_msg("store_run_get %s: %s", run, err.msg);
	s = r.state;
	store_run_release(&r);
	return s;
}

/* How many events a run has (run NULL: all runs). */
static inline size_t test_sluice_events(struct test_sluice *t, const char *run)
{
	struct store_event *ev = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0;

	if (store_events_list(t->ctx.st, run, 0, &ev, &n, &err) != 0)
		fail_msg("store_events_list: %s", err.msg);
	store_events_free(ev, n);
	return n;
}
/*
 * Another process holding an flock on `path` (made if missing), as a
 * sluice working on a run holds its run lock: a forked child that takes
 * the lock, says so through a pipe and waits to be killed. Its pid; end it
 * with test_lock_holder_end(); it is killed too when the test process
 * ends (a failed assertion skips test_lock_holder_end). The child touches
 * nothing of the parent's (no SQLite, no libgit2) and leaves with _exit.
 */
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

static inline pid_t test_lock_holder(const char *path)
{
	int p[2], fd;
	char c = 0;
	pid_t pid = -1;

	if (pipe(p) < 0 || (pid = fork()) < 0) {
		fail_msg("cannot fork a lock holder");
		return -1;
	}
	if (pid == 0) {
		/* never outlive the test, and never keep its output pipes open */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(1);
		if ((fd = open("/dev/null", O_RDWR)) >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		close(p[0]);
		if ((fd = open(path, O_RDWR | O_CREAT, 0666)) < 0 || flock(fd, LOCK_EX) < 0)
			_exit(1);
		if (write(p[1], "l", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1 || c != 'l')
		fail_msg("the lock holder could not lock '%s'", path);
	close(p[0]);
	return pid;
}

static inline void test_lock_holder_end(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}
#endif

#endif
