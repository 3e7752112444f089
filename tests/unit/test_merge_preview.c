/*
 * merge_preview (git merge-tree as the authority, libgit2 apart), merge_conflict_info and the
 * resolution helpers, against real repositories built with the git CLI.
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
#include "core/proc.h"
#include "merge/merge_int.h"
#include "test_helpers.h"

static char tmp[256];

static int setup(void **state)
{
	if (test_home_tmpdir(tmp, sizeof(tmp), "/tmp/sl-merge-XXXXXX"))
		return -1;
	/* base: a.txt (5 lines), b.txt; branches main (ours) and run (theirs) */
	return sh_in(tmp, "git init -q -b main r && cd r && printf '1\\n2\\n3\\n4\\n5\\n' >a.txt && "
		         "echo b >b.txt && git add . && git commit -qm base && git branch run");
}

static int teardown(void **state)
{
	struct sl_err err = SL_ERR_INIT;

	return sl_rm_rf(tmp, &err);
}

static void repo_path(char *out, size_t n)
{
	snprintf(out, n, "%s/r", tmp);
}

/* Preview main <- run (with libgit2's second opinion when asked). */
static void preview(struct merge_result *res, int libgit2)
{
	struct merge_opts o = MERGE_OPTS_INIT;
	struct sl_err err = SL_ERR_INIT;
	char r[PATH_MAX];
	int rc;

	o.libgit2_opinion = libgit2;
	repo_path(r, sizeof(r));
	rc = merge_preview(r, "main", "run", &o, res, &err);
	if (rc)
		print_message("merge_preview: %s\n", err.msg);
	assert_int_equal(rc, 0);
}

static void test_different_files_clean(void **state)
{
	struct merge_result res = MERGE_RESULT_INIT;
	char hex[GIT_OID_HEXSZ + 1];

	assert_int_equal(sh_in(tmp, "cd r && echo c >c.txt && git add c.txt && git commit -qm c && "
			           "git checkout -q run && echo d >d.txt && git add d.txt && "
			           "git commit -qm d && git checkout -q main"), 0);
	preview(&res, 1);
	assert_true(res.clean);
	assert_int_equal(res.conflicts.n, 0);
	assert_string_equal(res.reason, "");
	git_oid_tostr(hex, sizeof(hex), &res.tree);
	assert_string_equal(hex, sh_line_in(tmp, "cd r && git merge-tree --write-tree main run"));
	merge_result_release(&res);
}

static void test_same_file_other_lines_clean(void **state)
{
	struct merge_result res = MERGE_RESULT_INIT;
	char hex[GIT_OID_HEXSZ + 1];

	assert_int_equal(sh_in(tmp, "cd r && sed -i 1s/1/one/ a.txt && git commit -qam one && "
			           "git checkout -q run && sed -i 5s/5/five/ a.txt && git commit -qam five"),
			 0);
	preview(&res, 1);
	assert_true(res.clean);
	git_oid_tostr(hex, sizeof(hex), &res.tree);
	assert_string_equal(hex, sh_line_in(tmp, "cd r && git merge-tree --write-tree main run"));
	merge_result_release(&res);
}

static void same_lines(void)
{
	assert_int_equal(sh_in(tmp, "cd r && sed -i 3s/3/ours/ a.txt && git commit -qam ours && "
			           "git checkout -q run && sed -i 3s/3/theirs/ a.txt && "
			           "git commit -qam theirs && git checkout -q main"), 0);
}

static void test_same_lines_conflict(void **state)
{
	struct merge_result res = MERGE_RESULT_INIT;

	same_lines();
	preview(&res, 0);
	assert_false(res.clean);
	assert_int_equal(res.lg_clean, -1); /* not asked */
	assert_int_equal(res.conflicts.n, 1);
	assert_string_equal(res.conflicts.v[0], "a.txt");
	/* git's tree (its markers name the commit ids it was given) */
	assert_string_equal(git_oid_tostr_s(&res.tree),
			    sh_line_in(tmp, "cd r && git merge-tree --write-tree $(git rev-parse main) "
					    "$(git rev-parse run) | head -n 1"));
	assert_int_equal(sh_in(tmp, "cd r && git cat-file -p $(git merge-tree --write-tree main run "
			           "| head -n 1):a.txt | grep -q '^<<<<<<< main$'"), 0);
	assert_non_null(strstr(res.reason, "conflicting changes in 1 path"));
	assert_non_null(strstr(sl_buf_cstr(&res.git_messages), "CONFLICT (content)"));
	merge_result_release(&res);
}

