/*
 * The checked-out target brought along after a merge (DESIGN.md 7.4), in
 * the checkouts a user really has: staged changes the work tree does not
 * show, an ignored file in a folder the merge turns into a file, an
 * operation of git's in progress, sparse checkouts, a symbolic link in
 * place of a tracked folder, and the locks a killed merge leaves. Real
 * repositories, the git CLI as the oracle: the user's bytes, index
 * entries and the target ref are asserted.
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
#include <sys/stat.h>
#include <unistd.h>

#include "core/fs.h"
#include "core/proc.h"
#include "merge/merge.h"
#include "test_helpers.h"

static char tmp[256];

static int setup(void **state)
{
	if (test_home_tmpdir(tmp, sizeof(tmp), "/tmp/sl-mco-XXXXXX"))
		return -1;
	/*
	 * base: a.txt, b.txt, e.txt, f/a.txt, f/b.txt, s/x.txt, .gitignore (*.o);
	 * main checked out in r/ gets c.txt; the run branch in the worktree
	 * rw/ (made from main) changes a.txt and e.txt and adds d.txt.
	 */
	return sh_in(tmp, "git init -q -b main r && cd r && printf '1\\n2\\n3\\n4\\n5\\n' >a.txt && "
		         "echo b >b.txt && echo e >e.txt && mkdir f s && echo fa >f/a.txt && "
		         "echo fb >f/b.txt && echo sx >s/x.txt && echo '*.o' >.gitignore && "
		         "git add . && git commit -qm base && echo c >c.txt && git add c.txt && "
		         "git commit -qm c && git worktree add -q -b run ../rw && cd ../rw && "
		         "sed -i 5s/5/five/ a.txt && echo e2 >e.txt && echo d >d.txt && git add . && "
		         "git commit -qm run");
}

static int teardown(void **state)
{
	struct sl_err err = SL_ERR_INIT;

	sh_in(tmp, "chmod -R u+w . 2>/dev/null || true");
	return sl_rm_rf(tmp, &err);
}

static const char *rev(const char *name)
{
	static char cmd[512];

	snprintf(cmd, sizeof(cmd), "cd r && git rev-parse --verify -q '%s' || echo none", name);
	return sh_line_in(tmp, cmd);
}

static int do_merge(struct merge_commit_opts *o, struct merge_commit_result *res,
		    struct sl_err *err)
{
	char r[PATH_MAX];
	int rc;

	snprintf(r, sizeof(r), "%s/r", tmp);
	if (!o->target)
		o->target = "main";
	o->head = "run";
	o->work_order_id = "WO-2026-030";
	o->title = "Checkout";
	o->run_id = "20260101-abcdef12";
	o->reviewer = "reviewer-bot";
	rc = merge_commit(r, o, res, err);
	if (rc)
		print_message("merge_commit: %d %s\n", rc, err->msg);
	return rc;
}

/* Everything of the user's in r/: index entries and flags, diffs, status, untracked bytes. */
static char *user_state(void)
{
	return strdup(sh_line_in(tmp, "cd r && { git ls-files -s -t; git ls-files -v; "
			              "git diff --cached --binary; git diff --binary; "
			              "git status --porcelain --untracked-files=all --ignored; "
			              "git ls-files -o -z | xargs -0 -r sha256sum; } | sha256sum"));
}

/* The merge is deferred with `why` in its reason, and nothing of the user's changed. */
static void expect_deferred(const char *why)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char tip[64], *before, *after;

	assert_true(snprintf(tip, sizeof(tip), "%s", rev("main")) < (int)sizeof(tip));
	before = user_state();
	assert_int_equal(do_merge(&o, &res, &err), SL_ETRANSIENT);
	assert_int_equal(res.status, MERGE_DEFERRED);
	if (!strstr(res.reason, why))
		fail_msg("'%s' not in the reason: %s", why, res.reason);
	after = user_state();
	assert_string_equal(before, after);
	assert_string_equal(tip, rev("main"));
	free(before);
	free(after);
	merge_commit_result_release(&res);
}

