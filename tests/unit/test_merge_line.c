/*
 * The target's first-parent line read one commit at a time (merge/landings.c,
 * merge_line_open/next/close), on a real repository: each commit newest
 * first with the run its Sluice-Run trailer names (NULL: a person's commit,
 * a person's merge too), its parents, author and subject; a trailer on a
 * merged branch's side is not on the line; a hidden base, the commits the
 * walk ends after (the audit's oldest base and root), and the limit.
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

/* The line, newest first, by tag. */
enum { C, MB, TOPIC, FIX, MA, BASE, NLINE };
static const char *const tag[NLINE] = { "t-c", "t-b", "t-topic", "t-fix", "t-a", "t-base" };
static const char *const run_of[NLINE] = { "r-c", "r-b", NULL, NULL, "r-a", NULL };
static const unsigned int parents_of[NLINE] = { 1, 2, 2, 1, 2, 0 };
static const char *const subject_of[NLINE] = { "c", "Merge B", "Merge topic", "fix by hand",
					       "Merge A", "base" };

static char tmp[PATH_MAX], repo[PATH_MAX + 8];
static git_oid id[NLINE], side;
static git_repository *git;

static int oid_of(const char *name, git_oid *out)
{
	char script[128];
	const char *hex;

	snprintf(script, sizeof(script), "git rev-parse %s^{commit}", name);
	return !(hex = sh_line_in(repo, script)) || git_oid_fromstr(out, hex) ? -1 : 0;
}

static int setup(void **state)
{
	size_t i;

	if (test_git_tmpdir(tmp, repo, sizeof(repo), "/tmp/sl-line-XXXXXX"))
		return -1;
	/*
	 * main: base, run r-a (a no-ff merge with the trailer), a person's
	 * commit, a person's merge of a topic (no trailer), run r-b whose branch
	 * carries a commit with a trailer of its own (r-side: not first-parent),
	 * and a trailer on a plain commit (r-c).
	 */
	if (sh_in(tmp,
		  "git init -q -b main repo && cd repo && echo 0 >f && git add f && "
		  "git commit -qm base && git tag t-base && "
		  "git checkout -qb a && echo a >a && git add a && git commit -qm a && "
		  "git checkout -q main && git merge -q --no-ff -m 'Merge A' "
		  "-m 'Work-Order: wo-a' -m 'Sluice-Run: r-a' a && git tag t-a && "
		  "echo p >p && git add p && "
		  "GIT_AUTHOR_NAME='Pat Person' git commit -qm 'fix by hand' && git tag t-fix && "
		  "git checkout -qb topic && echo t >t && git add t && git commit -qm t && "
		  "git checkout -q main && git merge -q --no-ff -m 'Merge topic' topic && "
		  "git tag t-topic && "
		  "git checkout -qb b && echo b >b && git add b && "
		  "git commit -qm b -m 'Sluice-Run: r-side' && git tag t-side && "
		  "git checkout -q main && git merge -q --no-ff -m 'Merge B' -m 'Sluice-Run: r-b' b && "
		  "git tag t-b && echo c >c && git add c && git commit -qm c -m 'Sluice-Run: r-c' && "
		  "git tag t-c"))
		return -1;
	for (i = 0; i < NLINE; i++)
		if (oid_of(tag[i], &id[i]))
			return -1;
	return oid_of("t-side", &side) || git_repository_open(&git, repo) ? -1 : 0;
}

static int teardown(void **state)
{
	struct sl_err err = SL_ERR_INIT;

	git_repository_free(git);
	return sl_rm_rf(tmp, &err);
}

