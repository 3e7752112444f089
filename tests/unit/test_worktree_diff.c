/* diff.patch must be byte-identical to git's; the file list must match git's. */
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
#include <jansson.h>
#include "worktree/worktree.h"
#include "test_helpers.h"

static char tmp[PATH_MAX], repo[PATH_MAX + 16], base[64], head[64];

/* Every kind of change between base and head. */
static int setup(void **state)
{
	if (test_git_tmpdir(tmp, repo, sizeof(repo), "/tmp/sluice-diff.XXXXXX"))
		return -1;
	sh("git init -q -b main '%s' && cd '%s' && "
	   "seq 1 200 >long.txt && seq 1 100 >torename.txt && seq 1 50 >tomove.txt && "
	   "head -c 3000 /dev/urandom >bin.dat && echo run >run.sh && echo doomed >gone.txt && "
	   ": >empty-gone && : >empty-stays && echo f >becomes-link && "
	   "printf 'no eol' >noeol.txt && echo s >'sp ace.txt' && echo u >'ünï.txt' && "
	   "git add -A && git commit -qm base",
	   repo, repo);
	sh("cd '%s' && sed -i 's/^50$/fifty/; s/^150$/150 changed/' long.txt && "
	   "git mv torename.txt renamed.txt && git mv tomove.txt 'moved with space.txt' && "
	   "echo 51 >>'moved with space.txt' && head -c 3000 /dev/urandom >bin.dat && "
	   "head -c 500 /dev/urandom >newbin.dat && chmod +x run.sh && git rm -q gone.txt empty-gone && "
	   ": >empty-new && rm becomes-link && ln -s long.txt becomes-link && ln -s run.sh link && "
	   "printf 'no eol\\nmore' >noeol.txt && echo t >'sp ace.txt' && echo v >'ünï.txt' && "
	   "echo n >'ñew file.txt' && git add -A && git commit -qm head",
	   repo);
	snprintf(base, sizeof(base), "%s", sh_line("git -C '%s' rev-parse HEAD~1", repo));
	snprintf(head, sizeof(head), "%s", sh_line("git -C '%s' rev-parse HEAD", repo));
	return 0;
}

static int teardown(void **state)
{
	sh("rm -rf '%s'", tmp);
	return 0;
}

static void test_patch_is_git_bytes(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char patch[PATH_MAX * 2];

	snprintf(patch, sizeof(patch), "%s/diff.patch", tmp);
	sh("cd '%s' && git diff --binary --full-index -M %s %s >'%s/expected.patch'", repo, base,
	   head, tmp);
	assert_int_equal(worktree_diff_patch(repo, base, head, patch, &err), 0);
	sh("cmp '%s/expected.patch' '%s'", tmp, patch);
	/* it has the cases it should have */
	sh("grep -q '^GIT binary patch' '%s' && grep -q '^rename from torename.txt' '%s' && "
	   "grep -q '^old mode 100644' '%s' && grep -q '^new file mode 120000' '%s' && "
	   "grep -q 'No newline at end of file' '%s' && grep -q '^deleted file mode' '%s'",
	   patch, patch, patch, patch, patch, patch);
	/* git applies it back to the head tree */
	sh("cd '%s' && git worktree add -q --detach '%s/check' %s && cd '%s/check' && "
	   "git apply --index '%s' && test \"$(git write-tree)\" = \"$(git rev-parse %s^{tree})\"",
	   repo, tmp, base, tmp, patch, head);
}

static void test_patch_ignores_config(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char patch[PATH_MAX * 2];

	snprintf(patch, sizeof(patch), "%s/diff.patch", tmp);
	sh("cd '%s' && git diff --binary --full-index -M %s %s >'%s/expected.patch'", repo, base,
	   head, tmp);
	sh("cd '%s' && git config diff.noprefix true && git config color.ui always && "
	   "git config diff.external false && git config diff.algorithm histogram && "
	   "git config diff.context 7 && git config core.quotePath false && "
	   "git config diff.mnemonicPrefix true && git config diff.renames false && "
	   "git config diff.orderFile /dev/null && git config diff.interHunkContext 10",
	   repo);
	setenv("GIT_EXTERNAL_DIFF", "false", 1);
	setenv("GIT_DIFF_OPTS", "--unified=9", 1);
	assert_int_equal(worktree_diff_patch(repo, base, head, patch, &err), 0);
	unsetenv("GIT_EXTERNAL_DIFF");
	unsetenv("GIT_DIFF_OPTS");
	sh("cmp '%s/expected.patch' '%s'", tmp, patch);
}

