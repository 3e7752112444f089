/*
 * The one reader of landings (merge/landings.c): the runs whose landings a
 * tip holds and a base does not, read from the Sluice-Run trailer on the
 * tip's first-parent line, on a real repository: landings newest first, a
 * trailer on a merged branch's side is no landing, a person's commit when
 * asked for, the merges-only filter, a run left out, and the limits.
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

#include "core/fs.h"
#include "merge/merge.h"
#include "test_helpers.h"

static char tmp[PATH_MAX], repo[PATH_MAX + 8], base[GIT_OID_HEXSZ + 1], tip[GIT_OID_HEXSZ + 1];

static int setup(void **state)
{
	const char *b, *t;

	if (test_git_tmpdir(tmp, repo, sizeof(repo), "/tmp/sl-landings-XXXXXX"))
		return -1;
	/*
	 * main: base, run r-a (a no-ff merge with the trailer), a person's
	 * commit, run r-b whose branch carries a commit with a trailer of its
	 * own (r-side: not first-parent), and a trailer on a plain commit (r-c).
	 */
	if (sh_in(tmp,
		  "git init -q -b main repo && cd repo && echo 0 >f && git add f && "
		  "git commit -qm base && "
		  "git checkout -qb a && echo a >a && git add a && git commit -qm a && "
		  "git checkout -q main && git merge -q --no-ff -m 'Merge A' "
		  "-m 'Work-Order: wo-a' -m 'Sluice-Run: r-a' a && "
		  "echo p >p && git add p && "
		  "GIT_AUTHOR_NAME='Pat Person' git commit -qm 'fix by hand' && "
		  "git checkout -qb b && echo b >b && git add b && "
		  "git commit -qm b -m 'Sluice-Run: r-side' && "
		  "git checkout -q main && git merge -q --no-ff -m 'Merge B' -m 'Sluice-Run: r-b' b && "
		  "echo c >c && git add c && git commit -qm c -m 'Sluice-Run: r-c'"))
		return -1;
	if (!(b = sh_line_in(repo, "git rev-list --max-parents=0 main")))
		return -1;
	snprintf(base, sizeof(base), "%.40s", b); /* sh_line_in's buffer is reused */
	if (!(t = sh_line_in(repo, "git rev-parse main")))
		return -1;
	snprintf(tip, sizeof(tip), "%.40s", t);
	return 0;
}

static int teardown(void **state)
{
	struct sl_err err = SL_ERR_INIT;

	return sl_rm_rf(tmp, &err);
}

static void runs_are(const struct merge_landings_opts *o, const char *const *want, size_t nwant)
{
	struct merge_run_landing *v = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 99, i;

	assert_int_equal(merge_landings_between(repo, o, &v, &n, &err), 0);
	assert_int_equal(n, nwant);
	for (i = 0; i < n; i++) {
		if (want[i])
			assert_string_equal(v[i].run, want[i]);
		else
			assert_null(v[i].run);
		assert_int_equal(strlen(v[i].commit), GIT_OID_HEXSZ);
	}
	merge_run_landings_free(v, n);
}

static void test_landings_newest_first(void **state)
{
	struct merge_landings_opts o = { .tip = tip, .base = base };
	const char *want[] = { "r-c", "r-b", "r-a" };

	runs_are(&o, want, 3);
}

static void test_merges_only_and_a_run_left_out(void **state)
{
	struct merge_landings_opts o = { .tip = tip, .base = base, .merges_only = 1 };
	const char *want[] = { "r-b", "r-a" };
	const char *want2[] = { "r-a" };

	runs_are(&o, want, 2);
	o.skip_run = "r-b";
	runs_are(&o, want2, 1);
}

static void test_persons_commit(void **state)
{
	struct merge_landings_opts o = { .tip = tip, .base = base, .persons = 1 };
	const char *want[] = { "r-c", "r-b", NULL, "r-a" };
	struct merge_run_landing *v = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0;

	runs_are(&o, want, 4);
	assert_int_equal(merge_landings_between(repo, &o, &v, &n, &err), 0);
	assert_string_equal(v[2].author, "Pat Person <t@example.com>");
	assert_string_equal(v[2].subject, "fix by hand");
	assert_string_equal(v[1].subject, "Merge B");
	merge_run_landings_free(v, n);
}

static void test_limits_and_no_base(void **state)
{
	struct merge_landings_opts o = { .tip = tip, .max_found = 2 };
	const char *want[] = { "r-c", "r-b" };
	const char *want3[] = { "r-c", "r-b", "r-a" };

	runs_are(&o, want, 2);
	o.max_found = 0;
	o.max_commits = 2; /* c and Merge B */
	runs_are(&o, want, 2);
	o.max_commits = 0;
	runs_are(&o, want3, 3); /* no base: the whole line */
}

static void test_bad_tip(void **state)
{
	struct merge_landings_opts o = { .tip = "not-a-commit" };
	struct merge_run_landing *v = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 7;

	assert_int_not_equal(merge_landings_between(repo, &o, &v, &n, &err), 0);
	assert_null(v);
	assert_int_equal(n, 0);
	assert_non_null(strstr(err.msg, "not-a-commit"));
}

static void test_trailer_of_a_message(void **state)
{
	char *run = merge_run_of_message("Merge X\n\nWork-Order: w\nSluice-Run: r-x\n");

	assert_string_equal(run, "r-x");
	free(run);
	assert_null(merge_run_of_message("a person's commit\n\nSigned-off-by: P <p@x>\n"));
	assert_string_equal(MERGE_TRAILER_RUN, "Sluice-Run");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_landings_newest_first),
		cmocka_unit_test(test_merges_only_and_a_run_left_out),
		cmocka_unit_test(test_persons_commit),
		cmocka_unit_test(test_limits_and_no_base),
		cmocka_unit_test(test_bad_tip),
		cmocka_unit_test(test_trailer_of_a_message),
	};
	int failed;

	git_libgit2_init();
	failed = cmocka_run_group_tests_name("landings", tests, setup, teardown);
	git_libgit2_shutdown();
	return failed;
}