/* The walk of `o` yields the line's entries from..to-1, each as it is. */
static void line_is(const struct merge_line_opts *o, size_t from, size_t to)
{
	struct merge_line l = MERGE_LINE_INIT;
	struct merge_line_commit c;
	size_t i;

	assert_int_equal(merge_line_open(&l, git, o), 0);
	for (i = from; i < to; i++) {
		assert_int_equal(merge_line_next(&l, &c), 1);
		assert_true(git_oid_equal(c.id, &id[i]));
		assert_true(git_oid_equal(git_commit_id(c.commit), &id[i]));
		assert_string_equal(c.hex, git_oid_tostr_s(&id[i]));
		if (run_of[i])
			assert_string_equal(c.run, run_of[i]);
		else
			assert_null(c.run);
		assert_int_equal(c.parents, parents_of[i]);
		assert_string_equal(c.subject, subject_of[i]);
		assert_string_equal(c.author->name, i == FIX ? "Pat Person" : "T");
		assert_false(git_oid_equal(c.id, &side));
	}
	assert_int_equal(merge_line_next(&l, &c), 0);
	assert_int_equal(merge_line_next(&l, &c), 0); /* the end stays the end */
	merge_line_close(&l);
}

static void test_the_whole_line_newest_first(void **state)
{
	struct merge_line_opts o = MERGE_LINE_OPTS_INIT;

	o.tip = &id[C];
	line_is(&o, C, NLINE);
	o.tip = &id[TOPIC];
	line_is(&o, TOPIC, NLINE);
}

static void test_a_hidden_base(void **state)
{
	struct merge_line_opts o = MERGE_LINE_OPTS_INIT;

	o.tip = &id[C];
	o.base = &id[FIX];
	line_is(&o, C, FIX);
	o.base = &id[C];
	line_is(&o, C, C); /* the tip is the base: nothing */
	o.base = &side; /* off the line: what it reaches is hidden (the topic's merge on) */
	line_is(&o, C, TOPIC);
}

static void test_until_each_is_yielded(void **state)
{
	struct merge_line_opts o = MERGE_LINE_OPTS_INIT;

	o.tip = &id[C];
	o.until[0] = &id[TOPIC];
	line_is(&o, C, TOPIC + 1);
	o.until[1] = &id[MA]; /* both: the older one ends it */
	line_is(&o, C, MA + 1);
	o.until[0] = &id[MA];
	o.until[1] = &id[TOPIC];
	line_is(&o, C, MA + 1);
	o.until[0] = NULL; /* one of two given */
	line_is(&o, C, TOPIC + 1);
	o.until[1] = &side; /* never on the line: the whole line */
	line_is(&o, C, NLINE);
	o.until[0] = &id[C]; /* and one that is: still the whole line */
	line_is(&o, C, NLINE);
	o.until[0] = o.until[1] = &id[C]; /* the tip itself */
	line_is(&o, C, C + 1);
}

static void test_the_limit(void **state)
{
	struct merge_line_opts o = MERGE_LINE_OPTS_INIT;

	o.tip = &id[C];
	o.max_commits = 2;
	line_is(&o, C, MB + 1);
	o.base = &id[MB];
	line_is(&o, C, C + 1);
	o.base = NULL;
	o.until[0] = &id[MB];
	o.max_commits = 4;
	line_is(&o, C, MB + 1);
}

static void test_a_tip_not_in_the_repository(void **state)
{
	struct merge_line_opts o = MERGE_LINE_OPTS_INIT;
	struct merge_line l = MERGE_LINE_INIT;
	struct merge_line_commit c;
	git_oid none;

	assert_int_equal(git_oid_fromstr(&none, "0123456789abcdef0123456789abcdef01234567"), 0);
	o.tip = &none;
	assert_int_not_equal(merge_line_open(&l, git, &o), 0);
	assert_non_null(git_error_last());
	git_error_clear();
	assert_int_equal(merge_line_next(&l, &c), 0);
	merge_line_close(&l);
	merge_line_close(&l); /* twice is harmless */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_whole_line_newest_first),
		cmocka_unit_test(test_a_hidden_base),
		cmocka_unit_test(test_until_each_is_yielded),
		cmocka_unit_test(test_the_limit),
		cmocka_unit_test(test_a_tip_not_in_the_repository),
	};
	int failed;

	git_libgit2_init();
	failed = cmocka_run_group_tests_name("line", tests, setup, teardown);
	git_libgit2_shutdown();
	return failed;
}
