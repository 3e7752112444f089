#!/bin/sh
# A `git worktree add` of a merge gates' checkout killed before it ended
# leaves git's entry .git/worktrees/worktree-train with git's "locked"
# ("initializing") and commondir made but empty. Every later `git worktree
# add` dies on it ("failed to read .../commondir"), git's prune never removes a
# locked entry, and the train stalled for good (t0245 under load: twelve
# cars "retried next tick" for 100 ticks). The start of a tick removes
# such an entry once git's lock is older than 10 s, or at once when no
# tester of the train is alive; a lock of anyone else (not "initializing"),
# or a fresh one while a tester lives (tests/unit/test_runner_train_checkout.c
# names a live one in the store), is left alone.
. "$(dirname "$0")/lib.sh"

printf '%s\n' 'echo a >a.txt' >"$BUILDERS/A.sh"

# plant DIR LOCK-TEXT TOUCH-DATE: the entry a killed add leaves
plant() {
	e=$1/.git/worktrees/worktree-train &&
	mkdir -p "$e" &&
	printf '%s' "$2" >"$e/locked" &&
	: >"$e/commondir" &&
	echo "$(cd "$1" && pwd -P)/.system/runs/20260101-000000-killed00/worktree-train/.git" >"$e/gitdir" &&
	touch -d "$3" "$e/locked" "$e/gitdir" "$e/commondir" "$e"
}

test_expect_success 'the half-made entry stops git worktree add (the premise)' '
	sluice_repo r "$(approve_reviewer_config)" "gates:" "  g: [\"true\"]" &&
	plant r initializing "2 minutes ago" &&
	! git -C r worktree add -q --detach "$TRASH/x" HEAD 2>err &&
	test_grep "commondir" err
'

test_expect_success 'a tick removes it (older than 10 s) and the car lands' '
	wo r A &&
	sluice -C r tick >tick.out 2>&1 &&
	test "$(state_of r "$(run_of r A)")" = merged &&
	! test -e r/.git/worktrees/worktree-train
'

test_expect_success 'a lock of someone else is left alone, and the car waits saying why' '
	rm -rf r && sluice_repo r "$(approve_reviewer_config)" "gates:" "  g: [\"true\"]" &&
	plant r "kept by a person" "2 minutes ago" &&
	wo r A &&
	sluice -C r tick >tick.out 2>&1 &&
	test "$(state_of r "$(run_of r A)")" = approved &&
	test -e r/.git/worktrees/worktree-train/locked &&
	sluice -C r status "$(run_of r A)" >st &&
	test_grep "commondir" st
'

# t0974 under load: the last of the killed ticks died in the add, and the
# queue settled within 10 s; the entry was left for the person to find.
test_expect_success 'a lock git took a moment ago, no tester alive: the add was killed, removed' '
	rm -rf r && sluice_repo r "$(approve_reviewer_config)" "gates:" "  g: [\"true\"]" &&
	plant r initializing "+1 hour" &&
	sluice -C r tick >tick.out 2>&1 &&
	! test -e r/.git/worktrees/worktree-train &&
	git -C r worktree prune -n >prune.out 2>&1 && ! test -s prune.out
'

# A whole tick killed between git's mkdir of the entry and its "locked"
# leaves the entry empty (t0803 under load: left behind when the queue
# settled within a second). Only a tester adds a checkout, and it is named
# in the store first: with none alive the next tick removes it, however new.
test_expect_success 'an empty entry, new, with no tester alive, is removed by the next tick' '
	rm -rf r && sluice_repo r "$(approve_reviewer_config)" "gates:" "  g: [\"true\"]" &&
	mkdir -p r/.git/worktrees/worktree-train2 &&
	touch -d "+1 hour" r/.git/worktrees/worktree-train2 &&
	sluice -C r tick >tick.out 2>&1 &&
	! test -e r/.git/worktrees/worktree-train2 &&
	git -C r worktree prune -n >prune.out 2>&1 && ! test -s prune.out
'

test_done