static void test_conflict_info_markers(void **state)
{
	struct merge_conflict_info info = MERGE_CONFLICT_INFO_INIT;
	struct sl_err err = SL_ERR_INIT;
	const char *out;
	char r[PATH_MAX];

	same_lines();
	repo_path(r, sizeof(r));
	assert_int_equal(merge_conflict_info(r, "main", "run", "main", "run/WO-1-abcd", NULL,
					     &info, &err), 0);
	out = sl_buf_cstr(&info.output);
	assert_int_equal(info.paths.n, 1);
	assert_non_null(strstr(out, "--- a.txt: content conflict\n"));
	assert_non_null(strstr(out, "<<<<<<< main\nours\n=======\ntheirs\n>>>>>>> run/WO-1-abcd\n"));
	assert_non_null(strstr(out, "--- git merge-tree:\nCONFLICT (content)"));
	assert_false(info.truncated);
	merge_conflict_info_release(&info);
}

static void test_conflict_info_modify_delete_and_binary(void **state)
{
	struct merge_conflict_info info = MERGE_CONFLICT_INFO_INIT;
	struct sl_err err = SL_ERR_INIT;
	const char *out;
	char r[PATH_MAX];

	assert_int_equal(sh_in(tmp, "cd r && printf 'x\\0a' >bin && git add bin && git commit -qm bin && "
			           "git branch -f run && echo more >>b.txt && printf 'x\\0b' >bin && "
			           "git commit -qam ours && git checkout -q run && git rm -q b.txt && "
			           "printf 'x\\0c' >bin && git commit -qam theirs && git checkout -q main"),
			 0);
	repo_path(r, sizeof(r));
	assert_int_equal(merge_conflict_info(r, "main", "run", NULL, NULL, NULL, &info, &err), 0);
	out = sl_buf_cstr(&info.output);
	assert_non_null(strstr(out, "--- b.txt: modified in main, deleted or renamed in run\n"));
	assert_non_null(strstr(out, "--- bin: binary file changed in main and in run\n"));
	assert_null(strstr(out, "<<<<<<<"));
	/* git's messages name the commits by the labels, not by the ids git was given */
	assert_non_null(strstr(out, "CONFLICT (modify/delete): b.txt deleted in run and modified in "
				    "main.  Version main of b.txt left in tree.\n"));
	assert_null(strstr(out, sh_line_in(tmp, "cd r && git rev-parse main")));
	merge_conflict_info_release(&info);
}

/*
 * libgit2 1.5 has no directory-rename detection: git says conflict, libgit2
 * clean. git's verdict is the result; libgit2's is only reported beside it.
 */
static void test_directory_rename_is_conflict(void **state)
{
	struct merge_result res = MERGE_RESULT_INIT;

	assert_int_equal(sh_in(tmp, "cd r && mkdir dir && echo x >dir/x.txt && echo y >dir/y.txt && "
			           "git add dir && git commit -qm dir && git branch -f run && "
			           "git mv dir newdir && git commit -qm mv && git checkout -q run && "
			           "echo e >dir/e.txt && git add dir/e.txt && git commit -qm e && "
			           "git checkout -q main"), 0);
	preview(&res, 1);
	assert_false(res.clean);
	assert_true(res.lg_clean); /* libgit2 alone is fooled, and changes nothing */
	assert_int_equal(res.lg_conflicts.n, 0);
	assert_int_equal(res.conflicts.n, 1);
	assert_string_equal(res.conflicts.v[0], "newdir/e.txt");
	assert_non_null(strstr(res.reason, "conflicting changes in 1 path"));
	merge_result_release(&res);
}