static void expect_merged(void)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char run[64];

	assert_true(snprintf(run, sizeof(run), "%s", rev("run")) < (int)sizeof(run));
	assert_int_equal(do_merge(&o, &res, &err), 0);
	assert_int_equal(res.status, MERGE_MERGED);
	assert_string_equal(run, rev("main^2"));
	merge_commit_result_release(&res);
}

/* 1: staged e.txt whose work tree file equals HEAD; the merge changes e.txt. */
static void test_staged_change_clean_file_defers(void **state)
{
	assert_int_equal(sh_in(tmp, "cd r && echo mine >e.txt && git add e.txt && echo e >e.txt"), 0);
	expect_deferred("staged");
	assert_string_equal("mine", sh_line_in(tmp, "cd r && git show :e.txt"));
	assert_string_equal("e", sh_line_in(tmp, "cd r && cat e.txt"));
}

/* 1: `git rm --cached b.txt` staged, b.txt untouched by the merge: still staged after it. */
static void test_rm_cached_kept(void **state)
{
	assert_int_equal(sh_in(tmp, "cd r && git rm -q --cached b.txt"), 0);
	expect_merged();
	assert_int_equal(sh_in(tmp, "cd r && test \"$(git diff --cached --name-status)\" = \"$(printf 'D\\tb.txt')\" && "
			           "test \"$(cat b.txt)\" = b && test -z \"$(git ls-files b.txt)\" && "
			           "test \"$(git show :e.txt)\" = e2 && test \"$(cat e.txt)\" = e2 && "
			           "test \"$(cat d.txt)\" = d"), 0);
}

/* 1: `git rm --cached e.txt` staged, the merge changes e.txt: not undone, deferred. */
static void test_rm_cached_of_changed_file_defers(void **state)
{
	assert_int_equal(sh_in(tmp, "cd r && git rm -q --cached e.txt"), 0);
	expect_deferred("staged");
	assert_int_equal(sh_in(tmp, "cd r && test -z \"$(git ls-files e.txt)\" && test \"$(cat e.txt)\" = e"), 0);
}

/* 1: a staged edit of b.txt (file = HEAD, and file = index) when the merge deletes b.txt. */
static void test_staged_edit_of_deleted_file_defers(void **state)
{
	assert_int_equal(sh_in(tmp, "cd rw && git rm -q b.txt && git commit -qm rmb && cd ../r && "
			           "echo mine >>b.txt && git add b.txt && echo b >b.txt"), 0);
	expect_deferred("staged");
	assert_int_equal(sh_in(tmp, "cd r && git show :b.txt >o.tmp && printf 'b\\nmine\\n' | cmp - o.tmp && "
			           "rm o.tmp && test \"$(cat b.txt)\" = b"), 0);
	assert_int_equal(sh_in(tmp, "cd r && git add b.txt && echo mine >>b.txt && git add b.txt"), 0);
	expect_deferred("");
	assert_int_equal(sh_in(tmp, "cd r && printf 'b\\nmine\\n' | cmp - b.txt"), 0);
}

/* 1: a staged new file under a folder the merge turns into a file. */
static void test_staged_file_under_new_file_defers(void **state)
{
	assert_int_equal(sh_in(tmp, "cd rw && git rm -rq f && echo file >f && git add f && "
			           "git commit -qm f && cd ../r && echo mine >f/new.txt && "
			           "git add f/new.txt && rm f/new.txt"), 0);
	expect_deferred("");
	assert_string_equal("mine", sh_line_in(tmp, "cd r && git show :f/new.txt"));
}

/* 2: f/ becomes a file while the user has an ignored f/x.o: deferred before any file is touched. */
static void test_folder_to_file_with_ignored_defers(void **state)
{
	assert_int_equal(sh_in(tmp, "cd rw && git rm -rq f && echo file >f && git add f && "
			           "git commit -qm f && cd ../r && echo obj >f/x.o"), 0);
	expect_deferred("f");
	assert_int_equal(sh_in(tmp, "cd r && test \"$(cat f/a.txt)\" = fa && test \"$(cat f/b.txt)\" = fb && "
			           "test \"$(cat f/x.o)\" = obj && test -z \"$(git status --porcelain)\" && "
			           "test ! -e d.txt && test \"$(cat e.txt)\" = e"), 0);
	/* once the ignored file is gone, the merge goes through */
	assert_int_equal(sh_in(tmp, "cd r && rm f/x.o"), 0);
	expect_merged();
	assert_int_equal(sh_in(tmp, "cd r && test \"$(cat f)\" = file && test -z \"$(git status --porcelain)\""), 0);
}

