/* The worktree pool (worktree/pool.c) against real repositories and the real git CLI. */
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
#include <sys/stat.h>
#include <unistd.h>

#include "core/fs.h"
#include "worktree/worktree.h"
#include "test_helpers.h"

static char tmp[PATH_MAX], repo[PATH_MAX + 16];

static int setup(void **state)
{
	if (test_git_tmpdir(tmp, repo, sizeof(repo), "/tmp/sluice-pool.XXXXXX"))
		return -1;
	sh("git init -q -b main '%s' && cd '%s' && mkdir -p src d && echo hello >src/a.c && "
	   "echo readme >README && echo one >d/one && echo two >d/two && "
	   "printf '/ignored\\nnode_modules/\\n' >.gitignore && git add -A && "
	   "git commit -qm base && echo '/.system/' >>.git/info/exclude", repo, repo);
	return 0;
}

static int teardown(void **state)
{
	sh("chmod -R u+w '%s'; rm -rf '%s'", tmp, tmp);
	return 0;
}

static const char *rev(const char *what)
{
	static char oid[64];

	snprintf(oid, sizeof(oid), "%s", sh_line("git -C '%s' rev-parse '%s'", repo, what));
	return oid;
}

/* A run's worktree made as a run makes it, with a commit on its branch. */
static void make_run(const char *run, const char *branch)
{
	struct sl_err err = SL_ERR_INIT;
	char *path = NULL;
	int reused;

	assert_int_equal(worktree_create(repo, run, branch, rev("main"), &path, &reused, &err), 0);
	sh("cd '%s' && echo '%s' >>README && git add -A && git commit -qm work", path, run);
	free(path);
}

static size_t slots(void)
{
	return (size_t)atoi(sh_line("ls -d '%s'/.system/pool/_pool-* 2>/dev/null | wc -l", repo));
}

static void put(const char *run, size_t max, int expect_pooled)
{
	struct sl_err err = SL_ERR_INIT;
	int pooled = -1, deleted = -1;

	assert_int_equal(worktree_pool_put(repo, run, max, NULL, 1, 1, &pooled, &deleted, &err), 0);
	assert_int_equal(pooled, expect_pooled);
}

/* A put as after a merge: not forced, so the status of the worktree is read. */
static void put_clean(const char *run)
{
	struct sl_err err = SL_ERR_INIT;
	int pooled = -1;

	assert_int_equal(worktree_pool_put(repo, run, 2, NULL, 0, 1, &pooled, NULL, &err), 0);
	assert_int_equal(pooled, 1);
}

static long rewritten; /* what the last take_reset() says it wrote: -1, a full reset */

/* A take (under the lock) then its reset (without): what a run's preparing step does. */
static int take_reset(const char *run, int keep_ignored, char **slot)
{
	struct sl_err err = SL_ERR_INIT;
	char branch[64], gitdir[PATH_MAX + 32], *got = NULL;
	int error;

	snprintf(gitdir, sizeof(gitdir), "%s/.git", repo);
	snprintf(branch, sizeof(branch), "run/%s", run);
	if ((error = worktree_pool_take(repo, run, branch, rev("main"), &got, &err)) != 0)
		return error;
	assert_int_equal(worktree_pool_pending(gitdir, run), got != NULL);
	if (got && (error = worktree_pool_reset(repo, run, keep_ignored, &rewritten, &err)) != 0)
		return error;
	assert_int_equal(worktree_pool_pending(gitdir, run), 0);
	if (slot)
		*slot = got;
	else
		free(got);
	return 0;
}

/* What a fresh checkout of `commit` holds: file bytes, modes, the index. */
static char *fresh_state(const char *commit)
{
	static char h[128];

	sh("git -C '%s' worktree add -q --detach '%s/fresh' '%s'", repo, tmp, commit);
	snprintf(h, sizeof(h), "%s",
		 sh_line("cd '%s/fresh' && { git ls-files -s; git ls-files -v; "
			 "git ls-files -z | xargs -0 sha256sum; git ls-files -z | xargs -0 stat -c '%%n %%a %%F'; "
			 "find . -path ./.git -prune -o -print | sort; } | sha256sum", tmp));
	sh("git -C '%s' worktree remove --force '%s/fresh'", repo, tmp);
	return h;
}

static char *wt_state(const char *wt)
{
	static char h[128];

	snprintf(h, sizeof(h), "%s",
		 sh_line("cd '%s' && { git ls-files -s; git ls-files -v; "
			 "git ls-files -z | xargs -0 sha256sum; git ls-files -z | xargs -0 stat -c '%%n %%a %%F'; "
			 "find . -path ./.git -prune -o -print | sort; } | sha256sum", wt));
	return h;
}

