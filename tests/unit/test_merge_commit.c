/*
 * merge_commit: the no-ff merge commit, its message and trailers, the CAS of
 * the target, and the checked-out target brought along safely (the user's
 * changes kept byte for byte, or the merge deferred with nothing touched).
 * Real repositories and the git CLI.
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
#include "merge/merge.h"
#include "test_helpers.h"

static char tmp[256];

static int setup(void **state)
{
	if (test_home_tmpdir(tmp, sizeof(tmp), "/tmp/sl-merge-XXXXXX"))
		return -1;
	/*
	 * base: a.txt (5 lines), b.txt, e.txt; main checked out in r/; the run
	 * branch in the worktree rw/ changes a.txt line 5, e.txt, adds d.txt;
	 * main gets c.txt. Branch x: main plus x.txt (someone else's work).
	 */
	return sh_in(tmp, "git init -q -b main r && cd r && printf '1\\n2\\n3\\n4\\n5\\n' >a.txt && "
		         "echo b >b.txt && echo e >e.txt && git add . && git commit -qm base && "
		         "git worktree add -q -b run ../rw && echo c >c.txt && git add c.txt && "
		         "git commit -qm c && git checkout -q -b x && echo x >x.txt && git add x.txt && "
		         "git commit -qm x && git checkout -q main && cd ../rw && sed -i 5s/5/five/ a.txt && "
		         "echo e2 >e.txt && echo d >d.txt && git add . && git commit -qm run");
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

	repo_path(r, sizeof(r));
	if (!o->target)
		o->target = "main";
	o->head = "run";
	o->work_order_id = "WO-2026-020";
	o->title = "Runner worktree isolation";
	o->run_id = "20260101-abcdef12";
	o->reviewer = "reviewer-bot";
	rc = merge_commit(r, o, res, err);
	if (rc)
		print_message("merge_commit: %d %s\n", rc, err->msg);
	return rc;
}

/* A fingerprint of the user's state: HEAD, index, unstaged diff, untracked files. */
static char *user_state(void)
{
	return strdup(sh_line_in(tmp, "cd r && { git diff --cached --binary; git diff --binary; "
			              "git status --porcelain --untracked-files=all; "
			              "cat b.txt c.txt u.txt 2>/dev/null; } | sha256sum"));
}

static void test_commit_parents_message_trailers(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char tip[64], run[64], hex[GIT_OID_HEXSZ + 1];

	snprintf(tip, sizeof(tip), "%s", rev("main"));
	snprintf(run, sizeof(run), "%s", rev("run"));
	o.resolved_with = "20251231-00000000";
	assert_int_equal(do_merge(&o, &res, &err), 0);
	assert_int_equal(res.status, MERGE_MERGED);
	assert_int_equal(res.attempts, 1);
	assert_true(res.checkout_updated);
	assert_string_equal(git_oid_tostr(hex, sizeof(hex), &res.commit), rev("main"));
	assert_string_equal(tip, rev("main^1"));
	assert_string_equal(run, rev("main^2"));
	assert_string_equal(tip, git_oid_tostr(hex, sizeof(hex), &res.tip));
	assert_int_equal(sh_in(tmp, "cd r && git log -1 --format=%%B main >msg && printf '%%s\\n' "
			           "'Merge WO-2026-020: Runner worktree isolation' '' "
			           "'Work-Order: WO-2026-020' 'Sluice-Run: 20260101-abcdef12' "
			           "'Reviewed-by: reviewer-bot' 'Resolved-with: 20251231-00000000' '' "
			           ">want && cmp msg want && rm msg want"), 0);
	assert_string_equal("sluice <sluice@localhost>",
			    sh_line_in(tmp, "cd r && git log -1 --format='%cn <%ce>' main"));
	assert_string_equal("WO-2026-020",
			    sh_line_in(tmp, "cd r && git log -1 --format='%(trailers:key=Work-Order,valueonly)'"));
	/* the checkout followed: files there, nothing left over */
	assert_int_equal(sh_in(tmp, "cd r && test -f d.txt && test \"$(cat e.txt)\" = e2 && "
			           "test -z \"$(git status --porcelain)\""), 0);
	merge_commit_result_release(&res);
}