static void test_files_match_git(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	struct worktree_file_changes fc = WORKTREE_FILE_CHANGES_INIT;
	char mine[PATH_MAX * 2];
	FILE *f;
	size_t i;

	assert_int_equal(worktree_diff_files(repo, base, head, &fc, &err), 0);
	snprintf(mine, sizeof(mine), "%s/mine.txt", tmp);
	assert_non_null(f = fopen(mine, "w"));
	for (i = 0; i < fc.n; i++) {
		if (i)
			assert_true(strcmp(fc.v[i - 1].path, fc.v[i].path) < 0);
		if (fc.v[i].old_path)
			fprintf(f, "%c\t%s\t%s\n", fc.v[i].status, fc.v[i].old_path, fc.v[i].path);
		else
			fprintf(f, "%c\t%s\n", fc.v[i].status, fc.v[i].path);
	}
	fclose(f);
	/* git's name-status, scores dropped, sorted by the new path */
	sh("cd '%s' && git -c core.quotePath=false diff --name-status -M %s %s | "
	   "sed 's/^\\([RC]\\)[0-9]*/\\1/' | awk -F'\\t' '{print $NF \"\\t\" $0}' | "
	   "LC_ALL=C sort | cut -f2- >'%s/git.txt'",
	   repo, base, head, tmp);
	sh("diff -u '%s/git.txt' '%s'", tmp, mine);
	assert_int_equal(fc.n, 14);
	worktree_file_changes_release(&fc);
}

static void test_write_both(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	struct worktree_file_changes fc = WORKTREE_FILE_CHANGES_INIT;
	char patch[PATH_MAX * 2], json[PATH_MAX * 2];

	snprintf(patch, sizeof(patch), "%s/diff.patch", tmp);
	snprintf(json, sizeof(json), "%s/files_changed.json", tmp);
	assert_int_equal(worktree_diff_write(repo, base, head, patch, json, &fc, &err), 0);
	assert_int_equal(fc.n, 14);
	sh("python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
	   "assert [x[\"path\"] for x in d] == sorted(x[\"path\"] for x in d); "
	   "r=[x for x in d if x[\"status\"]==\"R\"]; "
	   "assert {x[\"old_path\"] for x in r} == {\"torename.txt\", \"tomove.txt\", \"empty-gone\"}, r; "
	   "assert all(\"old_path\" not in x for x in d if x[\"status\"]!=\"R\"); "
	   "assert {\"path\":\"becomes-link\",\"status\":\"T\"} in d' '%s'",
	   json);
	worktree_file_changes_release(&fc);
	sl_err_clear(&err);
	assert_int_equal(worktree_diff_write(repo, "HEAD", head, patch, json, NULL, &err),
			 SL_EINVALID);
}

/* In memory: the same bytes as git, cut at the buffer's maximum, the full size counted. */
static void test_patch_in_memory(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	struct sl_buf b = SL_BUF_INIT, want = SL_BUF_INIT;
	char expected[PATH_MAX * 2];
	size_t total = 1;

	snprintf(expected, sizeof(expected), "%s/expected.patch", tmp);
	sh("cd '%s' && git diff --binary --full-index -M %s %s >'%s'", repo, base, head, expected);
	assert_int_equal(sl_read_file(&want, expected, 0, &err), 0);
	assert_int_equal(worktree_diff_patch_mem(repo, base, head, &b, &total, &err), 0);
	assert_int_equal(total, want.len);
	assert_int_equal(b.len, want.len);
	assert_memory_equal(b.ptr, want.ptr, want.len);
	sl_buf_release(&b);
	sl_buf_init(&b, 100);
	assert_int_equal(worktree_diff_patch_mem(repo, base, head, &b, &total, &err), 0);
	assert_int_equal(total, want.len);
	assert_int_equal(b.len, 100);
	assert_memory_equal(b.ptr, want.ptr, 100);
	assert_int_equal(worktree_diff_patch_mem(repo, "HEAD", head, &b, &total, &err), SL_EINVALID);
	assert_int_equal(b.len, 0);
	assert_int_equal(total, 0);
	sl_buf_release(&b);
	sl_buf_release(&want);
}