static void test_put_then_take_is_a_fresh_checkout(void **state)
{
	char want[128], wt[PATH_MAX * 2], *slot = NULL;

	make_run("R1", "run/R1");
	snprintf(wt, sizeof(wt), "%s/.system/runs/R1/worktree", repo);
	/* litter as a careless or hostile builder would */
	sh("cd '%s' && echo mod >src/a.c && rm d/one && chmod +x d/two && echo x >new.txt && "
	   "mkdir -p node_modules/p nest && echo dep >node_modules/p/i.js && (cd nest && git init -q) && "
	   "echo hidden >README && git update-index --skip-worktree README && "
	   "git -c core.untrackedCache=true status >/dev/null && "
	   "echo m >\"$(git rev-parse --git-dir)/MERGE_HEAD\" && "
	   "git config --worktree x.y z 2>/dev/null; chmod 555 d", wt);
	put("R1", 2, 1);
	assert_false(sl_path_exists(wt));
	assert_int_equal(slots(), 1);
	assert_string_equal(sh_line("git -C '%s' branch --list run/R1 | wc -l", repo), "0");
	/* the slot is detached at R1's head */
	assert_string_equal(sh_line("git -C \"$(ls -d '%s'/.system/pool/_pool-*)\" rev-parse --abbrev-ref HEAD", repo),
			    "HEAD");

	snprintf(want, sizeof(want), "%s", fresh_state("main"));
	assert_int_equal(take_reset("R2", 0, &slot), 0);
	assert_non_null(slot);
	free(slot);
	assert_int_equal(slots(), 0);
	snprintf(wt, sizeof(wt), "%s/.system/runs/R2/worktree", repo);
	assert_string_equal(wt_state(wt), want);
	assert_string_equal(sh_line("git -C '%s' status --porcelain --ignored | wc -l", wt), "0");
	assert_string_equal(sh_line("git -C '%s' symbolic-ref HEAD", wt), "refs/heads/run/R2");
	assert_string_equal(sh_line("git -C '%s' rev-parse HEAD", wt), rev("main"));
	assert_string_equal(sh_line("git -C '%s' rev-parse --git-dir", wt),
			    sh_line("cd '%s/.git/worktrees/R2' && pwd -P", repo));
	assert_string_equal(sh_line("ls '%s/.git/worktrees/R2' | grep -c -v -x -e HEAD -e commondir "
				    "-e gitdir -e index -e logs -e ORIG_HEAD -e sluice-checkout-settings", repo), "0");
	assert_string_equal(sh_line("git -C '%s' log -g --format=%%s HEAD | grep -c work", wt), "0");
	assert_string_equal(sh_line("git -C '%s' worktree prune -n -v 2>&1 | wc -l", repo), "0");
}

/* A slot clean at its put: the take writes only the paths between its commit and the base. */
static void test_clean_put_rewrites_only_what_differs(void **state)
{
	char want[128], wt[PATH_MAX * 2];

	make_run("R1", "run/R1");
	snprintf(wt, sizeof(wt), "%s/.system/runs/R1/worktree", repo);
	sh("cd '%s' && chmod 600 d/two && mkdir -p node_modules && echo dep >node_modules/i.js", wt);
	put_clean("R1");
	/* main moves on without R1: README (R1's line), src/a.c, d/one and new/f differ */
	sh("cd '%s' && echo main >src/a.c && git rm -q d/one && mkdir new && echo f >new/f && "
	   "git add -A && git commit -qm main", repo);
	snprintf(want, sizeof(want), "%s", fresh_state("main"));
	assert_int_equal(take_reset("R2", 0, NULL), 0);
	assert_int_equal(rewritten, 4);
	snprintf(wt, sizeof(wt), "%s/.system/runs/R2/worktree", repo);
	assert_string_equal(wt_state(wt), want);
	assert_string_equal(sh_line("git -C '%s' status --porcelain --ignored | wc -l", wt), "0");
	assert_string_equal(sh_line("ls '%s/.git/worktrees/R2' | grep -c sluice-clean", repo), "0");

	/* and its own put marks it again: the next take has nothing to write */
	sh("cd '%s' && echo R2 >>README && git add -A && git commit -qm work", wt);
	put_clean("R2");
	assert_int_equal(take_reset("R3", 0, NULL), 0);
	assert_int_equal(rewritten, 1); /* README: R2's line is not on main */
	snprintf(wt, sizeof(wt), "%s/.system/runs/R3/worktree", repo);
	assert_string_equal(wt_state(wt), want);
}