static void test_dirty_checkout_survives(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char *before, *after;

	/* staged and unstaged b.txt, unstaged c.txt, untracked binary u.txt */
	assert_int_equal(sh_in(tmp, "cd r && echo staged >>b.txt && git add b.txt && echo unstaged >>b.txt && "
			           "echo more >>c.txt && printf 'u\\0v' >u.txt"), 0);
	before = user_state();
	assert_int_equal(do_merge(&o, &res, &err), 0);
	assert_true(res.checkout_updated);
	after = user_state();
	assert_string_equal(before, after);
	assert_int_equal(sh_in(tmp, "cd r && test -f d.txt && test \"$(cat e.txt)\" = e2 && "
			           "git diff --cached --name-only >s && test \"$(cat s)\" = b.txt && "
			           "test \"$(git status --porcelain -- u.txt)\" = '?? u.txt' && rm s"), 0);
	free(before);
	free(after);
	merge_commit_result_release(&res);
}

static void test_colliding_edit_defers(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char tip[64], *before, *after;

	snprintf(tip, sizeof(tip), "%s", rev("main"));
	assert_int_equal(sh_in(tmp, "cd r && echo mine >e.txt && printf 'u\\n' >u.txt"), 0);
	before = user_state();
	assert_int_equal(do_merge(&o, &res, &err), SL_ETRANSIENT);
	assert_int_equal(res.status, MERGE_DEFERRED);
	assert_true(merge_paths_has(&res.paths, "e.txt"));
	assert_non_null(strstr(res.reason, "collide with the merge (e.txt)"));
	assert_non_null(strstr(res.reason, "commit or stash them"));
	after = user_state();
	assert_string_equal(before, after);
	assert_string_equal(tip, rev("main"));
	assert_int_equal(sh_in(tmp, "cd r && test ! -e d.txt"), 0);
	free(before);
	free(after);
	merge_commit_result_release(&res);
}

static void test_untracked_collision_defers(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char tip[64];

	snprintf(tip, sizeof(tip), "%s", rev("main"));
	assert_int_equal(sh_in(tmp, "cd r && echo mine >d.txt"), 0);
	assert_int_equal(do_merge(&o, &res, &err), SL_ETRANSIENT);
	assert_true(merge_paths_has(&res.paths, "d.txt"));
	assert_string_equal(tip, rev("main"));
	assert_int_equal(sh_in(tmp, "cd r && test \"$(cat d.txt)\" = mine"), 0);
	merge_commit_result_release(&res);
}

static void test_detached_head_moves_ref_only(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char tip[64];

	snprintf(tip, sizeof(tip), "%s", rev("main"));
	assert_int_equal(sh_in(tmp, "cd r && git checkout -q --detach main"), 0);
	assert_int_equal(do_merge(&o, &res, &err), 0);
	assert_false(res.checkout_updated);
	assert_string_equal(tip, rev("main^1"));
	assert_string_equal(tip, rev("HEAD"));
	assert_int_equal(sh_in(tmp, "cd r && test ! -e d.txt && test -z \"$(git status --porcelain)\""), 0);
	merge_commit_result_release(&res);
}

/* main checked out in a linked worktree (the main one is detached): that one follows. */
static void test_linked_worktree_brought_along(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(sh_in(tmp, "cd r && git checkout -q --detach && git worktree add -q ../lw main && "
			           "echo mine >../lw/u.txt"), 0);
	assert_int_equal(do_merge(&o, &res, &err), 0);
	assert_true(res.checkout_updated);
	assert_int_equal(sh_in(tmp, "cd lw && test -f d.txt && test \"$(cat u.txt)\" = mine && "
			           "test \"$(git status --porcelain)\" = '?? u.txt' && test ! -e ../r/d.txt"),
			 0);
	merge_commit_result_release(&res);
}

static void test_merge_in_progress_defers(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char tip[64], *before, *after;

	assert_int_equal(sh_in(tmp, "cd r && git checkout -q -b y main~1 && echo y >c.txt && git add c.txt && "
			           "git commit -qm y && git checkout -q main && "
			           "! git merge -q y >/dev/null 2>&1 && test -f .git/MERGE_HEAD"), 0);
	snprintf(tip, sizeof(tip), "%s", rev("main"));
	before = user_state();
	assert_int_equal(do_merge(&o, &res, &err), SL_ETRANSIENT);
	assert_int_equal(res.status, MERGE_DEFERRED);
	assert_non_null(strstr(res.reason, "is in the middle of a merge"));
	after = user_state();
	assert_string_equal(before, after);
	assert_string_equal(tip, rev("main"));
	assert_int_equal(sh_in(tmp, "cd r && test -f .git/MERGE_HEAD"), 0);
	free(before);
	free(after);
	merge_commit_result_release(&res);
}