/* 4: states in which git itself would not move the branch. */
static void test_rebase_in_progress_defers(void **state)
{
	assert_int_equal(sh_in(tmp, "cd r && GIT_SEQUENCE_EDITOR='sed -i 1s/^pick/edit/' "
			           "git rebase -q -i HEAD~1 >/dev/null 2>&1 && test -d .git/rebase-merge"), 0);
	expect_deferred("rebase");
	assert_int_equal(sh_in(tmp, "cd r && test -d .git/rebase-merge && git rebase --continue >/dev/null 2>&1"), 0);
	expect_merged();
}

static void test_rebase_apply_in_progress_defers(void **state)
{
	/* a conflicting `git rebase --apply`: HEAD detached, rebase-apply/ naming main */
	assert_int_equal(sh_in(tmp, "cd r && git checkout -q -b y HEAD~1 && echo y >c.txt && git add c.txt && "
			           "git commit -qm y && git checkout -q main && "
			           "! git rebase -q --apply y >/dev/null 2>&1 && test -d .git/rebase-apply"), 0);
	expect_deferred("rebase");
}

/* main is being rebased in a linked work tree (HEAD detached there), the main checkout elsewhere */
static void test_rebase_in_linked_worktree_defers(void **state)
{
	assert_int_equal(sh_in(tmp, "cd r && git checkout -q --detach && git worktree add -q ../lw main && "
			           "cd ../lw && GIT_SEQUENCE_EDITOR='sed -i 1s/^pick/edit/' "
			           "git rebase -q -i HEAD~1 >/dev/null 2>&1 && "
			           "test \"$(git rev-parse --abbrev-ref HEAD)\" = HEAD"), 0);
	expect_deferred("lw' is in the middle of a rebase of 'main'");
}

static void test_bisect_in_progress_defers(void **state)
{
	assert_int_equal(sh_in(tmp, "cd r && git bisect start -q main main~1 >/dev/null 2>&1 || "
			           "git bisect start main main~1 >/dev/null && test -f .git/BISECT_START"), 0);
	expect_deferred("bisect");
}

static void test_sequencer_in_progress_defers(void **state)
{
	/* a cherry-pick of several commits stopped, its CHERRY_PICK_HEAD already committed */
	assert_int_equal(sh_in(tmp, "cd r && mkdir .git/sequencer && "
			           "echo \"pick $(git rev-parse run) run\" >.git/sequencer/todo && "
			           "git rev-parse HEAD >.git/sequencer/head"), 0);
	expect_deferred("cherry-pick");
}

static void test_missing_linked_worktree_defers(void **state)
{
	/* main checked out in a linked worktree on a disk that is not mounted now */
	assert_int_equal(sh_in(tmp, "cd r && git checkout -q --detach && git worktree add -q ../lw main && "
			           "git worktree lock --reason 'usb disk' ../lw && mv ../lw ../lw-away"), 0);
	expect_deferred("lw");
	assert_int_equal(sh_in(tmp, "mv lw-away lw && cd lw && test -z \"$(git status --porcelain)\" && "
			           "test ! -e d.txt"), 0);
}

/* 5: a sparse checkout (e.txt, c.txt, f/, s/ outside it) is clean: merged, skip-worktree kept. */
static void test_sparse_checkout_merges(void **state)
{
	assert_int_equal(sh_in(tmp, "cd r && git sparse-checkout set --no-cone /a.txt /b.txt /.gitignore && "
			           "test ! -e e.txt && git ls-files -t e.txt | grep -q '^S '"), 0);
	expect_merged();
	assert_int_equal(sh_in(tmp, "cd r && test -z \"$(git status --porcelain)\" && test ! -e e.txt && "
			           "git ls-files -t e.txt | grep -q '^S ' && test \"$(git show :e.txt)\" = e2 && "
			           "test \"$(sed -n 5p a.txt)\" = five && git diff --cached --quiet HEAD && "
			           "test ! -e d.txt && git ls-files -t d.txt | grep -q '^S '"), 0);
}