/*
 * What the status at the put saw no longer holds when the slot is taken: a
 * tracked file changed behind its stat data, deleted, the index rewritten,
 * or a forced put (a run abandoned with changes): the take resets in full,
 * and the run gets a fresh checkout either way.
 */
static void test_slot_changed_after_put_is_reset_in_full(void **state)
{
	static const char *const change[] = {
		/* same size, mtime put back: the ctime and the bytes tell */
		"t=$(stat -c %y src/a.c) && printf 'HELLO\\n' >src/a.c && touch -d \"$t\" src/a.c",
		"rm d/one",
		"echo more >>README && git update-index --skip-worktree README",
		"git update-index --chmod=+x d/two",
		NULL,
	};
	char want[128], wt[PATH_MAX * 2], run[16], prev[16];
	int i;

	snprintf(want, sizeof(want), "%s", fresh_state("main"));
	make_run("R0", "run/R0");
	snprintf(prev, sizeof(prev), "R0");
	for (i = 0; change[i]; i++) {
		put_clean(prev);
		sh("cd \"$(ls -d '%s'/.system/pool/_pool-*)\" && %s", repo, change[i]);
		snprintf(run, sizeof(run), "C%d", i);
		assert_int_equal(take_reset(run, 0, NULL), 0);
		assert_int_equal(rewritten, -1);
		snprintf(wt, sizeof(wt), "%s/.system/runs/%s/worktree", repo, run);
		assert_string_equal(wt_state(wt), want);
		snprintf(prev, sizeof(prev), "%s", run);
		/* the next put's status must see it clean: a commit, as a run has */
		sh("cd '%s' && echo %s >>README && git add -A && git commit -qm work", wt, run);
	}
}

/* An untracked file and a mode change after the put: the quick take still removes and fixes them. */
static void test_clean_put_then_litter_is_still_fresh(void **state)
{
	char want[128], wt[PATH_MAX * 2];

	snprintf(want, sizeof(want), "%s", fresh_state("main"));
	make_run("R1", "run/R1");
	put_clean("R1");
	sh("cd \"$(ls -d '%s'/.system/pool/_pool-*)\" && echo x >stray && mkdir -p empty/sub && "
	   "chmod 700 d && chmod 600 d/two && echo i >ignored", repo);
	assert_int_equal(take_reset("R2", 0, NULL), 0);
	assert_int_equal(rewritten, 1);
	snprintf(wt, sizeof(wt), "%s/.system/runs/R2/worktree", repo);
	assert_string_equal(wt_state(wt), want);
}

/*
 * An index that a builder wrote by hand, checksum and all, with an entry
 * whose path climbs out of the worktree (a submodule's, which the take
 * empties, and a file's, whose mode it sets): nothing outside is touched,
 * whether the slot was marked clean or not, and the run gets a fresh checkout.
 */
static void test_index_path_out_of_the_worktree(void **state)
{
	static const char *const patch =
		"import hashlib, sys\n"
		"p = sys.argv[1]; b = bytearray(open(p, 'rb').read())\n"
		"for old, new, mode in ((b'd/one', b'../oo', None), (b'd/two', b'../tt', 0o160000)):\n"
		"    i = b.index(old + b'\\0'); b[i:i + 5] = new\n"
		"    if mode: b[i - 62 + 24:i - 62 + 28] = mode.to_bytes(4, 'big')\n"
		"b[-20:] = hashlib.sha1(bytes(b[:-20])).digest(); open(p, 'wb').write(bytes(b))\n";
	char want[128], wt[PATH_MAX * 2], slot[PATH_MAX * 2];
	int i;

	snprintf(want, sizeof(want), "%s", fresh_state("main"));
	for (i = 0; i < 2; i++) {
		char run[16];
		snprintf(run, sizeof(run), "R%d", i);
		make_run(run, i ? "run/R1" : "run/R0");
		if (i)
			put_clean(run);
		else
			put(run, 2, 1);
		snprintf(slot, sizeof(slot), "%s", sh_line("ls -d '%s'/.system/pool/_pool-*", repo));
		/* outside the slot: a file with its own mode, a folder with a file in it */
		sh("cd '%s/..' && echo keep >oo && chmod 600 oo && mkdir -p tt && echo keep >tt/f && "
		   "printf '%%s' \"%s\" >patch.py && python3 patch.py \"$(git -C '%s' rev-parse "
		   "--git-dir)/index\"", slot, patch, slot);
		snprintf(run, sizeof(run), "T%d", i);
		assert_int_equal(take_reset(run, 0, NULL), 0);
		assert_int_equal(rewritten, -1);
		assert_string_equal(sh_line("cd '%s/.system/pool' && stat -c %%a oo && cat tt/f", repo),
				    "600");
		assert_string_equal(sh_line("cat '%s/.system/pool/tt/f'", repo), "keep");
		snprintf(wt, sizeof(wt), "%s/.system/runs/%s/worktree", repo, run);
		assert_string_equal(wt_state(wt), want);
		sh("cd '%s/.system/pool' && rm -rf oo tt patch.py", repo);
		sh("cd '%s' && echo %s >>README && git add -A && git commit -qm work", wt, run);
		put_clean(run);
		sh("rm -rf '%s'/.system/pool/_pool-* && git -C '%s' worktree prune", repo, repo);
	}
}

