#!/bin/sh
# The worktree pool (issue 14) and a submodule. A fresh worktree has the
# submodule's folder empty (nothing fetched); a builder may run `git
# submodule update --init` in its worktree, which checks the submodule out
# there (its repository kept in the worktree's git entry). The next run that
# takes that worktree from the pool must get what a fresh checkout gives
# (git status clean, the submodule's folder as a fresh checkout leaves it),
# work in it (git status runs), and merge with only its own change.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool jq
SEEN=$TRASH/seen && export SEEN && mkdir -p "$SEEN"

cat >"$BUILDERS/A.sh" <<'EOS'
git -c protocol.file.allow=always submodule update --init -q >"$SEEN/A.init" 2>&1 || exit 1
test -f sub/lib.txt || exit 1
echo A >A.txt
EOS
cat >"$BUILDERS/B.sh" <<'EOS'
{ git status --porcelain --ignored; echo "status exit $?"; } >"$SEEN/B.status" 2>&1
ls -A sub >"$SEEN/B.sub" 2>&1
echo B >B.txt
EOS

test_expect_success 'setup: a repository with a submodule' '
	test_repo lib && echo lib >lib/lib.txt && git -C lib add lib.txt && git -C lib commit -q -m lib &&
	sluice_repo repo "$(approve_reviewer_config)" "worktree:" "  pool: 2" &&
	git -C repo -c protocol.file.allow=always submodule add -q "$TRASH/lib" sub &&
	git -C repo commit -q -m "the submodule" &&
	wo repo A && sluice -C repo tick >tick.out 2>&1 &&
	test "$(state_of repo "$(run_of repo A)")" = merged &&
	test "$(ls -d repo/.system/pool/_* | wc -l)" = 1
'

test_expect_success 'the next run takes the worktree: git works there and it is as fresh' '
	wo repo B && sluice -C repo tick >tick.out 2>&1 &&
	b=$(run_of repo B) &&
	sluice -C repo log "$b" | grep -q "worktree from the pool" &&
	git -C repo worktree add -q --detach "$TRASH/fresh" "$(sluice -C repo status --json "$b" | jq -r .base_commit)" &&
	{ (cd "$TRASH/fresh" && git status --porcelain --ignored; echo "status exit $?") >fresh.status 2>&1; } &&
	ls -A "$TRASH/fresh/sub" >fresh.sub 2>&1 &&
	git -C repo worktree remove --force "$TRASH/fresh" &&
	test_cmp fresh.status "$SEEN/B.status" &&
	test_cmp fresh.sub "$SEEN/B.sub" &&
	test "$(state_of repo "$b")" = merged &&
	grep "^diff --git" "repo/.system/runs/$b/diff.patch" >heads &&
	echo "diff --git a/B.txt b/B.txt" >want && test_cmp want heads
'

test_expect_success 'the pool and git agree afterwards' '
	test -z "$(git -C repo worktree prune --dry-run -v 2>&1)" &&
	git -C repo fsck --no-progress >fsck.out 2>&1 &&
	sluice -C repo audit >audit.out 2>&1
'

test_done
