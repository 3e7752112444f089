/* system_init: what `sluice init` does, told line by line through the note callback. */
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

#include "core/buf.h"
#include "core/fs.h"
#include "core/repo.h"
#include "system/system.h"
#include "test_helpers.h"

static char tmp[PATH_MAX], repo[PATH_MAX + 16];

static int setup(void **state)
{
	if (test_git_tmpdir(tmp, repo, sizeof(repo), "/tmp/sluice-init.XXXXXX"))
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

static void collect(const char *line, void *data)
{
	struct sl_buf *b = data;

	sl_buf_puts(b, line);
	sl_buf_puts(b, "\n");
}

/* system_init in `repo` with the options; the notes into *notes (caller releases). */
static int init_once(const char *target, const char *inbox, struct sl_buf *notes,
		     struct system_init_result *res, struct sl_err *err)
{
	struct system_init_opts o = SYSTEM_INIT_OPTS_INIT;
	struct sl_repo r = SL_REPO_INIT;
	int rc;

	o.target = target;
	o.inbox = inbox;
	o.note = collect;
	o.data = notes;
	assert_int_equal(sl_repo_find(&r, repo, err), 0);
	rc = system_init(&r, &o, res, err);
	sl_repo_release(&r);
	return rc;
}

static void test_first_then_nothing(void **state)
{
	struct system_init_result res = { 0, NULL };
	struct sl_buf notes = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(init_once(NULL, NULL, &notes, &res, &err), 0);
	assert_true(res.changed);
	assert_string_equal(res.target, "main");
	assert_string_equal(sl_buf_cstr(&notes),
			    "created .system/\n"
			    "created .system/config.yaml (target 'main', inbox 'work_orders')\n"
			    "created .system/runs/\n"
			    "created .system/lock\n"
			    "created .system/sluice.db\n"
			    "added /.system/ to .git/info/exclude\n"
			    "created work_orders\n");
	system_init_result_release(&res);
	sl_buf_release(&notes);

	/* again: nothing to do, nothing said */
	assert_int_equal(init_once(NULL, NULL, &notes, &res, &err), 0);
	assert_false(res.changed);
	assert_null(res.target);
	assert_string_equal(sl_buf_cstr(&notes), "");
	sl_buf_release(&notes);

	/* a missing piece is put back */
	sh("rm '%s/.system/sluice.db'", repo);
	assert_int_equal(init_once("other", NULL, &notes, &res, &err), 0);
	assert_true(res.changed);
	assert_null(res.target);
	assert_string_equal(sl_buf_cstr(&notes),
			    "kept .system/config.yaml as it is; edit it to change the target or "
			    "the inbox\n"
			    "created .system/sluice.db\n");
	sl_buf_release(&notes);
}

/* A refusal creates nothing and says nothing. */
static void test_refusals_touch_nothing(void **state)
{
	struct system_init_result res = { 0, NULL };
	struct sl_buf notes = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	char sys[PATH_MAX + 32];

	snprintf(sys, sizeof(sys), "%s/.system", repo);
	assert_int_equal(init_once("bad..name", NULL, &notes, &res, &err), SL_EINVALID);
	assert_non_null(strstr(err.msg, "bad..name"));
	sl_err_clear(&err);
	assert_int_equal(init_once(NULL, "../out", &notes, &res, &err), SL_EINVALID);
	sl_err_clear(&err);
	sh("git -C '%s' checkout -q --detach", repo);
	assert_int_equal(init_once(NULL, NULL, &notes, &res, &err), SL_EINVALID);
	assert_non_null(strstr(err.msg, "HEAD is detached"));
	assert_false(sl_path_exists(sys));
	assert_string_equal(sl_buf_cstr(&notes), "");
	system_init_result_release(&res);
	sl_buf_release(&notes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_first_then_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals_touch_nothing, setup, teardown),
	};
	int rc;

	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
