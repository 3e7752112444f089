/*
 * The rival of a conflict (merge/blame.c): the clashing lines of the
 * target's side (a pure function of both sides' hunks), git blame's porcelain
 * parsed into landings, and merge_blame_landings on a real repository: a
 * run-like merge that rewrote the lines is named, a later landing elsewhere in
 * the file is not, a person's direct commit is.
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
#include "merge/merge_int.h"
#include "test_helpers.h"

/* ---- merge_clashing_lines ------------------------------------------------- */

static void lines_are(const struct merge_hunk *o, size_t no, const struct merge_hunk *t,
		      size_t nt, size_t total, const struct merge_lines *want, size_t nwant)
{
	struct merge_lines *got = NULL;
	size_t n = 99, i;

	assert_int_equal(merge_clashing_lines(o, no, t, nt, total, &got, &n), 0);
	assert_int_equal(n, nwant);
	for (i = 0; i < n; i++) {
		assert_int_equal(got[i].first, want[i].first);
		assert_int_equal(got[i].count, want[i].count);
	}
	free(got);
}

static void test_overlap_is_a_clash(void **state)
{
	/* ours rewrote base 10-12 (as 10-12), theirs base 11; ours also changed base 900 */
	struct merge_hunk o[] = { { 10, 3, 10, 3 }, { 900, 1, 900, 1 } };
	struct merge_hunk t[] = { { 11, 1, 11, 1 } };
	struct merge_lines want[] = { { 10, 3 } };

	lines_are(o, 2, t, 1, 1000, want, 1);
}

static void test_apart_is_no_clash(void **state)
{
	struct merge_hunk o[] = { { 900, 1, 900, 1 } };
	struct merge_hunk t[] = { { 10, 3, 10, 3 } };

	lines_are(o, 1, t, 1, 1000, NULL, 0);
	lines_are(NULL, 0, t, 1, 1000, NULL, 0);
}

static void test_touching_is_a_clash(void **state)
{
	/* base 5-6 and base 7: adjacent, a conflict for git's xdiff */
	struct merge_hunk o[] = { { 5, 2, 5, 4 } };
	struct merge_hunk t[] = { { 7, 1, 7, 1 } };
	struct merge_lines want[] = { { 5, 4 } };
	/* base 5 and base 8: one line apart, no conflict */
	struct merge_hunk o2[] = { { 5, 1, 5, 1 } };
	struct merge_hunk t2[] = { { 8, 1, 8, 1 } };

	lines_are(o, 1, t, 1, 100, want, 1);
	lines_are(o2, 1, t2, 1, 100, NULL, 0);
}

static void test_insertions_at_one_place(void **state)
{
	/* both sides added lines after base line 3; ours added 2 (our lines 4-5) */
	struct merge_hunk o[] = { { 3, 0, 4, 2 } };
	struct merge_hunk t[] = { { 3, 0, 4, 1 } };
	struct merge_lines want[] = { { 4, 2 } };

	lines_are(o, 1, t, 1, 12, want, 1);
}

static void test_removal_names_its_neighbours(void **state)
{
	/* ours removed base 4-6 (after our line 3); theirs changed base 5 */
	struct merge_hunk o[] = { { 4, 3, 3, 0 } };
	struct merge_hunk t[] = { { 5, 1, 5, 1 } };
	struct merge_lines want[] = { { 3, 2 } };
	/* ours removed the first lines: only the line after */
	struct merge_hunk o2[] = { { 1, 2, 0, 0 } };
	struct merge_hunk t2[] = { { 1, 1, 1, 1 } };
	struct merge_lines want2[] = { { 1, 1 } };
	/* ours removed everything: nothing left to blame */
	struct merge_hunk o3[] = { { 1, 5, 0, 0 } };

	lines_are(o, 1, t, 1, 7, want, 1);
	lines_are(o2, 1, t2, 1, 3, want2, 1);
	lines_are(o3, 1, t2, 1, 0, NULL, 0);
}

static void test_ranges_sorted_and_merged(void **state)
{
	struct merge_hunk o[] = { { 20, 2, 21, 2 }, { 3, 1, 3, 2 }, { 5, 1, 5, 1 } };
	struct merge_hunk t[] = { { 21, 1, 21, 1 }, { 3, 3, 3, 1 } };
	struct merge_lines want[] = { { 3, 3 }, { 21, 2 } };

	lines_are(o, 3, t, 2, 40, want, 2);
}

/* ---- merge__parse_blame ---------------------------------------------------- */

#define A40 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define B40 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define C40 "cccccccccccccccccccccccccccccccccccccccc"

static const char porcelain[] =
	B40 " 9 9 1\n"
	"author Old\nauthor-mail <old@x>\nsummary base\nboundary\nfilename f.c\n\told line\n"
	A40 " 10 10 2\n"
	"author Ann Run\nauthor-mail <ann@x>\nauthor-time 1\nsummary Merge run A\n"
	"previous " B40 " f.c\nfilename f.c\n\tten\n"
	A40 " 11 11\n\televen\n"
	C40 " 12 12 1\n"
	"author Pat Person\nauthor-mail <pat@x>\nsummary fix by hand\nfilename f.c\n\ttwelve\n"
	B40 " 13 13 1\n\tthirteen\n";