/* libgit2 cannot read a split index: git read-tree brings the checkout along. */
static void test_split_index_uses_git(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char *before, *after;

	assert_int_equal(sh_in(tmp, "cd r && git update-index --split-index && echo staged >>b.txt && "
			           "git add b.txt && echo more >>c.txt && printf 'u' >u.txt"), 0);
	before = user_state();
	assert_int_equal(do_merge(&o, &res, &err), 0);
	assert_true(res.checkout_updated);
	assert_true(res.checkout_via_git);
	after = user_state();
	assert_string_equal(before, after);
	assert_int_equal(sh_in(tmp, "cd r && test -f d.txt && test \"$(cat e.txt)\" = e2 && "
			           "test \"$(git rev-parse main^2)\" = \"$(git rev-parse run)\""), 0);
	free(before);
	free(after);
	merge_commit_result_release(&res);
}

static void test_split_index_collision_defers(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char tip[64], *before, *after;

	assert_int_equal(sh_in(tmp, "cd r && git update-index --split-index && echo mine >e.txt"), 0);
	snprintf(tip, sizeof(tip), "%s", rev("main"));
	before = user_state();
	assert_int_equal(do_merge(&o, &res, &err), SL_ETRANSIENT);
	assert_int_equal(res.status, MERGE_DEFERRED);
	assert_non_null(strstr(res.reason, "collide with the merge"));
	after = user_state();
	assert_string_equal(before, after);
	assert_string_equal(tip, rev("main"));
	assert_int_equal(sh_in(tmp, "cd r && test ! -e d.txt && test \"$(cat e.txt)\" = mine"), 0);
	free(before);
	free(after);
	merge_commit_result_release(&res);
}

static void test_missing_target(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;

	o.target = "trunk";
	assert_int_equal(do_merge(&o, &res, &err), SL_ENOTFOUND);
	assert_non_null(strstr(err.msg, "target branch 'trunk' does not exist"));
	merge_commit_result_release(&res);
}

static void test_conflict_leaves_target(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char tip[64];

	assert_int_equal(sh_in(tmp, "cd r && echo theirs-too >e.txt && git commit -qam e"), 0);
	snprintf(tip, sizeof(tip), "%s", rev("main"));
	assert_int_equal(do_merge(&o, &res, &err), SL_ECONFLICT);
	assert_int_equal(res.status, MERGE_CONFLICT);
	assert_int_equal(res.paths.n, 1);
	assert_string_equal(res.paths.v[0], "e.txt");
	assert_string_equal(tip, rev("main"));
	assert_int_equal(sh_in(tmp, "cd r && test -z \"$(git status --porcelain)\""), 0);
	merge_commit_result_release(&res);
}

/* The hook: someone else moves main to x (as a push would) on the first attempt. */
static int move_main(void *data, int attempt)
{
	int *calls = data;

	(*calls)++;
	return attempt == 1 ? sh_in(tmp, "cd r && git update-ref refs/heads/main x") : 0;
}

static void test_cas_target_moved(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char x[64];
	int calls = 0;

	assert_int_equal(sh_in(tmp, "cd r && git checkout -q --detach"), 0); /* main not checked out */
	snprintf(x, sizeof(x), "%s", rev("x"));
	o.before_ref_update = move_main;
	o.hook_data = &calls;
	assert_int_equal(do_merge(&o, &res, &err), 0);
	assert_int_equal(res.attempts, 2);
	assert_int_equal(calls, 2);
	assert_string_equal(x, rev("main^1")); /* x's commit is not lost */
	assert_string_equal(rev("run"), rev("main^2"));
	assert_int_equal(sh_in(tmp, "cd r && git cat-file -e main:x.txt && git cat-file -e main:d.txt"), 0);
	merge_commit_result_release(&res);
}