/*
 * The example: src/ moved to src/libgit2/ on one side, the moved
 * files edited on the other (one of them on the same line as the move's own
 * edit), and a plain conflict. libgit2 names the conflicted moved file under
 * its old path too (src/s.c, in neither tip); the result is git's list:
 * only paths of git's tree.
 */
static void dir_move_history(void)
{
	assert_int_equal(sh_in(tmp, "cd r && mkdir src && printf 's1\\ns2\\ns3\\ns4\\n' >src/s.c && "
			           "printf 't1\\nt2\\nt3\\nt4\\n' >src/t.c && git add src && "
			           "git commit -qm src && git branch -f run && mkdir src/libgit2 && "
			           "git mv src/s.c src/t.c src/libgit2/ && sed -i 2s/s2/moved/ "
			           "src/libgit2/s.c && sed -i 3s/3/ours/ a.txt && git commit -qam mv && "
			           "git checkout -q run && sed -i 2s/s2/edited/ src/s.c && "
			           "sed -i 4s/t4/edited/ src/t.c && sed -i 3s/3/theirs/ a.txt && "
			           "git commit -qam edit && git checkout -q main"), 0);
}

static void test_moved_dir_conflicts_are_gits(void **state)
{
	struct merge_result res = MERGE_RESULT_INIT;
	const char *want;

	dir_move_history();
	preview(&res, 1);
	assert_false(res.clean);
	assert_int_equal(res.conflicts.n, 2);
	assert_string_equal(res.conflicts.v[0], "a.txt");
	assert_string_equal(res.conflicts.v[1], "src/libgit2/s.c");
	want = sh_line_in(tmp, "cd r && git merge-tree --write-tree "
						      "--name-only main run | sed -n 2,3p | "
						      "tr '\\n' ' '");
	assert_string_equal(want, "a.txt src/libgit2/s.c ");
	/* libgit2's opinion names the old path, apart */
	assert_false(res.lg_clean);
	assert_true(merge_paths_has(&res.lg_conflicts, "src/s.c"));
	merge_result_release(&res);
}

static void test_conflict_info_moved_dir(void **state)
{
	struct merge_conflict_info info = MERGE_CONFLICT_INFO_INIT;
	struct sl_err err = SL_ERR_INIT;
	const char *out;
	char r[PATH_MAX];

	dir_move_history();
	repo_path(r, sizeof(r));
	assert_int_equal(merge_conflict_info(r, "main", "run", "main", "run/WO-1", NULL, &info,
					     &err), 0);
	out = sl_buf_cstr(&info.output);
	assert_int_equal(info.paths.n, 2);
	assert_string_equal(info.paths.v[1], "src/libgit2/s.c");
	assert_non_null(strstr(out, "--- src/libgit2/s.c: content conflict\n"));
	assert_non_null(strstr(out, "<<<<<<< main:src/libgit2/s.c\nmoved\n=======\nedited\n"
				    ">>>>>>> run/WO-1:src/s.c\n"));
	assert_null(strstr(out, "--- src/s.c"));
	/* the moved file edited elsewhere merged cleanly: not in the output */
	assert_null(strstr(out, "t.c"));
	merge_conflict_info_release(&info);
}

/* The empty-file exact-rename bug (libgit2 PR #6717). */
static void test_empty_file_rename_is_conflict(void **state)
{
	struct merge_result res = MERGE_RESULT_INIT;

	assert_int_equal(sh_in(tmp, "cd r && : >bar.c && git add bar.c && git commit -qm bar && "
			           "git branch -f run && git mv bar.c boo.c && git commit -qm mv && "
			           "git checkout -q run && echo content >bar.c && git commit -qam edit && "
			           "git checkout -q main"), 0);
	preview(&res, 1);
	assert_false(res.clean);
	assert_true(merge_paths_has(&res.conflicts, "bar.c"));
	merge_result_release(&res);
}

