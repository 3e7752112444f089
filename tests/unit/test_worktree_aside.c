/*
 * A worktree creation killed half way (worktree/aside.c): worktree_half_made()
 * sees its folder or its .git/worktrees entry; worktree_set_aside() removes
 * a folder with nothing but its .git file, keeps any other beside the run
 * (never a file lost) and removes the entry.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs.h"
#include "worktree/worktree.h"

struct fixture {
	char root[256];
	char *gitdir, *run_dir, *wt, *entry;
};

static void put(const char *dir, const char *name)
{
	struct sl_err err = SL_ERR_INIT;
	char *path = sl_path_join(dir, name);

	assert_int_equal(sl_mkdir_p(dir, &err), 0);
	assert_int_equal(sl_write_file(path, "x\n", 2, &err), 0);
	free(path);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char tmpl[] = "/tmp/test-aside.XXXXXX";

	assert_non_null(mkdtemp(tmpl));
	snprintf(f->root, sizeof(f->root), "%s", tmpl);
	f->gitdir = sl_path_join(f->root, ".git");
	f->run_dir = sl_path_join(f->root, "runs/R1");
	f->wt = sl_path_join(f->run_dir, "worktree");
	f->entry = worktree_entry_path(f->gitdir, "R1", NULL);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	struct sl_err err = SL_ERR_INIT;

	sl_rm_rf(f->root, &err);
	free(f->gitdir);
	free(f->run_dir);
	free(f->wt);
	free(f->entry);
	free(f);
	return 0;
}

static void test_nothing_there(void **state)
{
	struct fixture *f = *state;
	struct sl_err err = SL_ERR_INIT;
	char *kept = (char *)"unset";

	assert_int_equal(worktree_half_made(f->gitdir, "R1", f->wt), 0);
	assert_int_equal(worktree_set_aside(f->gitdir, "R1", f->wt, f->run_dir, &kept, &err), 0);
	assert_null(kept);
}

static void test_only_git_file_goes(void **state)
{
	struct fixture *f = *state;
	struct sl_err err = SL_ERR_INIT;
	char *kept = NULL;

	put(f->wt, ".git");
	put(f->entry, "HEAD");
	assert_int_equal(worktree_half_made(f->gitdir, "R1", f->wt), 1);
	assert_int_equal(worktree_set_aside(f->gitdir, "R1", f->wt, f->run_dir, &kept, &err), 0);
	assert_null(kept);
	assert_false(sl_path_exists(f->wt));
	assert_false(sl_path_exists(f->entry));
	assert_int_equal(worktree_half_made(f->gitdir, "R1", f->wt), 0);
}

static void test_entry_alone(void **state)
{
	struct fixture *f = *state;
	struct sl_err err = SL_ERR_INIT;
	char *kept = NULL;

	put(f->entry, "HEAD");
	assert_int_equal(worktree_half_made(f->gitdir, "R1", f->wt), 1);
	assert_int_equal(worktree_set_aside(f->gitdir, "R1", f->wt, f->run_dir, &kept, &err), 0);
	assert_null(kept);
	assert_false(sl_path_exists(f->entry));
}

static void test_work_is_kept(void **state)
{
	struct fixture *f = *state;
	struct sl_err err = SL_ERR_INIT;
	char *kept = NULL, *file;

	put(f->wt, ".git");
	put(f->wt, "work.c");
	assert_int_equal(worktree_set_aside(f->gitdir, "R1", f->wt, f->run_dir, &kept, &err), 0);
	assert_non_null(kept);
	assert_non_null(strstr(kept, "/runs/R1/worktree.broken-"));
	file = sl_path_join(kept, "work.c");
	assert_true(sl_path_exists(file));
	assert_false(sl_path_exists(f->wt));
	free(file);
	free(kept);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nothing_there, setup, teardown),
		cmocka_unit_test_setup_teardown(test_only_git_file_goes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_entry_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_work_is_kept, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
