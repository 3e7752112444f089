#!/bin/sh
# sluice prunes only the .git/worktrees entries it made (a run worktree under
# .system/runs/<id>/worktree of a run it knows), never the user's own, and
# never before git's grace period (gc.worktreePruneExpire) or when locked.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml
'

test_expect_success 'a user worktree whose folder is gone keeps its entry, index, HEAD and logs' '
	git -C repo worktree add -q "$TRASH/disk/wt" -b mine &&
	echo staged >"$TRASH/disk/wt/staged.txt" &&
	git -C "$TRASH/disk/wt" add staged.txt &&
	mv "$TRASH/disk" "$TRASH/unmounted" &&
	touch -d "2020-01-01" repo/.git/worktrees/wt/gitdir &&
	sluice -C repo tick >out 2>&1 &&
	test -f repo/.git/worktrees/wt/index &&
	test -f repo/.git/worktrees/wt/HEAD &&
	test -f repo/.git/worktrees/wt/logs/HEAD &&
	test_grep -v "pruned" out &&
	mv "$TRASH/unmounted" "$TRASH/disk" &&
	git -C "$TRASH/disk/wt" diff --cached --name-only >staged &&
	test_grep staged.txt staged
'

test_expect_success 'a user worktree placed under .system/runs with no run of that name is kept too' '
	git -C repo worktree add -q .system/runs/20260101-000000-zzzzzzzz/worktree -b theirs &&
	mv repo/.system/runs/20260101-000000-zzzzzzzz "$TRASH/aside" &&
	touch -d "2020-01-01" repo/.git/worktrees/worktree/gitdir &&
	sluice -C repo tick >out 2>&1 &&
	test -f repo/.git/worktrees/worktree/HEAD
'

test_done
