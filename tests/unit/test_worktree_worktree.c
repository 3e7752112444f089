/* Run worktrees against real repositories and the real git CLI. */
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
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/fs.h"
#include "worktree/worktree.h"
#include "test_helpers.h"

static char tmp[PATH_MAX], repo[PATH_MAX + 16];

static int setup(void **state)
{
	if (test_git_tmpdir(tmp, repo, sizeof(repo), "/tmp/sluice-wt.XXXXXX"))
		return -1;
	sh("git init -q -b main '%s' && cd '%s' && mkdir -p src && echo hello >src/a.c && "
	   "echo readme >README && echo '/ignored' >.gitignore && git add -A && "
	   "git commit -qm base && echo '/.system/' >>.git/info/exclude", repo, repo);
	return 0;
}

static int teardown(void **state)
{
	sh("chmod -R u+w '%s'; rm -rf '%s'", tmp, tmp);
	return 0;
}

static char *base_oid(void)
{
	static char oid[64];

	snprintf(oid, sizeof(oid), "%s", sh_line("git -C '%s' rev-parse main", repo));
	return oid;
}

/* A hash of everything a user sees in the main checkout. */
static char *main_state(void)
{
	static char h[128];

	snprintf(h, sizeof(h), "%s",
		 sh_line("cd '%s' && { git status --porcelain=v2 -z; git diff; git diff --cached; "
		         "git rev-parse HEAD; git symbolic-ref HEAD; "
		         "git ls-files -z --others --exclude-standard | xargs -0 -r sha256sum; "
		         "sha256sum .git/index; } | sha256sum",
		         repo));
	return h;
}

static void test_create_leaves_dirty_main_alone(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char *path = NULL, before[128], want[PATH_MAX * 2];
	int reused = -1;

	sh("cd '%s' && echo staged >src/a.c && git add src/a.c && echo unstaged >src/a.c && "
	   "echo new >untracked.txt && echo x >README",
	   repo);
	snprintf(before, sizeof(before), "%s", main_state());
	assert_int_equal(worktree_create(repo, "R1", "run/WO-1-abcdefgh", base_oid(), &path,
						&reused, &err), 0);
	snprintf(want, sizeof(want), "%s/.system/runs/R1/worktree", repo);
	assert_string_equal(path, want);
	assert_int_equal(reused, 0);
	assert_string_equal(main_state(), before);
	assert_string_equal(sh_line("cat '%s/src/a.c'", path), "hello");
	assert_string_equal(sh_line("git -C '%s' status --porcelain | wc -l", path), "0");
	assert_string_equal(sh_line("git -C '%s' symbolic-ref HEAD", path),
			    "refs/heads/run/WO-1-abcdefgh");
	assert_string_equal(sh_line("git -C '%s' rev-parse run/WO-1-abcdefgh", repo), base_oid());
	assert_true(sl_is_dir(sh_line("echo '%s/.git/worktrees/R1'", repo)));
	free(path);
}

/* The entry git keeps for a worktree: where its HEAD, gitdir and logs are. */
static void test_entry_path(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char *path = NULL, *p, gitdir[PATH_MAX], want[PATH_MAX + 8];
	int reused = -1;

	p = worktree_entry_path("/r/.git", "R9", NULL);
	assert_string_equal(p, "/r/.git/worktrees/R9");
	free(p);
	p = worktree_entry_path("/r/.git", "R9", "logs/HEAD");
	assert_string_equal(p, "/r/.git/worktrees/R9/logs/HEAD");
	free(p);
	assert_int_equal(worktree_create(repo, "R8", "run/WO-8-x", base_oid(), &path, &reused,
					 &err), 0);
	assert_true(snprintf(gitdir, sizeof(gitdir), "%s/.git", repo) < (int)sizeof(gitdir));
	p = worktree_entry_path(gitdir, "R8", "HEAD");
	assert_string_equal(sh_line("cat '%s'", p), "ref: refs/heads/run/WO-8-x");
	free(p);
	p = worktree_entry_path(gitdir, "R8", "gitdir");
	snprintf(want, sizeof(want), "%s/.git", path);
	assert_string_equal(sh_line("cat '%s'", p), want);
	free(p);
	p = worktree_entry_path(gitdir, "R8", NULL);
	assert_string_equal(sh_line("git -C '%s' rev-parse --git-dir", path), p);
	free(p);
	free(path);
}

