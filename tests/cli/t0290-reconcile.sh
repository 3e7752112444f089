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

test_expect_success 'a merge killed while updating the checkout: its half-written files are put back, the user edits stay' '
	git -C repo checkout -q -b side &&
	printf "one\ntwo\nthree\n" >repo/a.txt && printf "x\n" >repo/b.txt &&
	printf "new file\n" >repo/c.txt && git -C repo add a.txt b.txt c.txt &&
	git -C repo commit -q -m side && git -C repo checkout -q main &&
	old=$(git -C repo rev-parse main^{tree}) && new=$(git -C repo rev-parse side^{tree}) &&
	printf "one\ntw" >repo/a.txt &&
	printf "new file\n" >repo/c.txt &&
	echo "my own edit" >repo/README.md &&
	printf "%s\n%s\n%s\nwrite\n" "1:1" "$old" "$new" >repo/.system/merge.journal &&
	sluice -C repo tick >out 2>&1 &&
	test_grep "put back in line" out &&
	! test -f repo/.system/merge.journal &&
	! test -f repo/a.txt && ! test -f repo/c.txt &&
	test "$(cat repo/README.md)" = "my own edit" &&
	git -C repo status --porcelain >st && test_grep "^ M README.md" st &&
	test_grep -v "a.txt" st && test_grep -v "c.txt" st
'

test_done
