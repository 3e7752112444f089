#!/bin/sh
# Reconciliation at the start of a tick: orphan worktrees and run/ branches
# are reported (never removed), and the user's .git/index.lock is never
# touched: a merge into the checked-out target waits for it.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	echo "echo r1 >r1.txt" >"$BUILDERS/R1.sh"
'

test_expect_success 'orphan worktrees and run/ branches are reported, not removed' '
	git -C repo branch run/GONE-abcdefgh &&
	git -C repo worktree add -q .system/runs/20260101-000000-zzzzzzzz/worktree -b run/OLD-zzzzzzzz &&
	sluice -C repo tick --json >tick.json 2>err &&
	test_grep "\"orphans\": 3" tick.json &&
	test_grep "orphan branch .run/GONE-abcdefgh." err &&
	test_grep "orphan worktree" err &&
	git -C repo rev-parse --verify -q run/GONE-abcdefgh &&
	test -d repo/.system/runs/20260101-000000-zzzzzzzz/worktree
'

test_expect_success 'the user index.lock is never touched; the merge waits for it' '
	: >repo/.git/index.lock &&
	wo repo R1 &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo R1) &&
	test "$(state_of repo $run)" = approved &&
	test -f repo/.git/index.lock &&
	sluice -C repo status --json $run >st && test_grep "index.lock" st &&
	rm repo/.git/index.lock &&
	sluice -C repo tick >out 2>&1 &&
	test "$(state_of repo $run)" = merged
'

test_expect_success 'a ref lock of the target older than 5 minutes is removed; a fresh one is not' '
	: >repo/.git/refs/heads/main.lock &&
	sluice -C repo tick >out 2>&1 &&
	test -f repo/.git/refs/heads/main.lock &&
	touch -d "10 minutes ago" repo/.git/refs/heads/main.lock &&
	sluice -C repo tick >out 2>&1 &&
	! test -f repo/.git/refs/heads/main.lock &&
	test_grep "older than 300 seconds" out
'

test_done