static void test_create_is_idempotent(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char *path = NULL;
	int reused = -1;

	assert_int_equal(worktree_create(repo, "R2", "run/WO-2-x", base_oid(), &path,
						&reused, &err), 0);
	assert_int_equal(reused, 0);
	sh("echo work >'%s/new.txt'", path);
	free(path);
	assert_int_equal(worktree_create(repo, "R2", "run/WO-2-x", base_oid(), &path,
						&reused, &err), 0);
	assert_int_equal(reused, 1);
	assert_string_equal(sh_line("cat '%s/new.txt'", path), "work");
	/* the same run on another branch is refused */
	assert_int_equal(worktree_create(repo, "R2", "run/WO-2-y", base_oid(), NULL,
						&reused, &err), SL_EEXISTS);
	free(path);
}

static void test_failed_create_is_undone(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char *old = strdup(getenv("PATH")), base[64];
	int rc;

	/* git cannot be found: the add succeeds, filling the worktree fails */
	snprintf(base, sizeof(base), "%s", base_oid());
	setenv("PATH", "/nonexistent", 1);
	rc = worktree_create(repo, "R3", "run/WO-3-x", base, NULL, NULL, &err);
	setenv("PATH", old, 1);
	free(old);
	assert_int_equal(rc, SL_ENOTFOUND);
	assert_false(sl_path_exists(sh_line("echo '%s/.git/worktrees/R3'", repo)));
	assert_false(sl_path_exists(sh_line("echo '%s/.system/runs/R3/worktree'", repo)));
	assert_string_equal(sh_line("git -C '%s' branch --list 'run/WO-3-x' | wc -l", repo), "0");
	/* and a retry works */
	sl_err_clear(&err);
	assert_int_equal(worktree_create(repo, "R3", "run/WO-3-x", base_oid(), NULL, NULL,
						&err), 0);
}

static void test_bad_names_refused(void **state)
{
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(worktree_create(repo, "../x", "run/a", base_oid(), NULL, NULL,
						&err), SL_EINVALID);
	sl_err_clear(&err);
	assert_int_equal(worktree_create(repo, "R4", "-b", base_oid(), NULL, NULL, &err),
			 SL_EINVALID);
	sl_err_clear(&err);
	assert_int_equal(worktree_create(repo, "R4", "run/a", "HEAD", NULL, NULL, &err),
			 SL_EINVALID);
	assert_false(worktree_name_valid("a.lock"));
	assert_false(worktree_name_valid("-a"));
	assert_true(worktree_name_valid("20260101T000000Z-ab12cd34"));
}

static void test_path_exists_refused(void **state)
{
	struct sl_err err = SL_ERR_INIT;

	sh("mkdir -p '%s/.system/runs/R5/worktree'", repo);
	assert_int_equal(worktree_create(repo, "R5", "run/WO-5", base_oid(), NULL, NULL,
						&err), SL_EEXISTS);
	assert_non_null(strstr(err.msg, "already exists and is not a git worktree"));
	assert_string_equal(sh_line("git -C '%s' branch --list 'run/WO-5' | wc -l", repo), "0");
}

static void test_remove(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	const char *excl[] = { "shared", NULL };
	char *path = NULL;
	int deleted = -1;

	sh("mkdir -p '%s/shared' && echo keep >'%s/shared/f'", repo, repo);
	assert_int_equal(worktree_create(repo, "R6", "run/WO-6", base_oid(), &path, NULL,
						&err), 0);
	assert_int_equal(worktree_share(repo, path, excl, NULL, &err), 0);
	/* the shared symlink alone does not make it dirty */
	sh("echo dirty >'%s/untracked'", path);
	assert_int_equal(worktree_remove(repo, "R6", excl, 0, 1, &deleted, &err),
			 SL_ECONFLICT);
	assert_non_null(strstr(err.msg, "uncommitted changes"));
	assert_non_null(strstr(err.msg, "--force"));
	sh("rm '%s/untracked' && mkdir -p '%s/ro/d' && touch '%s/ro/d/f' && chmod -R a-w '%s/ro'",
	   path, path, path, path);
	/* ignored read-only files do not count and do not stop the removal */
	sh("cd '%s' && mv ro ignored", path);
	sl_err_clear(&err);
	assert_int_equal(worktree_remove(repo, path, excl, 0, 1, &deleted, &err), 0);
	assert_int_equal(deleted, 1);
	assert_false(sl_path_exists(path));
	assert_string_equal(sh_line("cat '%s/shared/f'", repo), "keep");
	assert_string_equal(sh_line("git -C '%s' branch --list 'run/WO-6' | wc -l", repo), "0");
	assert_false(sl_path_exists(sh_line("echo '%s/.git/worktrees/R6'", repo)));
	free(path);
}

