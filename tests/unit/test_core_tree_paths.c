/* sl_tree_paths() (core/tree_paths.c) against git's own diff of the same trees. */
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
#include "core/tree_paths.h"
#include "test_helpers.h"

static char tmp[PATH_MAX], repo[PATH_MAX + 16];

static int setup(void **state)
{
	(void)state;
	if (test_git_tmpdir(tmp, repo, sizeof(repo), "/tmp/sluice-tree-paths.XXXXXX"))
		return -1;
	git_libgit2_init();
	/* A: files, folders, an executable, a link, a submodule; B changes each kind */
	sh("git init -q -b main '%s' && cd '%s' && mkdir -p a/b x/y/z bar && "
	   "echo c >a/b/c.txt && echo d >a/b/d.txt && echo z >x/y/z/z.txt && echo foo >foo && "
	   "echo f >bar/f && echo 'echo' >exe.sh && ln -s a/b/c.txt link && echo 1 >foo.c && "
	   "echo 2 >foo-bar && git add -A && "
	   "git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,sub && "
	   "git commit -qm A && git tag A && "
	   "echo C >a/b/c.txt && git rm -q a/b/d.txt && git rm -q foo && mkdir foo && "
	   "echo in >foo/inner && git rm -rq bar && echo now-a-file >bar && chmod +x exe.sh && "
	   "rm link && ln -s foo.c link && mkdir -p new/deep && echo n >new/deep/n.txt && "
	   "git add -A && "
	   "git update-index --add --cacheinfo 160000,2222222222222222222222222222222222222222,sub && "
	   "git commit -qm B && git tag B", repo, repo);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sh("rm -rf '%s'", tmp);
	git_libgit2_shutdown();
	return 0;
}

static int collect(const char *path, void *payload)
{
	struct sl_buf *b = payload;

	return sl_buf_addf(b, "%s\n", path) < 0 ? -1 : 0;
}

static git_tree *tree(git_repository *r, const char *rev)
{
	git_object *o = NULL;
	git_tree *t = NULL;

	assert_int_equal(git_revparse_single(&o, r, rev), 0);
	assert_int_equal(git_object_peel((git_object **)&t, o, GIT_OBJECT_TREE), 0);
	git_object_free(o);
	return t;
}

/* The paths of a..b, sorted, as one string (static). */
static const char *paths(git_repository *r, const char *a, const char *b)
{
	static char out[8192];
	struct sl_buf buf = SL_BUF_INIT;
	git_tree *ta = a ? tree(r, a) : NULL, *tb = b ? tree(r, b) : NULL;
	FILE *f;

	sl_buf_init(&buf, 0);
	assert_int_equal(sl_tree_paths(r, ta, tb, collect, &buf), 0);
	snprintf(out, sizeof(out), "%s/walk", tmp);
	assert_non_null(f = fopen(out, "w"));
	fwrite(buf.ptr ? buf.ptr : "", 1, buf.len, f);
	fclose(f);
	snprintf(out, sizeof(out), "%s", sh_line("LC_ALL=C sort '%s/walk' | tr '\\n' ' '", tmp));
	sl_buf_release(&buf);
	git_tree_free(ta);
	git_tree_free(tb);
	return out;
}

static void test_same_paths_as_git_diff(void **state)
{
	git_repository *r = NULL;
	char want[4096];

	(void)state;
	assert_int_equal(git_repository_open(&r, repo), 0);
	snprintf(want, sizeof(want), "%s",
		 sh_line("git -C '%s' diff --no-renames --name-only A B | LC_ALL=C sort | tr '\\n' ' '",
			 repo));
	assert_string_equal(paths(r, "A", "B"), want);
	assert_string_equal(want, "a/b/c.txt a/b/d.txt bar bar/f exe.sh foo foo/inner link "
				  "new/deep/n.txt sub ");
	snprintf(want, sizeof(want), "%s",
		 sh_line("git -C '%s' diff --no-renames --name-only B A | LC_ALL=C sort | tr '\\n' ' '",
			 repo));
	assert_string_equal(paths(r, "B", "A"), want);
	assert_string_equal(paths(r, "A", "A"), "");
	/* no tree on one side: every path of the other */
	snprintf(want, sizeof(want), "%s",
		 sh_line("git -C '%s' ls-tree -r --name-only B | LC_ALL=C sort | tr '\\n' ' '", repo));
	assert_string_equal(paths(r, NULL, "B"), want);
	assert_string_equal(paths(r, "B", NULL), want);
	git_repository_free(r);
}

static int stop_at_foo(const char *path, void *payload)
{
	(*(int *)payload)++;
	return !strcmp(path, "foo") ? 7 : 0;
}

static void test_stops_when_asked(void **state)
{
	git_repository *r = NULL;
	git_tree *a, *b;
	int seen = 0;

	(void)state;
	assert_int_equal(git_repository_open(&r, repo), 0);
	a = tree(r, "A");
	b = tree(r, "B");
	assert_int_equal(sl_tree_paths(r, a, b, stop_at_foo, &seen), 7);
	assert_int_equal(seen, 6); /* a/b/c.txt a/b/d.txt bar bar/f exe.sh foo */
	git_tree_free(a);
	git_tree_free(b);
	git_repository_free(r);
}

/*
 * An equal subtree is never read: here one that is not even in the object
 * store (both trees name the same missing id), which libgit2's own diff
 * cannot get past.
 */
static void test_equal_subtrees_are_not_read(void **state)
{
	git_repository *r = NULL;
	git_tree *a, *b;
	git_diff *diff = NULL;
	struct sl_buf buf = SL_BUF_INIT;
	const char *missing = "3333333333333333333333333333333333333333";
	char one[64], two[64];

	(void)state;
	snprintf(one, sizeof(one), "%s", sh_line("git -C '%s' rev-parse A:foo", repo));
	snprintf(two, sizeof(two), "%s", sh_line("git -C '%s' rev-parse A:foo.c", repo));
	sh("cd '%s' && ta=$(printf '040000 tree %s\\tbig\\n100644 blob %s\\tf\\n' | git mktree --missing) && "
	   "tb=$(printf '040000 tree %s\\tbig\\n100644 blob %s\\tf\\n' | git mktree --missing) && "
	   "git tag MA $ta && git tag MB $tb", repo, missing, one, missing, two);
	assert_int_equal(git_repository_open(&r, repo), 0);
	a = tree(r, "MA");
	b = tree(r, "MB");
	sl_buf_init(&buf, 0);
	assert_int_equal(sl_tree_paths(r, a, b, collect, &buf), 0);
	assert_string_equal(sl_buf_cstr(&buf), "f\n");
	assert_true(git_diff_tree_to_tree(&diff, r, a, b, NULL) < 0); /* libgit2 reads 'big' */
	git_diff_free(diff);
	sl_buf_release(&buf);
	git_tree_free(a);
	git_tree_free(b);
	git_repository_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_paths_as_git_diff),
		cmocka_unit_test(test_stops_when_asked),
		cmocka_unit_test(test_equal_subtrees_are_not_read),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