/* A name that is not UTF-8: JSON still, with git's quoting of the exact bytes beside it. */
static void test_files_json_not_utf8(void **state)
{
	char n1[] = "caf\xe9.txt", n2[] = "ok\tname \"q\"\\.txt", o2[] = "old\xff\x01\x7f";
	char n3[] = "\xc3\xa9t\xc3\xa9.txt";
	struct worktree_file_change v[] = { { 'A', n1, NULL }, { 'R', n2, o2 }, { 'M', n3, NULL } };
	struct worktree_file_changes fc = { v, 3 };
	json_t *j = worktree_file_changes_to_json(&fc), *o;
	char *text = worktree_file_changes_json(&fc);

	assert_non_null(j);
	assert_non_null(text);
	o = json_array_get(j, 0);
	assert_string_equal(json_string_value(json_object_get(o, "path")), "caf\xef\xbf\xbd.txt");
	assert_string_equal(json_string_value(json_object_get(o, "path_quoted")), "caf\\351.txt");
	o = json_array_get(j, 1);
	assert_string_equal(json_string_value(json_object_get(o, "path")), "ok\tname \"q\"\\.txt");
	assert_null(json_object_get(o, "path_quoted"));
	assert_string_equal(json_string_value(json_object_get(o, "old_path")),
			    "old\xef\xbf\xbd\x01\x7f");
	assert_string_equal(json_string_value(json_object_get(o, "old_path_quoted")),
			    "old\\377\\001\\177");
	o = json_array_get(j, 2);
	assert_string_equal(json_string_value(json_object_get(o, "path")), "\xc3\xa9t\xc3\xa9.txt");
	assert_null(json_object_get(o, "path_quoted"));
	json_decref(j);
	free(text);
}

/* git itself prints the quoted name that path_quoted holds. */
static void test_files_json_quoting_is_gits(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	struct worktree_file_changes fc = WORKTREE_FILE_CHANGES_INIT;
	json_t *j;
	char *text, path[PATH_MAX * 2];
	FILE *f;

	sh("cd '%s' && printf x >\"$(printf 'caf\\351 \\033[1m\\\\.txt')\" && git add -A && "
	   "git commit -qm latin1", repo);
	snprintf(head, sizeof(head), "%s", sh_line("git -C '%s' rev-parse HEAD", repo));
	snprintf(base, sizeof(base), "%s", sh_line("git -C '%s' rev-parse HEAD~1", repo));
	assert_int_equal(worktree_diff_files(repo, base, head, &fc, &err), 0);
	assert_int_equal(fc.n, 1);
	assert_non_null(j = worktree_file_changes_to_json(&fc));
	text = (char *)json_string_value(json_object_get(json_array_get(j, 0), "path_quoted"));
	assert_non_null(text);
	snprintf(path, sizeof(path), "%s/quoted.txt", tmp);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "\"%s\"\n", text);
	fclose(f);
	sh("cd '%s' && git -c core.quotePath=true diff --name-only %s %s | cmp - '%s'", repo, base,
	   head, path);
	json_decref(j);
	worktree_file_changes_release(&fc);
}

static void test_diff_stat(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	json_t *j = NULL, *f;
	size_t i;
	long long adds = 0, dels = 0;

	assert_int_equal(worktree_diff_stat(repo, base, head, &j, &err), 0);
	assert_int_equal(json_integer_value(json_object_get(j, "files_changed")), 14);
	json_array_foreach(json_object_get(j, "files"), i, f) {
		const char *p = json_string_value(json_object_get(f, "path"));
		if (!strcmp(p, "long.txt")) {
			assert_int_equal(json_integer_value(json_object_get(f, "insertions")), 2);
			assert_int_equal(json_integer_value(json_object_get(f, "deletions")), 2);
		}
		if (!strcmp(p, "bin.dat"))
			assert_true(json_is_true(json_object_get(f, "binary")));
		adds += json_integer_value(json_object_get(f, "insertions"));
		dels += json_integer_value(json_object_get(f, "deletions"));
	}
	assert_int_equal(json_integer_value(json_object_get(j, "insertions")), adds);
	assert_int_equal(json_integer_value(json_object_get(j, "deletions")), dels);
	/* git's own totals agree */
	sh("cd '%s' && git diff --shortstat -M %s %s | grep -q '%lld insertions(+), %lld deletions(-)'",
	   repo, base, head, adds, dels);
	json_decref(j);
	assert_int_equal(worktree_diff_stat(repo, base, "0123", &j, &err), SL_EINVALID);
	assert_null(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_patch_is_git_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_patch_ignores_config, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_match_git, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_both, setup, teardown),
		cmocka_unit_test_setup_teardown(test_patch_in_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_json_not_utf8, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_json_quoting_is_gits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_diff_stat, setup, teardown),
	};
	int rc;

	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