/*
 * A half-made entry in .git/worktrees (a `git worktree add` running at the
 * same moment, or an empty folder a builder made) is no checkout of any
 * branch: libgit2 1.5's git_branch_is_checked_out says 1 for every branch
 * then, which kept run branches from being deleted (and from being taken).
 */
static void test_half_made_entry_checks_out_nothing(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char *path = NULL, *other = NULL;
	int deleted = -1;

	assert_int_equal(worktree_create(repo, "R7", "run/WO-7", base_oid(), &path, NULL, &err), 0);
	sh("mkdir '%s/.git/worktrees/half' && mkdir '%s/.git/worktrees/junk' && "
	   "echo gitdir >'%s/.git/worktrees/junk/commondir'", repo, repo, repo);
	/* the branch another worktree has is still refused */
	assert_int_equal(worktree_create(repo, "R8", "run/WO-7", base_oid(), &other, NULL, &err),
			 SL_EEXISTS);
	assert_non_null(strstr(err.msg, "already checked out"));
	sl_err_clear(&err);
	sh("git -C '%s' branch run/WO-9 main", repo);
	assert_int_equal(worktree_create(repo, "R9", "run/WO-9", base_oid(), &other, NULL, &err), 0);
	assert_int_equal(worktree_remove(repo, "R7", NULL, 0, 1, &deleted, &err), 0);
	assert_int_equal(deleted, 1);
	assert_string_equal(sh_line("git -C '%s' branch --list 'run/WO-7' | wc -l", repo), "0");
	free(path);
	free(other);
}

/*
 * Another process adds and removes worktree entries (as a tester's `git
 * worktree add` and `remove` do) while a branch is asked about: an entry
 * that goes between git's listing and its opening never makes the branch
 * "checked out".
 */
static void test_entries_churning_check_out_nothing(void **state)
{
	char entry[PATH_MAX + 64], file[PATH_MAX + 128], gitdir[PATH_MAX + 32];
	const char *files[] = { "commondir", "gitdir", "HEAD" };
	int i, k, yes = 0, status;
	pid_t child;

	sh("git -C '%s' branch run/WO-10 main", repo);
	snprintf(gitdir, sizeof(gitdir), "%s/.git", repo);
	snprintf(entry, sizeof(entry), "%s/.git/worktrees/churn", repo);
	sh("mkdir -p '%s/.git/worktrees' '%s/churn-wt'", repo, tmp);
	if ((child = fork()) == 0) {
		for (i = 0; i < 20000; i++) {
			if (mkdir(entry, 0777) != 0)
				_exit(1);
			for (k = 0; k < 3; k++) {
				FILE *f;
				snprintf(file, sizeof(file), "%s/%s", entry, files[k]);
				if (!(f = fopen(file, "w")))
					_exit(1);
				fprintf(f, k == 0 ? "../..\n" : k == 1 ? "%s/churn-wt/.git\n" : "%s\n",
					k == 1 ? tmp : "0123456789012345678901234567890123456789");
				fclose(f);
			}
			for (k = 0; k < 3; k++) {
				snprintf(file, sizeof(file), "%s/%s", entry, files[k]);
				unlink(file);
			}
			rmdir(entry);
		}
		_exit(0);
	}
	assert_true(child > 0);
	for (i = 0; i < 3000; i++)
		yes += worktree_branch_checked_out(gitdir, "refs/heads/run/WO-10");
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	assert_int_equal(yes, 0);
	assert_int_equal(worktree_branch_checked_out(gitdir, "refs/heads/main"), 1);
}