static void test_cas_target_moved_checked_out(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char x[64];
	int calls = 0;

	assert_int_equal(sh_in(tmp, "cd r && printf 'u\\n' >u.txt"), 0);
	snprintf(x, sizeof(x), "%s", rev("x"));
	o.before_ref_update = move_main;
	o.hook_data = &calls;
	assert_int_equal(do_merge(&o, &res, &err), 0);
	assert_int_equal(res.attempts, 2);
	assert_string_equal(x, rev("main^1"));
	assert_string_equal(rev("run"), rev("main^2"));
	/* the run's files arrived, the user's untracked file stayed */
	assert_int_equal(sh_in(tmp, "cd r && test -f d.txt && test \"$(cat e.txt)\" = e2 && "
			           "test \"$(cat u.txt)\" = u && test -f x.txt && "
			           "test \"$(git status --porcelain)\" = '?? u.txt'"), 0);
	merge_commit_result_release(&res);
}

static void test_locked_ref_reverts_checkout(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char tip[64], *before, *after;

	assert_int_equal(sh_in(tmp, "cd r && echo staged >>b.txt && git add b.txt && "
			           ": >.git/refs/heads/main.lock"), 0);
	snprintf(tip, sizeof(tip), "%s", rev("main"));
	before = user_state();
	assert_int_equal(do_merge(&o, &res, &err), SL_ELOCKED);
	after = user_state();
	assert_string_equal(before, after);
	assert_false(res.checkout_updated);
	assert_int_equal(sh_in(tmp, "cd r && test ! -e d.txt && test \"$(cat e.txt)\" = e && "
			           "rm .git/refs/heads/main.lock"), 0);
	assert_string_equal(tip, rev("main"));
	free(before);
	free(after);
	merge_commit_result_release(&res);
}

static void test_already_merged(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	git_oid first;

	assert_int_equal(do_merge(&o, &res, &err), 0);
	git_oid_cpy(&first, &res.commit);
	merge_commit_result_release(&res);
	memset(&res, 0, sizeof(res));
	assert_int_equal(do_merge(&o, &res, &err), SL_EEXISTS);
	assert_int_equal(res.status, MERGE_MERGED);
	assert_true(git_oid_equal(&first, &res.commit));
	merge_commit_result_release(&res);
}

static void test_message_newline_rejected(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char r[PATH_MAX];

	repo_path(r, sizeof(r));
	o.target = "main";
	o.head = "run";
	o.work_order_id = "WO-1";
	o.title = "t";
	o.run_id = "r1\nReviewed-by: forged";
	o.reviewer = "rev";
	assert_int_equal(merge_commit(r, &o, &res, &err), SL_EINVALID);
	merge_commit_result_release(&res);
}

/* The first line of a script made from fmt, in r/ (a new string: sh_line_in's buffer is shared). */
static char *linef(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *linef(const char *fmt, ...)
{
	char script[1024];
	va_list ap;
	int n;

	n = snprintf(script, sizeof(script), "cd r && ");
	va_start(ap, fmt);
	vsnprintf(script + n, sizeof(script) - (size_t)n, fmt, ap);
	va_end(ap);
	return strdup(sh_line_in(tmp, script));
}

static void assert_same(char *a, char *b)
{
	assert_non_null(a);
	assert_non_null(b);
	assert_true(strlen(a) == 40);
	assert_string_equal(a, b);
	free(a);
	free(b);
}

/* merge_build: the car of the merge train, a merge commit of run on `onto` that moves no ref. */
static void build_car(const char *onto, struct merge_commit_result *res, char car[41])
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct sl_err err = SL_ERR_INIT;
	char r[PATH_MAX], before[64];

	repo_path(r, sizeof(r));
	snprintf(before, sizeof(before), "%s", rev("main"));
	o.target = "main";
	o.head = "run";
	o.work_order_id = "WO-2026-020";
	o.title = "Runner worktree isolation";
	o.run_id = "20260101-abcdef12";
	o.reviewer = "reviewer-bot";
	assert_int_equal(merge_build(r, &o, onto, res, &err), 0);
	git_oid_tostr(car, 41, &res->commit);
	assert_string_equal(before, rev("main")); /* no ref moved */
	assert_same(linef("git rev-parse %s", onto), linef("git rev-parse %s^1", car));
	assert_same(linef("git rev-parse run"), linef("git rev-parse %s^2", car));
	/* git's tree of the merge */
	assert_same(linef("git merge-tree --write-tree %s run", onto),
		    linef("git rev-parse %s^{tree}", car));
}

