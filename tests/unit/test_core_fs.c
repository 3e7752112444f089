/* core/fs: below the guarded .system, nothing is written, made or removed through a link. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fs.h"

static char root[] = "/tmp/sluice-test-fs.XXXXXX";
static char sys[4200], outside[4200], p[4400];

static const char *at(const char *rel)
{
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	return p;
}

static int is_empty(const char *dir)
{
	char cmd[4400];

	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s')\"", dir);
	return system(cmd) == 0;
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(root))
		return -1;
	snprintf(sys, sizeof(sys), "%s/.system", root);
	snprintf(outside, sizeof(outside), "%s/outside", root);
	mkdir(sys, 0777);
	mkdir(outside, 0777);
	mkdir(at(".system/runs"), 0777);
	/* the run folder R is a link to a folder outside */
	if (symlink(outside, at(".system/runs/R")) < 0)
		return -1;
	return sl_fs_guard(sys);
}

static int teardown(void **state)
{
	char cmd[4400];

	(void)state;
	sl_fs_guard(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static void test_writes_refused(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	int fd = -1;

	(void)state;
	assert_int_equal(sl_write_file_atomic(at(".system/runs/R/gates.json"), "x", 1, &err),
			 SL_EINVALID);
	assert_non_null(strstr(err.msg, "symbolic link"));
	sl_err_clear(&err);
	assert_int_equal(sl_write_file(at(".system/runs/R/a"), "x", 1, &err), SL_EINVALID);
	sl_err_clear(&err);
	assert_int_equal(sl_mkdir_p(at(".system/runs/R/attempts/1"), &err), SL_EINVALID);
	sl_err_clear(&err);
	assert_int_equal(sl_open_file(at(".system/runs/R/builder.log"),
				      O_WRONLY | O_APPEND | O_CREAT, 0644, &fd, &err),
			 SL_EINVALID);
	assert_int_equal(fd, -1);
	assert_true(is_empty(outside));
}

static void test_remove_refused(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char keep[4400];

	(void)state;
	snprintf(keep, sizeof(keep), "%s/worktree", outside);
	mkdir(keep, 0777);
	assert_int_equal(sl_rm_rf(at(".system/runs/R/worktree"), &err), SL_EINVALID);
	assert_int_equal(access(keep, F_OK), 0);
	rmdir(keep);
}

static void test_link_at_the_name_is_replaced(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char target[4400];
	struct stat st;

	(void)state;
	mkdir(at(".system/runs/S"), 0777);
	snprintf(target, sizeof(target), "%s/stolen.json", outside);
	assert_int_equal(symlink(target, at(".system/runs/S/gates.json")), 0);
	assert_int_equal(sl_write_file_atomic(at(".system/runs/S/gates.json"), "{}\n", 3, &err), 0);
	assert_int_equal(lstat(at(".system/runs/S/gates.json"), &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_true(is_empty(outside));
	/* real folders are made and written as before */
	assert_int_equal(sl_mkdir_p(at(".system/runs/S/attempts/1"), &err), 0);
	assert_int_equal(sl_write_file(at(".system/runs/S/attempts/1/p.md"), "x", 1, &err), 0);
	assert_int_equal(sl_rm_rf(at(".system/runs/S"), &err), 0);
	assert_int_equal(access(at(".system/runs/S"), F_OK), -1);
}

static void test_outside_the_guard_unchanged(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char via[4400];

	(void)state;
	/* a user's own link outside .system is theirs to use (sluice report --html FILE) */
	snprintf(via, sizeof(via), "%s/docs", root);
	assert_int_equal(symlink(outside, via), 0);
	snprintf(via, sizeof(via), "%s/docs/report.html", root);
	assert_int_equal(sl_write_file_atomic(via, "x", 1, &err), 0);
	assert_false(is_empty(outside));
	unlink(via);
}

static void test_unlink_and_rename_refused(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char owner[4400], tmp[4400], from[4400];
	FILE *f;

	(void)state;
	/* a file outside, reached through the linked run folder R: neither removed nor replaced */
	snprintf(owner, sizeof(owner), "%s/child.owner", outside);
	snprintf(tmp, sizeof(tmp), "%s/diff.patch.tmp", outside);
	assert_non_null(f = fopen(owner, "w"));
	fclose(f);
	assert_non_null(f = fopen(tmp, "w"));
	fclose(f);
	assert_int_equal(sl_unlink(at(".system/runs/R/child.owner"), &err), SL_EINVALID);
	sl_err_clear(&err);
	assert_int_equal(access(owner, F_OK), 0);
	snprintf(from, sizeof(from), "%s", at(".system/runs/R/diff.patch.tmp"));
	assert_int_equal(sl_rename(from, at(".system/runs/R/diff.patch"), &err), SL_EINVALID);
	sl_err_clear(&err);
	assert_int_equal(access(tmp, F_OK), 0);
	unlink(owner);
	unlink(tmp);
	/* in a real folder: done; a name already gone is no error */
	mkdir(at(".system/runs/T"), 0777);
	assert_int_equal(sl_write_file(at(".system/runs/T/a.tmp"), "x", 1, &err), 0);
	snprintf(from, sizeof(from), "%s", at(".system/runs/T/a.tmp"));
	assert_int_equal(sl_rename(from, at(".system/runs/T/a"), &err), 0);
	assert_int_equal(access(at(".system/runs/T/a"), F_OK), 0);
	assert_int_equal(sl_unlink(at(".system/runs/T/a"), &err), 0);
	assert_int_equal(sl_unlink(at(".system/runs/T/a"), &err), 0);
	assert_int_equal(access(at(".system/runs/T/a"), F_OK), -1);
	rmdir(at(".system/runs/T"));
}

static void test_path_helpers(void **state)
{
	char long_name[5000], ref[16], *p;

	(void)state;
	/* allocating: never cut, however long */
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	assert_non_null(p = sl_path_fmt("%s/worktrees/%s", "/r/.git", long_name));
	assert_int_equal(strlen(p), strlen("/r/.git/worktrees/") + sizeof(long_name) - 1);
	assert_int_equal(strncmp(p, "/r/.git/worktrees/aaa", 21), 0);
	free(p);
	assert_non_null(p = sl_path_join("/r/", "/x"));
	assert_string_equal(p, "/r/x");
	free(p);
	/* fixed: fits exactly, or refused with nothing half written */
	assert_int_equal(sl_fmt_fixed(ref, sizeof(ref), "refs/heads/%s", "main"), 0);
	assert_string_equal(ref, "refs/heads/main"); /* 15 bytes and the NUL */
	assert_int_equal(sl_fmt_fixed(ref, sizeof(ref), "refs/heads/%s", "mains"), SL_ETOOBIG);
	assert_string_equal(ref, ""); /* never "refs/heads/main", another branch */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writes_refused),
		cmocka_unit_test(test_remove_refused),
		cmocka_unit_test(test_unlink_and_rename_refused),
		cmocka_unit_test(test_link_at_the_name_is_replaced),
		cmocka_unit_test(test_outside_the_guard_unchanged),
		cmocka_unit_test(test_path_helpers),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