static void test_remove_force_keeps_branch(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char *path = NULL;
	int deleted = -1;

	assert_int_equal(worktree_create(repo, "R7", "run/WO-7", base_oid(), &path, NULL,
						&err), 0);
	sh("echo x >>'%s/README'", path);
	assert_int_equal(worktree_remove(repo, "R7", NULL, 1, 0, &deleted, &err), 0);
	assert_int_equal(deleted, 0);
	assert_false(sl_path_exists(path));
	assert_string_equal(sh_line("git -C '%s' branch --list 'run/WO-7' | wc -l", repo), "1");
	sl_err_clear(&err);
	assert_int_equal(worktree_remove(repo, "R7", NULL, 1, 0, NULL, &err),
			 SL_ENOTFOUND);
	free(path);
}

static int known_none(const char *id, void *data)
{
	(void)id, (void)data;
	return 0;
}

static int known_all(const char *id, void *data)
{
	(void)id, (void)data;
	return 1;
}

static void test_prune_and_list(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	struct worktree_list l = WORKTREE_LIST_INIT;
	char *path = NULL;
	size_t pruned = 0, i;
	int seen = 0;

	assert_int_equal(worktree_create(repo, "R8", "run/WO-8", base_oid(), &path, NULL,
						&err), 0);
	assert_int_equal(worktree_create(repo, "R9", "run/WO-9", base_oid(), NULL, NULL,
						&err), 0);
	sh("git -C '%s' branch run/orphan main", repo);
	sh("rm -rf '%s'", path);
	assert_int_equal(worktree_list(repo, &l, &err), 0);
	assert_int_equal(l.nwts, 2);
	for (i = 0; i < l.nwts; i++) {
		assert_true(l.wts[i].under_runs);
		if (!strcmp(l.wts[i].name, "R8"))
			assert_false(l.wts[i].valid), seen++;
		else
			assert_true(l.wts[i].valid), assert_string_equal(l.wts[i].branch, "run/WO-9");
	}
	assert_int_equal(seen, 1);
	assert_int_equal(l.nbranches, 3);
	for (i = 0; i < l.nbranches; i++)
		if (!strcmp(l.branches[i].name, "run/orphan"))
			assert_false(l.branches[i].has_worktree), seen++;
		else if (!strcmp(l.branches[i].name, "run/WO-9"))
			assert_true(l.branches[i].has_worktree), seen++;
	assert_int_equal(seen, 3);
	worktree_list_release(&l);
	/* a run sluice does not know, or an entry within git's grace period: kept */
	assert_int_equal(worktree_prune_stale(repo, known_none, NULL, &pruned, &err), 0);
	assert_int_equal(pruned, 0);
	assert_int_equal(worktree_prune_stale(repo, known_all, NULL, &pruned, &err), 0);
	assert_int_equal(pruned, 0);
	/* a locked one: kept whatever its age */
	sh("touch -d 2020-01-01 '%s/.git/worktrees/R8/gitdir'", repo);
	sh("echo disk >'%s/.git/worktrees/R8/locked'", repo);
	assert_int_equal(worktree_prune_stale(repo, known_all, NULL, &pruned, &err), 0);
	assert_int_equal(pruned, 0);
	sh("rm '%s/.git/worktrees/R8/locked'", repo);
	sh("touch -d 2020-01-01 '%s/.git/worktrees/R8/gitdir'", repo);
	assert_int_equal(worktree_prune_stale(repo, known_all, NULL, &pruned, &err), 0);
	assert_int_equal(pruned, 1);
	assert_false(sl_path_exists(sh_line("echo '%s/.git/worktrees/R8'", repo)));
	assert_true(sl_path_exists(sh_line("echo '%s/.git/worktrees/R9'", repo)));
	/* the branch of the pruned worktree can be checked out again */
	assert_int_equal(worktree_create(repo, "R8", "run/WO-8", base_oid(), NULL, NULL,
						&err), 0);
	free(path);
}

