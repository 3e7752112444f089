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

#endif