/* 5: a skip-worktree bit set by hand, without sparse checkout. */
static void test_skip_worktree_entry_merges(void **state)
{
	assert_int_equal(sh_in(tmp, "cd r && git update-index --skip-worktree e.txt && rm e.txt"), 0);
	expect_merged();
	assert_int_equal(sh_in(tmp, "cd r && test -z \"$(git status --porcelain)\" && test ! -e e.txt && "
			           "git ls-files -t e.txt | grep -q '^S ' && test \"$(git show :e.txt)\" = e2 && "
			           "test \"$(cat d.txt)\" = d && git diff --cached --quiet HEAD"), 0);
}

/* An index in version 4 with an untracked cache: written back in version 4, git reads it clean. */
static void test_index_v4_untracked_cache(void **state)
{
	assert_int_equal(sh_in(tmp, "cd r && git update-index --index-version 4 && "
			           "git update-index --untracked-cache && echo mine >u.txt && "
			           "echo staged >>b.txt && git add b.txt && git status --porcelain >/dev/null"), 0);
	expect_merged();
	assert_int_equal(sh_in(tmp, "cd r && test \"$(head -c 8 .git/index | tail -c 1 | od -An -tu1 | tr -d \" \")\" = 4 && "
			           "test \"$(git status --porcelain --untracked-files=all | tr '\\n' ' ')\" = 'M  b.txt ?? u.txt ' && "
			           "git fsck --no-dangling 2>/dev/null && test \"$(cat d.txt)\" = d && test \"$(git show :b.txt)\" = \"$(printf 'b\\nstaged')\""), 0);
}

/* 6: the user replaced the tracked folder s/ with a link to a folder outside the repository. */
static void test_symlink_in_place_of_folder_defers(void **state)
{
	assert_int_equal(sh_in(tmp, "cd rw && echo sy >s/y.txt && git add s && "
			           "git commit -qm s && cd ../r && mv s ../outside && ln -s ../outside s"), 0);
	expect_deferred("link");
	assert_int_equal(sh_in(tmp, "test \"$(cat outside/x.txt)\" = sx && test ! -e outside/y.txt && "
			           "test -L r/s && test ! -e r/d.txt"), 0);
}

/* 6: a link to outside in place of a folder the merge creates. */
static void test_symlink_in_place_of_new_folder_defers(void **state)
{
	assert_int_equal(sh_in(tmp, "cd rw && mkdir n && echo nx >n/x.txt && git add n && "
			           "git commit -qm n && cd ../r && mkdir ../outside && ln -s ../outside n"), 0);
	expect_deferred("link");
	assert_int_equal(sh_in(tmp, "test ! -e outside/x.txt && test -L r/n"), 0);
}

static int move_main_once(void *data, int attempt)
{
	(void)data;
	(void)attempt;
	return sh_in(tmp, "cd r && git update-ref refs/heads/main x2") ? -1 : 0;
}

/*
 * 1: the user staged exactly what the merge brings (e.txt): kept as it is;
 * when the target then moves under the merge and the checkout is brought
 * back, that staged change is still the user's, not undone.
 */
static void test_staged_same_change_kept_when_brought_back(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(sh_in(tmp, "cd r && git branch x2 main && git branch old main && cd ../rw && git checkout -q --detach x2 && "
			           "echo x >x.txt && git add x.txt && git commit -qm x2 && "
			           "git branch -f x2 HEAD && git checkout -q run && cd ../r && "
			           "echo e2 >e.txt && git add e.txt"), 0);
	o.before_ref_update = move_main_once;
	o.max_attempts = 1;
	assert_int_equal(do_merge(&o, &res, &err), SL_ECONFLICT);
	assert_string_equal(rev("x2"), rev("main"));
	assert_int_equal(sh_in(tmp, "cd r && test \"$(git show :e.txt)\" = e2 && test \"$(cat e.txt)\" = e2 && "
			           "test ! -e d.txt && test \"$(git diff --cached --name-only old)\" = e.txt"), 0);
	merge_commit_result_release(&res);
}

