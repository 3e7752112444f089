/* The worktree tool (`sluice worktree`): worktree_tool_create/cleanup/status on a real repository. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs.h"
#include "worktree/worktree.h"
#include "test_helpers.h"

static char tmp[PATH_MAX], repo[PATH_MAX + 16];

static int setup(void **state)
{
	if (test_git_tmpdir(tmp, repo, sizeof(repo), "/tmp/sluice-wtt.XXXXXX"))
		return -1;
	sh("git init -q -b main '%s' && cd '%s' && echo readme >README && git add -A && "
	   "git commit -qm base", repo, repo);
	return 0;
}

static int teardown(void **state)
{
	sh("chmod -R u+w '%s'; rm -rf '%s'", tmp, tmp);
	return 0;
}

static void test_create_status_cleanup(void **state)
{
	struct worktree_tool_made a = WORKTREE_TOOL_MADE_INIT, b = WORKTREE_TOOL_MADE_INIT;
	struct worktree_tool_status st;
	struct sl_err err = SL_ERR_INIT;
	char want[PATH_MAX + 64], *abs = NULL;
	int deleted = -1;

	assert_int_equal(worktree_tool_create(repo, "fix-login", "p", "main", &a, &err), 0);
	assert_string_equal(a.branch, "p-fix-login");
	snprintf(want, sizeof(want), "%s/.system/worktrees/p-fix-login", repo);
	assert_string_equal(a.path, want);
	assert_string_equal(a.base, sh_line("git -C '%s' rev-parse main", repo));
	/* the name is taken: -2 */
	assert_int_equal(worktree_tool_create(repo, "fix-login", "p", "HEAD", &b, &err), 0);
	assert_string_equal(b.branch, "p-fix-login-2");

	assert_int_equal(worktree_tool_status(a.path, &st, &err), 0);
	assert_true(st.is_worktree);
	assert_string_equal(st.path, a.path);
	assert_string_equal(st.branch, "p-fix-login");
	assert_string_equal(st.main_path, repo);
	worktree_tool_status_release(&st);
	assert_int_equal(worktree_tool_status(repo, &st, &err), 0);
	assert_false(st.is_worktree);
	assert_null(st.path);
	worktree_tool_status_release(&st);

	assert_int_equal(worktree_tool_cleanup(repo, b.path, 0, 0, &abs, &deleted, &err), 0);
	assert_string_equal(abs, b.path);
	assert_int_equal(deleted, 1);
	assert_false(sl_path_exists(b.path));
	free(abs);
	assert_int_equal(worktree_tool_cleanup(repo, a.path, 1, 0, &abs, &deleted, &err), 0);
	assert_int_equal(deleted, 0);
	assert_string_equal(sh_line("git -C '%s' branch --list p-fix-login", repo), "  p-fix-login");
	free(abs);
	worktree_tool_made_release(&a);
	worktree_tool_made_release(&b);
}

static void test_refusals(void **state)
{
	struct worktree_tool_made m = WORKTREE_TOOL_MADE_INIT;
	struct worktree_tool_status st;
	struct sl_err err = SL_ERR_INIT;
	char *abs = (char *)"x";
	int deleted;

	assert_int_equal(worktree_tool_create(repo, "s", "bad..prefix", "HEAD", &m, &err),
			 SL_EINVALID);
	worktree_tool_made_release(&m);
	sl_err_clear(&err);
	assert_true(worktree_tool_create(repo, "s", "p", "no-such-rev", &m, &err) < 0);
	assert_non_null(strstr(err.msg, "cannot resolve base 'no-such-rev'"));
	worktree_tool_made_release(&m);
	sl_err_clear(&err);
	assert_int_equal(worktree_tool_cleanup(repo, tmp, 1, 0, &abs, &deleted, &err),
			 SL_EINVALID);
	assert_null(abs);
	sl_err_clear(&err);
	assert_int_equal(worktree_tool_status("/", &st, &err), SL_ENOTFOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_status_cleanup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
	};
	int rc;

	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