/* Odd names come back byte for byte as git names them: a line break, a byte that is not UTF-8. */
static void test_odd_names_are_gits_bytes(void **state)
{
	struct merge_result res = MERGE_RESULT_INIT;

	assert_int_equal(sh_in(tmp, "cd r && nl=$(printf 'new\\nline.txt') && "
			           "l1=$(printf 'caf\\351.txt') && echo base >\"$nl\" && echo base >\"$l1\" && "
			           "git add . && git commit -qm odd && git branch -f run && "
			           "echo ours >\"$nl\" && echo ours >\"$l1\" && git commit -qam ours && "
			           "git checkout -q run && echo theirs >\"$nl\" && echo theirs >\"$l1\" && "
			           "git commit -qam theirs && git checkout -q main"), 0);
	preview(&res, 0);
	assert_false(res.clean);
	assert_int_equal(res.conflicts.n, 2);
	assert_string_equal(res.conflicts.v[0], "caf\351.txt");
	assert_string_equal(res.conflicts.v[1], "new\nline.txt");
	/* git's own list, NUL-separated, as bytes: "<tree>\0caf\351.txt\0new\nline.txt\0\0..." */
	assert_int_equal(sh_in(tmp, "cd r && git merge-tree --write-tree --name-only -z main run "
			           "| tr '\\0' '/' | grep -q \"^[0-9a-f]*/$(printf 'caf\\351.txt')/new\"; "
			           "test $? = 0"), 0);
	merge_result_release(&res);
}

static void test_rejects_option_like_revisions(void **state)
{
	struct merge_result res = MERGE_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char r[PATH_MAX];

	repo_path(r, sizeof(r));
	assert_int_equal(merge_preview(r, "--output=/tmp/x", "run", NULL, &res, &err), SL_EINVALID);
	assert_non_null(strstr(err.msg, "invalid revision '--output=/tmp/x'"));
	merge_result_release(&res);
	sl_err_clear(&err);
	memset(&res, 0, sizeof(res));
	assert_int_equal(merge_preview(r, "main", "nosuch", NULL, &res, &err), SL_EINVALID);
	assert_non_null(strstr(err.msg, "'nosuch' names no commit"));
	merge_result_release(&res);
}

static void test_parse_merge_tree(void **state)
{
	static const char out[] =
		"56d4c008fe788237dfd57c9f511d6e32c2c544a2\0a.txt\0b2.txt\0\0"
		"1\0a.txt\0Auto-merging\0Auto-merging a.txt\n\0"
		"1\0a.txt\0CONFLICT (contents)\0CONFLICT (content): Merge conflict in a.txt\n\0"
		"2\0b2.txt\0b.txt\0CONFLICT (rename/delete)\0CONFLICT (rename/delete): b.txt "
		"renamed\n\0";
	struct merge__git_tree t = { 0 };
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(merge__parse_merge_tree(out, sizeof(out) - 1, 0, &t, &err), 0);
	assert_int_equal(t.paths.n, 2);
	assert_string_equal(t.paths.v[0], "a.txt");
	assert_string_equal(t.paths.v[1], "b2.txt");
	assert_string_equal(sl_buf_cstr(&t.messages),
			    "CONFLICT (content): Merge conflict in a.txt\n"
			    "CONFLICT (rename/delete): b.txt renamed\n");
	merge__git_tree_release(&t);
	memset(&t, 0, sizeof(t));
	/* truncated in the middle of a message: an error, not a crash */
	assert_int_equal(merge__parse_merge_tree(out, 80, 0, &t, &err), SL_ERROR);
	merge__git_tree_release(&t);
	memset(&t, 0, sizeof(t));
	sl_err_clear(&err);
	assert_int_equal(merge__parse_merge_tree("bogus\0", 6, 1, &t, &err), SL_ERROR);
	merge__git_tree_release(&t);
}