static void test_parse_porcelain(void **state)
{
	struct merge_landing *v = NULL;
	size_t n = 0;

	assert_int_equal(merge__parse_blame(porcelain, strlen(porcelain), "f.c", &v, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].commit, A40);
	assert_string_equal(v[0].author, "Ann Run <ann@x>");
	assert_string_equal(v[0].subject, "Merge run A");
	assert_string_equal(v[0].path, "f.c");
	assert_int_equal(v[0].line, 10);
	assert_int_equal(v[0].lines, 2);
	assert_string_equal(v[1].commit, C40);
	assert_string_equal(v[1].author, "Pat Person <pat@x>");
	assert_int_equal(v[1].line, 12);
	assert_int_equal(v[1].lines, 1);
	/* a second file adds to the same landing */
	assert_int_equal(merge__parse_blame(porcelain, strlen(porcelain), "g.c", &v, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].lines, 4);
	assert_string_equal(v[0].path, "f.c");
	merge_landings_free(v, n);
}

/* ---- merge_blame_landings on a real repository ------------------------------ */

static char tmp[PATH_MAX], repo[PATH_MAX + 8];

static int setup(void **state)
{
	if (test_git_tmpdir(tmp, repo, sizeof(repo), "/tmp/sl-blame-XXXXXX"))
		return -1;
	/*
	 * base: f.c of 1000 lines. run/c branches off; run A (a no-ff merge)
	 * rewrites 10-12, run B (a no-ff merge) changes 900, a person commits
	 * 500 on main; run/c rewrites 10-12 and 500.
	 */
	return sh_in(tmp,
		"git init -q -b main repo && cd repo && seq 1 1000 >f.c && git add f.c && "
		"git commit -qm base && git branch run/c && "
		"git checkout -qb run/a && sed -i '10,12s/$/ A/' f.c && git commit -qam a && "
		"git checkout -q main && git merge -q --no-ff -m 'Merge run A' run/a && "
		"git checkout -qb run/b && sed -i '900s/$/ B/' f.c && git commit -qam b && "
		"git checkout -q main && git merge -q --no-ff -m 'Merge run B' run/b && "
		"sed -i '500s/$/ P/' f.c && "
		"GIT_AUTHOR_NAME='Pat Person' git commit -qam 'fix 500 by hand' && "
		"git checkout -q run/c && sed -i -e '10,12s/$/ C/' -e '500s/$/ C/' f.c && "
		"git commit -qam c && git checkout -q main");
}

static int teardown(void **state)
{
	struct sl_err err = SL_ERR_INIT;

	return sl_rm_rf(tmp, &err);
}

static void test_landings_of_the_clashing_lines(void **state)
{
	const char *paths[] = { "f.c", "missing.c" };
	struct merge_landing *v = NULL;
	struct sl_err err = SL_ERR_INIT;
	char merge_a[GIT_OID_HEXSZ + 1], person[GIT_OID_HEXSZ + 1];
	size_t n = 0;

	memcpy(merge_a, sh_line_in(repo, "git rev-parse main~1^1"), GIT_OID_HEXSZ);
	merge_a[GIT_OID_HEXSZ] = '\0';
	memcpy(person, sh_line_in(repo, "git rev-parse main"), GIT_OID_HEXSZ);
	person[GIT_OID_HEXSZ] = '\0';
	assert_int_equal(merge_blame_landings(repo, "main", "run/c", paths, 2, &v, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].commit, merge_a);
	assert_string_equal(v[0].subject, "Merge run A");
	assert_int_equal(v[0].line, 10);
	assert_int_equal(v[0].lines, 3);
	assert_string_equal(v[1].commit, person);
	assert_string_equal(v[1].author, "Pat Person <t@example.com>");
	assert_string_equal(v[1].subject, "fix 500 by hand");
	assert_int_equal(v[1].line, 500);
	merge_landings_free(v, n);
}

static void test_refused_revision(void **state)
{
	const char *paths[] = { "f.c" };
	struct merge_landing *v = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0;

	assert_int_not_equal(merge_blame_landings(repo, "--output=x", "run/c", paths, 1, &v, &n,
						  &err), 0);
	assert_null(v);
	assert_int_equal(n, 0);
}

int main(void)
{
	const struct CMUnitTest pure[] = {
		cmocka_unit_test(test_overlap_is_a_clash),
		cmocka_unit_test(test_apart_is_no_clash),
		cmocka_unit_test(test_touching_is_a_clash),
		cmocka_unit_test(test_insertions_at_one_place),
		cmocka_unit_test(test_removal_names_its_neighbours),
		cmocka_unit_test(test_ranges_sorted_and_merged),
		cmocka_unit_test(test_parse_porcelain),
	};
	const struct CMUnitTest git[] = {
		cmocka_unit_test(test_landings_of_the_clashing_lines),
		cmocka_unit_test(test_refused_revision),
	};
	int failed = cmocka_run_group_tests_name("pure", pure, NULL, NULL);

	git_libgit2_init();
	failed += cmocka_run_group_tests_name("git", git, setup, teardown);
	git_libgit2_shutdown();
	return failed;
}