static void test_keep_ignored_keeps_only_ignored(void **state)
{
	char wt[PATH_MAX * 2];

	make_run("R1", "run/R1");
	snprintf(wt, sizeof(wt), "%s/.system/runs/R1/worktree", repo);
	sh("cd '%s' && mkdir -p node_modules && echo dep >node_modules/i.js && echo x >untracked", wt);
	put("R1", 2, 1);
	assert_int_equal(take_reset("R2", 1, NULL), 0);
	snprintf(wt, sizeof(wt), "%s/.system/runs/R2/worktree", repo);
	assert_string_equal(sh_line("git -C '%s' status --porcelain --ignored", wt), "!! node_modules/");
	assert_string_equal(sh_line("cat '%s/node_modules/i.js'", wt), "dep");
}

static void test_full_pool_and_dirty_refused(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	int pooled = -1;

	make_run("R1", "run/R1");
	make_run("R2", "run/R2");
	make_run("R3", "run/R3");
	put("R1", 0, 0); /* no pool */
	put("R1", 2, 1);
	put("R2", 2, 1);
	put("R3", 2, 0); /* full: the caller removes it */
	assert_int_equal(slots(), 2);
	sh("echo dirty >'%s/.system/runs/R3/worktree/README'", repo);
	assert_int_equal(worktree_pool_trim(repo, 1, &(size_t){ 0 }, &(size_t){ 0 }, &err), 0);
	assert_int_equal(worktree_pool_put(repo, "R3", 2, NULL, 0, 1, &pooled, NULL, &err),
			 SL_ECONFLICT);
	assert_int_equal(pooled, 0);
	assert_true(sl_path_exists(sh_line("echo '%s/.system/runs/R3/worktree/README'", repo)));
}

static void test_trim_keeps_newest_and_locked(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	size_t removed = 9, locked = 9;
	char oldest[PATH_MAX];

	make_run("R1", "run/R1");
	make_run("R2", "run/R2");
	make_run("R3", "run/R3");
	put("R1", 8, 1);
	put("R2", 8, 1);
	put("R3", 8, 1);
	snprintf(oldest, sizeof(oldest), "%s",
		 sh_line("ls -d '%s'/.system/pool/_pool-* | head -n 1", repo));
	sh("git -C '%s' worktree lock '%s'", repo, oldest);
	assert_int_equal(worktree_pool_trim(repo, 1, &removed, &locked, &err), 0);
	assert_int_equal(removed, 1);
	assert_int_equal(locked, 1);
	assert_int_equal(slots(), 2);
	assert_true(sl_is_dir(oldest));
	assert_int_equal(worktree_pool_trim(repo, 0, &removed, &locked, &err), 0);
	assert_int_equal(slots(), 1);
	assert_true(sl_is_dir(oldest)); /* locked: a person's; never taken either */
	assert_int_equal(take_reset("R9", 0, NULL), 0);
	assert_false(sl_path_exists(sh_line("echo '%s/.system/runs/R9/worktree'", repo)));
	assert_string_equal(sh_line("git -C '%s' worktree prune -n -v 2>&1 | wc -l", repo), "0");
}