static void test_resolution_in_worktree(void **state)
{
	const char *excluded[] = { "shared-deps", NULL };
	struct merge_paths conflicted = MERGE_PATHS_INIT;
	struct sl_err err = SL_ERR_INIT;
	char wt[PATH_MAX], tip[GIT_OID_HEXSZ + 1];
	git_oid head;

	same_lines();
	assert_int_equal(sh_in(tmp, "cd r && git worktree add -q ../wt run"), 0);
	snprintf(wt, sizeof(wt), "%s/wt", tmp);
	assert_true(snprintf(tip, sizeof(tip), "%s", sh_line_in(tmp, "cd r && git rev-parse main")) <
		    (int)sizeof(tip));
	assert_int_equal(merge_into_worktree(wt, "main", &conflicted, &err), SL_EINVALID);
	sl_err_clear(&err);
	assert_int_equal(merge_into_worktree(wt, tip, &conflicted, &err), 0);
	assert_int_equal(conflicted.n, 1);
	assert_string_equal(conflicted.v[0], "a.txt");
	assert_int_equal(sh_in(tmp, "grep -q '^<<<<<<< ' wt/a.txt"), 0);
	/* markers left: refused */
	assert_int_equal(merge_commit_resolution(wt, NULL, NULL, NULL, &conflicted, NULL, &head, &err),
			 SL_ECONFLICT);
	assert_non_null(strstr(err.msg, "'a.txt' still has a conflict marker at line 3"));
	sl_err_clear(&err);
	assert_int_equal(sh_in(tmp, "cd wt && printf '1\\n2\\nboth\\n4\\n5\\n' >a.txt"), 0);
	/* a shared path (worktree.share) is never committed by the resolution */
	assert_int_equal(sh_in(tmp, "cd wt && ln -s /tmp shared-deps"), 0);
	assert_int_equal(merge_commit_resolution(wt, "Resolve WO-1", NULL, NULL, &conflicted, excluded, &head,
						 &err), 0);
	assert_int_not_equal(sh_in(tmp, "cd wt && git ls-files --error-unmatch shared-deps 2>/dev/null"), 0);
	assert_string_equal(git_oid_tostr_s(&head), sh_line_in(tmp, "cd wt && git rev-parse HEAD"));
	assert_string_equal(tip, sh_line_in(tmp, "cd wt && git rev-parse HEAD^2"));
	assert_string_equal("Resolve WO-1", sh_line_in(tmp, "cd wt && git log -1 --format=%s"));
	assert_string_equal("sluice", sh_line_in(tmp, "cd wt && git log -1 --format=%cn"));
	merge_paths_release(&conflicted);
}

static void test_verify_markers(void **state)
{
	struct merge_paths p = MERGE_PATHS_INIT;
	struct sl_err err = SL_ERR_INIT;
	char r[PATH_MAX];

	repo_path(r, sizeof(r));
	assert_int_equal(merge_paths_add(&p, "doc.md"), 0);
	assert_int_equal(merge_paths_add(&p, "gone.txt"), 0);
	/* a Markdown underline is not a marker; a lone ======= line is */
	assert_int_equal(sh_in(tmp, "cd r && printf 'Title\\n=========\\n=== x\\n' >doc.md"), 0);
	assert_int_equal(merge_verify_resolved(r, &p, &err), 0);
	assert_int_equal(sh_in(tmp, "cd r && printf 'a\\n=======\\nb\\n' >doc.md"), 0);
	assert_int_equal(merge_verify_resolved(r, &p, &err), SL_ECONFLICT);
	assert_non_null(strstr(err.msg, "'doc.md' still has a conflict marker at line 2"));
	merge_paths_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_merge_tree),
		cmocka_unit_test_setup_teardown(test_different_files_clean, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_file_other_lines_clean, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_lines_conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflict_info_markers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflict_info_modify_delete_and_binary, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_directory_rename_is_conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_moved_dir_conflicts_are_gits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflict_info_moved_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_file_rename_is_conflict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_odd_names_are_gits_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rejects_option_like_revisions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resolution_in_worktree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_markers, setup, teardown),
	};

	return cmocka_run_group_tests(tests, test_git_group_setup, test_git_group_teardown);
}
