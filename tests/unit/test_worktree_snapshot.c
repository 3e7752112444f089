/* Snapshot commits, the checks before them, and worktree reset. */
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
#include <unistd.h>

#include "core/fs.h"
#include "worktree/worktree_int.h"
#include "test_helpers.h"

static char tmp[PATH_MAX], repo[PATH_MAX + 16], base[64];
static char *wt;
static const char *excl[] = { "node_modules", "conf/local.yaml", NULL };

static int setup(void **state)
{
	struct sl_err err = SL_ERR_INIT;

	if (test_git_tmpdir(tmp, repo, sizeof(repo), "/tmp/sluice-snap.XXXXXX"))
		return -1;
	worktree__git_status_above = 0; /* git's status, as on a large tree; tests say otherwise */
	sh("git init -q -b main '%s' && cd '%s' && mkdir -p src conf node_modules && "
	   "echo a >src/a.c && echo b >src/b.c && echo keep >conf/c.yaml && "
	   "echo '*.log' >.gitignore && echo m >node_modules/m.js && "
	   "git add src conf .gitignore && git commit -qm base && git commit -q --allow-empty "
	   "-m second && echo local >conf/local.yaml",
	   repo, repo);
	snprintf(base, sizeof(base), "%s", sh_all("git -C '%s' rev-parse main", repo));
	if (worktree_create(repo, "S1", "run/WO-1", base, &wt, NULL, &err) < 0 ||
	    worktree_share(repo, wt, excl, NULL, &err) < 0 ||
	    worktree_copy(repo, wt, excl + 1, NULL, &err) < 0) {
		fprintf(stderr, "setup: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	sh("chmod -R u+w '%s'; rm -rf '%s'", tmp, tmp);
	free(wt);
	wt = NULL;
	return 0;
}

static void test_snapshot_commits_everything_but_excluded(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	struct worktree_changes ch = WORKTREE_CHANGES_INIT;
	char head[41];
	int committed = -1;

	sh("cd '%s' && echo changed >src/a.c && rm src/b.c && mkdir -p new/deep && "
	   "echo n >new/deep/n.txt && echo staged >s.txt && git add s.txt && echo l >x.log && "
	   "echo changed >conf/local.yaml",
	   wt);
	assert_int_equal(worktree_changes(wt, excl, &ch, &err), 0);
	assert_int_equal(ch.count, 4);
	assert_int_equal(ch.all, 6); /* and the excluded conf/local.yaml and node_modules */
	assert_string_equal(ch.first, "s.txt");
	worktree_changes_release(&ch);
	worktree__git_status_above = (size_t)-1; /* a small tree: libgit2's status, the same counts */
	assert_int_equal(worktree_changes(wt, excl, &ch, &err), 0);
	assert_int_equal(ch.count, 4);
	assert_int_equal(ch.all, 6);
	worktree_changes_release(&ch);
	worktree__git_status_above = 0;
	assert_int_equal(worktree_snapshot(wt, "run/WO-1", base, excl, "sluice snapshot: S1 attempt 1", NULL,
					 head, &committed, &err), 0);
	assert_int_equal(committed, 1);
	assert_string_equal(head, sh_all("git -C '%s' rev-parse run/WO-1", repo));
	assert_string_equal(sh_all("git -C '%s' log -1 --format='%%an <%%ae>|%%s|%%P' run/WO-1", repo),
			    sh_all("echo 'sluice <sluice@localhost>|sluice snapshot: S1 attempt 1|%s'",
				   base));
	assert_string_equal(sh_all("git -C '%s' diff --name-status %s run/WO-1", repo, base),
			    "A\tnew/deep/n.txt\nA\ts.txt\nM\tsrc/a.c\nD\tsrc/b.c");
	/* ignored and excluded stay out; the worktree is clean afterwards */
	assert_string_equal(sh_all("git -C '%s' status --porcelain", wt),
			    "?? conf/local.yaml\n?? node_modules");
	assert_int_equal(worktree_changes(wt, excl, &ch, &err), 0);
	assert_int_equal(ch.count, 0);
	assert_int_equal(ch.all, 2);
	assert_null(ch.first);
}

/*
 * worktree_snapshot_unchanged() says "nothing to commit" exactly when a
 * snapshot would commit nothing, and when it cannot be sure says no.
 */
static void test_unchanged_only_when_a_snapshot_commits_nothing(void **state)
{
	static const char *const change[] = {
		"echo more >>src/a.c",                          /* modified */
		"echo u >untracked.txt",                        /* untracked */
		"echo s >staged.txt && git add staged.txt && rm staged.txt", /* staged, then gone */
		"git update-index --skip-worktree src/a.c",     /* a bit that hides changes */
		"git -c core.fileMode=false config core.fileMode false", /* status blind to modes */
		"git init -q nested && echo n >nested/n",       /* a repository of its own */
		NULL,
	};
	struct sl_err err = SL_ERR_INIT;
	char head[41], tip[41];
	int committed = -1, i;

	sh("cd '%s' && echo changed >src/a.c", wt);
	assert_int_equal(worktree_snapshot(wt, "run/WO-1", base, excl, "m", NULL, head, &committed,
					 &err), 0);
	assert_true(worktree_snapshot_unchanged(wt, "run/WO-1", head, excl));
	/* the excluded paths do not count: a snapshot leaves them out */
	sh("cd '%s' && echo other >conf/local.yaml", wt);
	assert_true(worktree_snapshot_unchanged(wt, "run/WO-1", head, excl));
	assert_false(worktree_snapshot_unchanged(wt, "run/WO-1", head, NULL));
	/* another head, another branch */
	assert_false(worktree_snapshot_unchanged(wt, "run/WO-1", base, excl));
	assert_false(worktree_snapshot_unchanged(wt, "run/WO-2", head, excl));
	for (i = 0; change[i]; i++) {
		sh("cd '%s' && git reset -q --hard && git clean -fdq -e conf -e node_modules && "
		   "git config --unset core.fileMode; git update-index --no-skip-worktree src/a.c && "
		   "%s", wt, change[i]);
		assert_false(worktree_snapshot_unchanged(wt, "run/WO-1", head, excl));
	}
	/* and a snapshot after the first change does commit */
	sh("cd '%s' && git update-index --no-skip-worktree src/a.c && git config --unset "
	   "core.fileMode; rm -rf nested && echo more >>src/a.c", wt);
	assert_int_equal(worktree_snapshot(wt, "run/WO-1", base, excl, "m", NULL, tip, &committed,
					 &err), 0);
	assert_int_equal(committed, 1);
	assert_true(worktree_snapshot_unchanged(wt, "run/WO-1", tip, excl));
}

/*
 * Every kind of change a builder makes is committed, whether the snapshot
 * stages what git status lists (a plain index) or adds all (an index with a
 * skip-worktree bit elsewhere): afterwards status shows only the excluded
 * and ignored paths, and both ways commit the same tree.
 */
static void test_snapshot_every_kind_of_change(void **state)
{
	static const char *const changes =
		"echo changed >src/a.c && rm src/b.c && mkdir -p deep/er && echo d >deep/er/d.txt && "
		"ln -s src/a.c link && chmod +x conf/c.yaml && echo sp >'with space.txt' && "
		"mkdir b.dir && echo x >b.dir/x && echo l >x.log && echo t >conf/local.yaml";
	struct sl_err err = SL_ERR_INIT;
	char head[41], tree[64];
	int committed = -1;

	sh("cd '%s' && %s", wt, changes);
	assert_int_equal(worktree_snapshot(wt, "run/WO-1", base, excl, "m", NULL, head, &committed,
					 &err), 0);
	assert_int_equal(committed, 1);
	assert_string_equal(sh_all("git -C '%s' status --porcelain --untracked-files=all", wt),
			    "?? conf/local.yaml\n?? node_modules");
	snprintf(tree, sizeof(tree), "%s", sh_all("git -C '%s' rev-parse %s^{tree}", repo, head));
	assert_string_equal(sh_all("git -C '%s' diff --name-status %s %s", repo, base, head),
			    "A\tb.dir/x\nM\tconf/c.yaml\nA\tdeep/er/d.txt\nA\tlink\nM\tsrc/a.c\n"
			    "D\tsrc/b.c\nA\twith space.txt");

	/* again from the base as a small tree: libgit2's status and add-all, the same tree */
	sh("cd '%s' && git reset -q --hard %s && git clean -fdq -e conf/local.yaml -e node_modules && "
	   "%s", wt, base, changes);
	worktree__git_status_above = (size_t)-1;
	assert_false(worktree_snapshot_unchanged(wt, "run/WO-1", base, excl));
	assert_int_equal(worktree_snapshot(wt, "run/WO-1", base, excl, "m", NULL, head, &committed,
					 &err), 0);
	assert_string_equal(sh_all("git -C '%s' rev-parse %s^{tree}", repo, head), tree);
	assert_false(worktree_snapshot_unchanged(wt, "run/WO-1", head, excl)); /* small: no */
	worktree__git_status_above = 0;
	assert_true(worktree_snapshot_unchanged(wt, "run/WO-1", head, excl));

	/* again from the base with a skip-worktree bit on a file nobody touches: add-all */
	sh("cd '%s' && git reset -q --hard %s && git clean -fdq -e conf/local.yaml -e node_modules && "
	   "git update-index --skip-worktree .gitignore && %s", wt, base, changes);
	assert_int_equal(worktree_snapshot(wt, "run/WO-1", base, excl, "m", NULL, head, &committed,
					 &err), 0);
	assert_int_equal(committed, 1);
	assert_string_equal(sh_all("git -C '%s' rev-parse %s^{tree}", repo, head), tree);
}

static void test_embedded_repository_left_out(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char head[41];
	int committed = -1;

	sh("cd '%s' && git init -q sub && echo s >sub/s && echo t >top.txt", wt);
	assert_int_equal(worktree_snapshot(wt, "run/WO-1", base, excl, "m", NULL, head, &committed, &err),
			 0);
	assert_int_equal(committed, 1);
	assert_string_equal(sh_all("git -C '%s' diff --name-status %s run/WO-1", repo, base),
			    "A\ttop.txt");
}

/* Files with a filter driver go through git's clean filter (libgit2 runs none). */
static void test_filtered_files_cleaned(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char head[41];
	int committed = -1;

	sh("printf '%%s\\n' '#!/bin/sh' 'sed -e \"s/^SMUDGED //\"' >'%s/clean.sh' && "
	   "git -C '%s' config filter.fake.clean \"sh '%s/clean.sh'\" && "
	   "git -C '%s' config filter.fake.required true && "
	   "echo '*.dat filter=fake' >'%s/.git/info/attributes'",
	   tmp, repo, tmp, repo, repo);
	sh("cd '%s' && echo 'SMUDGED new' >n.dat && echo plain >p.txt && "
	   "echo 'SMUDGED m' >node_modules/x.dat",
	   wt);
	assert_int_equal(worktree_snapshot(wt, "run/WO-1", base, excl, "m", NULL, head, &committed, &err),
			 0);
	assert_int_equal(committed, 1);
	assert_string_equal(sh_all("git -C '%s' show run/WO-1:n.dat", repo), "new");
	assert_string_equal(sh_all("git -C '%s' diff --name-status %s run/WO-1", repo, base),
			    "A\tn.dat\nA\tp.txt");
	/* the index matches: nothing left to snapshot */
	assert_string_equal(sh_all("git -C '%s' status --porcelain", wt),
			    "?? conf/local.yaml\n?? node_modules");
}

static void test_nothing_changed(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char head[41];
	int committed = -1;

	assert_int_equal(worktree_snapshot(wt, "run/WO-1", base, excl, "m", NULL, head, &committed, &err),
			 SL_ENOTFOUND);
	assert_non_null(strstr(err.msg, "the builder changed nothing"));
	assert_string_equal(head, base);
	assert_int_equal(committed, 0);
}

static void test_builder_commits_kept(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char head[41], tip[64];
	int committed = -1;

	sh("cd '%s' && echo x >>src/a.c && git commit -qam 'builder commit'", wt);
	snprintf(tip, sizeof(tip), "%s", sh_all("git -C '%s' rev-parse HEAD", wt));
	assert_int_equal(worktree_snapshot(wt, "run/WO-1", base, excl, "m", NULL, head, &committed, &err),
			 0);
	assert_int_equal(committed, 0);
	assert_string_equal(head, tip);
}

static void expect_refused(const char *what)
{
	struct sl_err err = SL_ERR_INIT;
	char head[41];

	assert_int_equal(worktree_snapshot(wt, "run/WO-1", base, excl, "m", NULL, head, NULL, &err),
			 SL_ECONFLICT);
	if (!strstr(err.msg, what))
		fail_msg("'%s' not in '%s'", what, err.msg);
}

static void test_other_branch_refused(void **state)
{
	sh("cd '%s' && git checkout -q -b other && echo x >>src/a.c", wt);
	expect_refused("was switched to");
	assert_string_equal(sh_all("git -C '%s' rev-parse run/WO-1", repo), base);
}

static void test_detached_refused(void **state)
{
	sh("cd '%s' && git checkout -q --detach", wt);
	expect_refused("HEAD was detached");
}

static void test_reset_below_base_refused(void **state)
{
	sh("cd '%s' && git reset -q --hard HEAD~1 && echo x >>src/a.c", wt);
	expect_refused("no longer descends from its base");
}

static void test_deleted_dotgit_refused(void **state)
{
	sh("rm '%s/.git'", wt);
	expect_refused(".git file");
	/* and the main repository was not snapshotted instead */
	assert_string_equal(sh_all("git -C '%s' rev-parse main", repo), base);
}

static void test_reset(void **state)
{
	struct sl_err err = SL_ERR_INIT;

	sh("cd '%s' && echo x >>src/a.c && git commit -qam c1 && echo y >src/b.c && "
	   "mkdir -p u/v && echo u >u/v/w.txt && echo u >top.txt && echo l >keep.log && "
	   "echo changed >conf/local.yaml",
	   wt);
	assert_int_equal(worktree_reset(wt, base, excl, &err), 0);
	assert_string_equal(sh_all("git -C '%s' rev-parse run/WO-1", repo), base);
	assert_string_equal(sh_all("git -C '%s' status --porcelain --ignored", wt),
			    "?? conf/local.yaml\n?? node_modules\n!! keep.log");
	assert_false(sl_path_exists(sh_all("echo '%s/u'", wt)));
	assert_string_equal(sh_all("cat '%s/conf/local.yaml'", wt), "changed");
	assert_string_equal(sh_all("cat '%s/src/a.c'", wt), "a");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_snapshot_commits_everything_but_excluded, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unchanged_only_when_a_snapshot_commits_nothing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_every_kind_of_change, setup, teardown),
		cmocka_unit_test_setup_teardown(test_embedded_repository_left_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_filtered_files_cleaned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_changed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_builder_commits_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_branch_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_detached_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset_below_base_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deleted_dotgit_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset, setup, teardown),
	};
	int rc;

	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
