#!/bin/sh
# A merge killed while it brings the checked-out target along, after the
# files are written and before the index and the ref (SLUICE_FAULT, tests
# only): the next tick frees the index.lock the dead merge recorded (and only
# that one), puts its half-done files back, then merges; the user's staged,
# unstaged and untracked work is the same byte for byte.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a dirty checkout of the target' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	seq 1 5 >repo/a.txt && seq 1 5 >repo/b.txt && git -C repo add . && git -C repo commit -q -m files &&
	echo staged >>repo/b.txt && git -C repo add b.txt && echo unstaged >>repo/b.txt &&
	echo untracked >repo/u.txt &&
	printf "%s\n" "echo run >>a.txt" "echo new >new.txt" >"$BUILDERS/K1.sh" && wo repo K1 &&
	checkout_digest repo >before
'

test_expect_success 'killed after writing the files: index.lock and journal left behind' '
	tip=$(git -C repo rev-parse main) &&
	{ SLUICE_FAULT=merge.after_checkout_files sluice -C repo tick >out 2>&1 || true; } &&
	test -f repo/.git/index.lock &&
	test -f repo/.system/merge.journal &&
	test_grep "^lock .*/index.lock\$" repo/.system/merge.journal &&
	test "$(git -C repo rev-parse main)" = "$tip" &&
	test "$(cat repo/new.txt)" = new
'

test_expect_success 'the next tick recovers and merges; the user work is intact' '
	run=$(run_of repo K1) &&
	sluice -C repo tick >out 2>&1 &&
	! test -f repo/.git/index.lock && ! test -f repo/.system/merge.journal &&
	test "$(state_of repo $run)" = merged &&
	test "$(cat repo/new.txt)" = new && test "$(tail -n 1 repo/a.txt)" = run &&
	checkout_digest repo >after &&
	test_cmp before after &&
	test "$(git -C repo show :b.txt | tail -n 1)" = staged &&
	test "$(tail -n 1 repo/b.txt)" = unstaged
'

test_done
