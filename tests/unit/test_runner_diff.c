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
#include "runner/diff.h"
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
	assert_int_equal(runner_diff_patch(repo, base, head, patch, &err), 0);
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
	assert_int_equal(runner_diff_patch(repo, base, head, patch, &err), 0);
	unsetenv("GIT_EXTERNAL_DIFF");
	unsetenv("GIT_DIFF_OPTS");
	sh("cmp '%s/expected.patch' '%s'", tmp, patch);
}

static void test_files_match_git(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	struct runner_file_changes fc = RUNNER_FILE_CHANGES_INIT;
	char mine[PATH_MAX * 2];
	FILE *f;
	size_t i;

	assert_int_equal(runner_diff_files(repo, base, head, &fc, &err), 0);
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
	runner_file_changes_release(&fc);
}

static void test_write_both(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	struct runner_file_changes fc = RUNNER_FILE_CHANGES_INIT;
	char patch[PATH_MAX * 2], json[PATH_MAX * 2];

	snprintf(patch, sizeof(patch), "%s/diff.patch", tmp);
	snprintf(json, sizeof(json), "%s/files_changed.json", tmp);
	assert_int_equal(runner_diff_write(repo, base, head, patch, json, &fc, &err), 0);
	assert_int_equal(fc.n, 14);
	sh("python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
	   "assert [x[\"path\"] for x in d] == sorted(x[\"path\"] for x in d); "
	   "r=[x for x in d if x[\"status\"]==\"R\"]; "
	   "assert {x[\"old_path\"] for x in r} == {\"torename.txt\", \"tomove.txt\", \"empty-gone\"}, r; "
	   "assert all(\"old_path\" not in x for x in d if x[\"status\"]!=\"R\"); "
	   "assert {\"path\":\"becomes-link\",\"status\":\"T\"} in d' '%s'",
	   json);
	runner_file_changes_release(&fc);
	sl_err_clear(&err);
	assert_int_equal(runner_diff_write(repo, "HEAD", head, patch, json, NULL, &err),
			 SL_EINVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_patch_is_git_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_patch_ignores_config, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_match_git, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_both, setup, teardown),
	};
	int rc;

	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