static void test_share_and_copy(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	struct sl_buf notes = SL_BUF_INIT;
	const char *share[] = { "node_modules", "missing/dir", NULL };
	const char *copy[] = { ".env", "conf", NULL };
	const char *bad1[] = { "../outside", NULL };
	const char *bad2[] = { "etc-link", NULL };
	const char *bad3[] = { "README", NULL };
	char *path = NULL;

	sh("cd '%s' && mkdir -p node_modules/x conf && echo m >node_modules/x/i.js && "
	   "echo SECRET=1 >.env && echo c >conf/c.yaml && ln -s /etc etc-link",
	   repo);
	assert_int_equal(worktree_create(repo, "R10", "run/WO-10", base_oid(), &path, NULL,
						&err), 0);
	assert_int_equal(worktree_share(repo, path, share, &notes, &err), 0);
	assert_non_null(strstr(sl_buf_cstr(&notes), "missing/dir"));
	assert_string_equal(sh_line("readlink '%s/node_modules'", path),
			    sh_line("echo '%s/node_modules'", repo));
	/* again: idempotent */
	assert_int_equal(worktree_share(repo, path, share, NULL, &err), 0);
	assert_int_equal(worktree_copy(repo, path, copy, NULL, &err), 0);
	assert_string_equal(sh_line("cat '%s/.env'", path), "SECRET=1");
	assert_string_equal(sh_line("cat '%s/conf/c.yaml'", path), "c");
	assert_int_equal(worktree_copy(repo, path, copy, NULL, &err), 0);
	assert_int_equal(worktree_share(repo, path, bad1, NULL, &err), SL_EINVALID);
	sl_err_clear(&err);
	assert_int_equal(worktree_share(repo, path, bad2, NULL, &err), SL_EINVALID);
	assert_non_null(strstr(err.msg, "outside the repository"));
	sl_err_clear(&err);
	assert_int_equal(worktree_share(repo, path, bad3, NULL, &err), SL_EEXISTS);
	sl_err_clear(&err);
	assert_int_equal(worktree_copy(repo, path, bad3, NULL, &err), SL_EEXISTS);
	assert_false(sl_path_exists(sh_line("echo '%s/etc-link'", path)));
	sl_buf_release(&notes);
	free(path);
}

static void test_exclude_system(void **state)
{
	struct sl_err err = SL_ERR_INIT;

	sh("printf 'foo' >'%s/.git/info/exclude'", repo);
	assert_int_equal(worktree_exclude_system(repo, &err), 0);
	assert_int_equal(worktree_exclude_system(repo, &err), 0);
	assert_string_equal(sh_line("grep -c '^/.system/$' '%s/.git/info/exclude'", repo), "1");
	assert_string_equal(sh_line("head -1 '%s/.git/info/exclude'", repo), "foo");
}

static void slug_is(const char *in, const char *want)
{
	char out[128];

	worktree_slug(in, out, sizeof(out));
	assert_string_equal(out, want);
}

static void test_slug(void **state)
{
	char small[8];

	slug_is("Fix the authentication bug in login", "fix-authentication-bug-login");
	slug_is("Add dark mode toggle to settings", "add-dark-mode-toggle-settings");
	slug_is("REQ-123: Improve performance", "req-123-improve-performance");
	slug_is("fix-auth-bug", "fix-auth-bug");
	slug_is("  Héllo,  wörld!! ", "h-llo-w-rld");
	slug_is("--a--b--", "a-b");
	slug_is("the", "the");
	slug_is("", "");
	slug_is("Implement the comprehensive authentication middleware refactoring for legacy",
		"implement-comprehensive-authentication-middleware");
	slug_is("abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdef",
		"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwx");
	assert_int_equal(worktree_slug("hello world", small, sizeof(small)), 7);
	assert_string_equal(small, "hello-w");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_leaves_dirty_main_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_is_idempotent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_entry_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_create_is_undone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_names_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_path_exists_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove_force_keeps_branch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_half_made_entry_checks_out_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_entries_churning_check_out_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prune_and_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_share_and_copy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exclude_system, setup, teardown),
		cmocka_unit_test(test_slug),
	};
	int rc;

	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