/* Each state a killed put or take can leave, made by hand; recovery makes a whole slot of it. */
static void test_recover_every_cut(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char slot[PATH_MAX], name[128], *s = NULL;
	int cut;

	for (cut = 0; cut < 4; cut++) {
		make_run("R1", "run/R1");
		put("R1", 2, 1);
		snprintf(slot, sizeof(slot), "%s", sh_line("ls -d '%s'/.system/pool/_pool-*", repo));
		snprintf(name, sizeof(name), "%s", strrchr(slot, '/') + 1);
		/* a take by R2 cut: after the intent, after the move, after the entry rename */
		sh("cd '%s' && printf R2 >.system/pool/%s.take && mkdir -p .system/runs/R2", repo, name);
		if (cut >= 1)
			sh("cd '%s' && mv .system/pool/%s .system/runs/R2/worktree", repo, name);
		if (cut >= 2) /* the entry renamed, then marked (move_in) */
			sh("cd '%s' && mv .git/worktrees/%s .git/worktrees/R2 && "
			   ": >.git/worktrees/R2/sluice-reset-pending", repo, name);
		if (cut >= 3)
			sh("cd '%s' && printf 'gitdir: %s/.git/worktrees/R2\\n' >.system/runs/R2/worktree/.git && "
			   "printf '%s/.system/runs/R2/worktree/.git\\n' >.git/worktrees/R2/gitdir",
			   repo, repo, repo);
		assert_int_equal(worktree_pool_recover(repo, &err), 0);
		assert_int_equal(slots(), 1);
		assert_false(sl_path_exists(sh_line("echo '%s/.system/runs/R2/worktree'", repo)));
		assert_false(sl_path_exists(sh_line("echo '%s/.git/worktrees/R2'", repo)));
		assert_string_equal(sh_line("ls '%s/.system/pool' | wc -l", repo), "1");
		assert_string_equal(sh_line("git -C '%s' worktree prune -n -v 2>&1 | wc -l", repo), "0");
		/* and it can be taken */
		assert_int_equal(take_reset("R2", 0, &s), 0);
		assert_string_equal(s, name);
		free(s);
		s = NULL;
		sh("cd '%s' && git worktree remove --force .system/runs/R2/worktree && "
		   "git branch -q -D run/R2", repo);
	}
	/* an intent naming a run with a worktree of its own (planted): that worktree is left alone */
	make_run("R4", "run/R4");
	put("R4", 2, 1);
	make_run("R5", "run/R5");
	sh("cd '%s' && printf R5 >.system/pool/_pool-9-9-9.take", repo);
	assert_int_equal(worktree_pool_recover(repo, &err), 0);
	assert_true(sl_is_dir(sh_line("echo '%s/.system/runs/R5/worktree'", repo)));
	assert_string_equal(sh_line("git -C '%s/.system/runs/R5/worktree' symbolic-ref HEAD", repo),
			    "refs/heads/run/R5");
	assert_string_equal(sh_line("ls '%s/.system/pool' | wc -l", repo), "1");
	sh("cd '%s' && git worktree remove --force .system/runs/R5/worktree && "
	   "git branch -q -D run/R5 && rm -rf .system/pool/* && git worktree prune", repo);
	/* a put cut after the move: finished */
	make_run("R3", "run/R3");
	sh("cd '%s' && git -C .system/runs/R3/worktree checkout -q --detach && git branch -q -D run/R3 && "
	   "mkdir -p .system/pool && printf R3 >.system/pool/_pool-1-1-0.put && "
	   "mv .system/runs/R3/worktree .system/pool/_pool-1-1-0", repo);
	assert_int_equal(worktree_pool_recover(repo, &err), 0);
	assert_int_equal(slots(), 1);
	assert_string_equal(sh_line("git -C '%s' worktree list | grep -c _pool-1-1-0", repo), "1");
	assert_string_equal(sh_line("git -C '%s' worktree prune -n -v 2>&1 | wc -l", repo), "0");
	assert_string_equal(sh_line("ls '%s/.system/pool'", repo), "_pool-1-1-0");
}

static void test_recover_drops_what_is_not_whole(void **state)
{
	struct sl_err err = SL_ERR_INIT;

	make_run("R1", "run/R1");
	make_run("R2", "run/R2");
	put("R1", 2, 1);
	put("R2", 2, 1);
	/* one slot's .git edited to point elsewhere; then the pool folder removed by hand */
	sh("cd \"$(ls -d '%s'/.system/pool/_pool-* | head -n 1)\" && echo 'gitdir: /nowhere' >.git", repo);
	assert_int_equal(worktree_pool_recover(repo, &err), 0);
	assert_int_equal(slots(), 1);
	sh("rm -rf '%s/.system/pool'", repo);
	assert_int_equal(worktree_pool_recover(repo, &err), 0);
	assert_string_equal(sh_line("ls '%s/.git/worktrees' 2>/dev/null | wc -l", repo), "0");
	assert_string_equal(sh_line("git -C '%s' worktree list | wc -l", repo), "1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_put_then_take_is_a_fresh_checkout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clean_put_rewrites_only_what_differs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slot_changed_after_put_is_reset_in_full, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_clean_put_then_litter_is_still_fresh, setup, teardown),
		cmocka_unit_test_setup_teardown(test_index_path_out_of_the_worktree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keep_ignored_keeps_only_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_pool_and_dirty_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trim_keeps_newest_and_locked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recover_every_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recover_drops_what_is_not_whole, setup, teardown),
	};
	int rc;

	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