static void test_build_car_then_land_exactly_it(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result car = MERGE_COMMIT_RESULT_INIT, res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char hex[41], landed[41];

	build_car("main", &car, hex);
	o.commit = hex;
	assert_int_equal(do_merge(&o, &res, &err), 0);
	assert_int_equal(res.status, MERGE_MERGED);
	assert_string_equal(hex, rev("main")); /* the tested commit itself, byte for byte */
	assert_string_equal(hex, git_oid_tostr(landed, sizeof(landed), &res.commit));
	assert_true(res.checkout_updated);
	assert_int_equal(sh_in(tmp, "cd r && test -f d.txt && test -z \"$(git status --porcelain)\""), 0);
	merge_commit_result_release(&car);
	merge_commit_result_release(&res);
}

static void test_built_car_on_moved_target_is_not_landed(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result car = MERGE_COMMIT_RESULT_INIT, res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char hex[41], moved[64];

	build_car("main", &car, hex);
	/* a person commits to main after the car was built (and tested) */
	assert_int_equal(sh_in(tmp, "cd r && echo p >p.txt && git add p.txt && git commit -qm p"), 0);
	snprintf(moved, sizeof(moved), "%s", rev("main"));
	o.commit = hex;
	assert_int_equal(do_merge(&o, &res, &err), SL_ETRANSIENT);
	assert_int_equal(res.status, MERGE_MOVED);
	assert_string_equal(moved, rev("main")); /* nothing landed on an untested base */
	assert_int_equal(sh_in(tmp, "cd r && test ! -e d.txt && test -z \"$(git status --porcelain)\""), 0);
	merge_commit_result_release(&car);
	merge_commit_result_release(&res);
}

static void test_car_of_another_head_is_refused(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char before[64], x[64];

	snprintf(before, sizeof(before), "%s", rev("main"));
	snprintf(x, sizeof(x), "%s", rev("x")); /* not a merge commit of the run's head */
	o.commit = x;
	assert_int_equal(do_merge(&o, &res, &err), SL_EINVALID);
	assert_string_equal(before, rev("main"));
	merge_commit_result_release(&res);
}

static void test_find_only_merges_nothing(void **state)
{
	struct merge_commit_opts o = MERGE_COMMIT_OPTS_INIT;
	struct merge_commit_result res = MERGE_COMMIT_RESULT_INIT, res2 = MERGE_COMMIT_RESULT_INIT;
	struct sl_err err = SL_ERR_INIT;
	char before[64], merge[64], hex[41];

	snprintf(before, sizeof(before), "%s", rev("main"));
	o.find_only = 1;
	assert_int_equal(do_merge(&o, &res, &err), SL_ETRANSIENT);
	assert_int_equal(res.status, MERGE_MOVED);
	assert_string_equal(before, rev("main"));
	/* merged by hand: found, never made again */
	assert_int_equal(sh_in(tmp, "cd r && git merge -q --no-ff -m hand run"), 0);
	snprintf(merge, sizeof(merge), "%s", rev("main"));
	sl_err_clear(&err);
	assert_int_equal(do_merge(&o, &res2, &err), SL_EEXISTS);
	assert_string_equal(merge, git_oid_tostr(hex, sizeof(hex), &res2.commit));
	assert_string_equal(merge, rev("main"));
	merge_commit_result_release(&res);
	merge_commit_result_release(&res2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_commit_parents_message_trailers),
		T(test_dirty_checkout_survives),
		T(test_colliding_edit_defers),
		T(test_untracked_collision_defers),
		T(test_detached_head_moves_ref_only),
		T(test_linked_worktree_brought_along),
		T(test_merge_in_progress_defers),
		T(test_split_index_uses_git),
		T(test_split_index_collision_defers),
		T(test_missing_target),
		T(test_conflict_leaves_target),
		T(test_cas_target_moved),
		T(test_cas_target_moved_checked_out),
		T(test_locked_ref_reverts_checkout),
		T(test_already_merged),
		T(test_message_newline_rejected),
		T(test_build_car_then_land_exactly_it),
		T(test_built_car_on_moved_target_is_not_landed),
		T(test_car_of_another_head_is_refused),
		T(test_find_only_merges_nothing),
#undef T
	};

	return cmocka_run_group_tests(tests, test_git_group_setup, test_git_group_teardown);
}