/* 3: a killed merge's index.lock is removed only when the journal proves it was the merge's. */
static void test_dead_merge_locks(void **state)
{
	char journal[PATH_MAX], lock[PATH_MAX], text[1024];
	struct stat st;
	int left = -1;
	FILE *f;

	snprintf(journal, sizeof(journal), "%s/merge.journal", tmp);
	snprintf(lock, sizeof(lock), "%s/r/.git/index.lock", tmp);
	/* "1:1": pid 1 with another start time, a dead owner. The user's lock, made after the journal: not in it, kept */
	f = fopen(journal, "w");
	assert_non_null(f);
	fprintf(f, "1:1\n%s\n%s\n", rev("main^{tree}"), rev("run^{tree}"));
	fclose(f);
	assert_int_equal(sh_in(tmp, "echo user >r/.git/index.lock && touch -d '-60 seconds' r/.git/index.lock"), 0);
	assert_true(merge_journal_dead(journal));
	assert_int_equal(merge_journal_release_locks(journal, &left), 0);
	assert_int_equal(left, 0);
	assert_int_equal(sh_in(tmp, "test \"$(cat r/.git/index.lock)\" = user"), 0);
	/* a lock the journal names, same file: the dead merge's, removed */
	assert_int_equal(lstat(lock, &st), 0);
	assert_true(snprintf(text, sizeof(text), "lock %llu %llu %lld %ld %s\n",
			     (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
			     (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec, lock) <
		    (int)sizeof(text));
	f = fopen(journal, "a");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	/* ... but replaced by the user's since (another file): kept */
	assert_int_equal(sh_in(tmp, "mv r/.git/index.lock r/.git/old && echo again >r/.git/index.lock"), 0);
	assert_int_equal(merge_journal_release_locks(journal, &left), 0);
	assert_int_equal(sh_in(tmp, "test \"$(cat r/.git/index.lock)\" = again"), 0);
	assert_int_equal(sh_in(tmp, "mv r/.git/old r/.git/index.lock"), 0);
	assert_int_equal(merge_journal_release_locks(journal, &left), 0);
	assert_int_equal(sh_in(tmp, "test ! -e r/.git/index.lock"), 0);
}

/* 3: a merge records the index lock it takes in the journal; a whole merge leaves none. */
static int hook_check_journal(void *data, int attempt)
{
	const char *journal = data;
	char cmd[PATH_MAX + 64];

	(void)attempt;
	/* two records of index.lock: the lock as taken, then the new index renamed over it */
	snprintf(cmd, sizeof(cmd), "grep -c '^lock .*/index.lock$' '%s'", journal);
	return strcmp(sh_line_in(tmp, cmd), "2") ? -1 : 0;
}

static void test_merge_journals_its_index_lock(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char journal[PATH_MAX];

	snprintf(journal, sizeof(journal), "%s/merge.journal", tmp);
	o.journal = journal;
	o.before_ref_update = hook_check_journal;
	o.hook_data = journal;
	assert_int_equal(do_merge(&o, &res, &err), 0);
	assert_int_equal(sh_in(tmp, "test ! -e r/.git/index.lock && test ! -e merge.journal && "
			           "cd r && test -z \"$(git status --porcelain)\""), 0);
	merge_commit_result_release(&res);
}

/*
 * Random user states against git's own `read-tree -m -u OLD NEW` on a copy
 * of the same checkout (the oracle; fixed seed): where git refuses, sluice
 * defers with nothing touched; where sluice brings the checkout along, the
 * index and the files are what git makes of them. sluice may defer where
 * git would go on (counted), never the other way round.
 */
static void test_random_states_against_git(void **state)
{
	static const char *paths[] = { "a", "b", "c", "d/e", "d/f", "g" };
	unsigned seed = 20261124;
	int i, k, deferred_git_ok = 0, merged = 0, refused = 0, adopted = 0, kept = 0;

	for (i = 0; i < 80; i++) {
		struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
		struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
		struct sl_err err = SL_ERR_INIT;
		char script[8192], r[PATH_MAX], *before, *after;
		size_t n = 0;
		int git_ok, rc;

		n += (size_t)snprintf(script + n, sizeof(script) - n,
				      "rm -rf r rw && git init -q -b main r && cd r && mkdir d && "
				      "for f in a b c d/e d/f g; do echo \"base $f\" >$f; done && "
				      "echo '*.o' >.gitignore && git add . && git commit -qm base && "
				      "git worktree add -q -b run ../rw && cd ../rw && ");
		for (k = 0; k < 6; k++) {
			int op = (int)(rand_r(&seed) % 4);
			if (op == 1)
				n += (size_t)snprintf(script + n, sizeof(script) - n,
						      "echo \"run %s\" >%s && ", paths[k], paths[k]);
			else if (op == 2)
				n += (size_t)snprintf(script + n, sizeof(script) - n, "rm %s && ", paths[k]);
		}
		switch (rand_r(&seed) % 4) {
		case 0:
			n += (size_t)snprintf(script + n, sizeof(script) - n,
					      "rm -rf d && echo \"run d\" >d && ");
			break;
		case 1:
			n += (size_t)snprintf(script + n, sizeof(script) - n,
					      "mkdir -p h && echo \"run h/i\" >h/i && ");
			break;
		case 2:
			n += (size_t)snprintf(script + n, sizeof(script) - n, "echo \"run n\" >n && ");
			break;
		}
		n += (size_t)snprintf(script + n, sizeof(script) - n,
				      "git add -A . && git commit -qm run --allow-empty && cd ../r && set +e; ");
		for (k = 0; k < 6; k++) {
			const char *f = paths[k];
			switch (rand_r(&seed) % 20) {
			case 0:
				n += (size_t)snprintf(script + n, sizeof(script) - n, "echo mine >>%s; ", f);
				break;
			case 1:
				n += (size_t)snprintf(script + n, sizeof(script) - n,
						      "echo staged >>%s; git add %s; ", f, f);
				break;
			case 2:
				n += (size_t)snprintf(script + n, sizeof(script) - n,
						      "cp %s o.tmp; echo staged >>%s; git add %s; mv o.tmp %s; ",
						      f, f, f, f);
				break;
			case 3:
				n += (size_t)snprintf(script + n, sizeof(script) - n,
						      "git rm -q --cached %s; ", f);
				break;
			case 4:
				n += (size_t)snprintf(script + n, sizeof(script) - n, "rm -f %s; ", f);
				break;
			case 5:
				n += (size_t)snprintf(script + n, sizeof(script) - n,
						      "git show run:%s >%s 2>/dev/null && git add %s; ", f, f, f);
				break;
			case 6:
				n += (size_t)snprintf(script + n, sizeof(script) - n,
						      "git show run:%s >%s 2>/dev/null; ", f, f);
				break;
			}
		}
		switch (rand_r(&seed) % 6) {
		case 0:
			n += (size_t)snprintf(script + n, sizeof(script) - n, "echo mine >n; ");
			break;
		case 1:
			n += (size_t)snprintf(script + n, sizeof(script) - n, "mkdir -p d; echo obj >d/z.o; ");
			break;
		case 2:
			n += (size_t)snprintf(script + n, sizeof(script) - n, "echo mine >h; ");
			break;
		case 3:
			n += (size_t)snprintf(script + n, sizeof(script) - n,
					      "echo new >x && git add x; ");
			break;
		}
		n += (size_t)snprintf(script + n, sizeof(script) - n,
				      "set -e; cd .. && rm -rf oracle && cp -a r oracle");
		assert_true(n < sizeof(script));
		assert_int_equal(sh_in(tmp, "%s", script), 0);
		git_ok = !strcmp("ok", sh_line_in(tmp, "cd oracle && { git update-index -q --refresh; true; } && git read-tree -m -u main^{tree} "
						       "run^{tree} 2>../git.err && echo ok"));
		before = user_state();
		snprintf(r, sizeof(r), "%s/r", tmp);
		o.target = "main";
		o.head = "run";
		o.work_order_id = "WO-1";
		o.title = "t";
		o.run_id = "20260101-00000000";
		o.reviewer = "r";
		rc = merge_commit(r, &o, &res, &err);
		if (rc == 0) {
			merged++;
			/*
			 * git refuses a file that is not up to date even when it holds
			 * the merged bytes already; sluice takes those as they are (a
			 * checkout cut off by a crash, or the user made the same change)
			 */
			if (!git_ok && sh_in(tmp, "p=$(sed -n \"s/^error: Entry '\\(.*\\)' not uptodate.*/\\1/p\" "
					     "git.err) && test -n \"$p\" && cd r && git show \"run:$p\" | cmp - \"$p\" && "
					     "test \"$(git ls-files -s \"$p\" | cut -d' ' -f2)\" = \"$(git rev-parse \"run:$p\")\"") == 0) {
				adopted++;
				goto next;
			}
			/* git refuses to merge over a path the user untracked; sluice keeps it untracked */
			if (!git_ok && sh_in(tmp, "p=$(sed -n \"s/^error: Untracked working tree file '\\(.*\\)' "
					     "would be removed.*/\\1/p\" git.err) && test -n \"$p\" && cmp r/\"$p\" oracle/\"$p\" && "
					     "cd r && test -z \"$(git ls-files \"$p\")\" && ! git cat-file -e \"run:$p\" 2>/dev/null") == 0) {
				kept++;
				goto next;
			}
			if (!git_ok)
				fail_msg("case %d: git refuses (%s), sluice merged: %s", i,
					 sh_line_in(tmp, "cat git.err"), script);
			/* the same index and files as git's; untracked and ignored files kept */
			if (sh_in(tmp, "cd r && git ls-files -s -t >../ri && cd ../oracle && "
				       "git ls-files -s -t >../gi && cd .. && cmp ri gi && diff -r -x .git r oracle") != 0)
				fail_msg("case %d: not what git makes of it: %s", i, script);
		} else {
			assert_int_equal(rc, SL_ETRANSIENT);
			after = user_state();
			if (strcmp(before, after))
				fail_msg("case %d: deferred (%s) but touched: %s", i, res.reason, script);
			free(after);
			if (git_ok) {
				deferred_git_ok++;
				print_message("case %d: deferred where git goes on: %s\n%s\n", i, res.reason,
					      strstr(script, "cd ../rw"));
			} else {
				refused++;
			}
		}
next:
		free(before);
		merge_commit_result_release(&res);
	}
	print_message("%d merged (%d taking the user's copy of the merged bytes, %d keeping an "
		      "untracked file git would refuse to remove), %d deferred as git refuses, %d "
		      "deferred where git goes on\n", merged, adopted, kept, refused, deferred_git_ok);
	assert_true(merged > 10 && refused > 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_staged_change_clean_file_defers),
		T(test_rm_cached_kept),
		T(test_rm_cached_of_changed_file_defers),
		T(test_staged_edit_of_deleted_file_defers),
		T(test_staged_file_under_new_file_defers),
		T(test_folder_to_file_with_ignored_defers),
		T(test_rebase_in_progress_defers),
		T(test_rebase_apply_in_progress_defers),
		T(test_rebase_in_linked_worktree_defers),
		T(test_bisect_in_progress_defers),
		T(test_sequencer_in_progress_defers),
		T(test_missing_linked_worktree_defers),
		T(test_sparse_checkout_merges),
		T(test_skip_worktree_entry_merges),
		T(test_index_v4_untracked_cache),
		T(test_symlink_in_place_of_folder_defers),
		T(test_symlink_in_place_of_new_folder_defers),
		T(test_staged_same_change_kept_when_brought_back),
		T(test_dead_merge_locks),
		T(test_merge_journals_its_index_lock),
		T(test_random_states_against_git),
#undef T
	};

	return cmocka_run_group_tests(tests, test_git_group_setup, test_git_group_teardown);
}
