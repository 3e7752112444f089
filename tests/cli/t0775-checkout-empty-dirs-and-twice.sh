#!/bin/sh
# The checked-out target brought along as git does, found by trying it from
# outside: an empty folder of the user's inside a folder the merge turns
# into a file is removed as git read-tree -m -u removes it (the merge was
# deferred after deleting the tracked files around it, every tick); the
# target checked out in two work trees (git worktree add -f) is moved by
# neither, as git refuses to move such a branch.
. "$(dirname "$0")/lib.sh"

digest() { # DIR: HEAD, index with its flags and stat, status, work tree bytes
	(cd "$1" && git rev-parse HEAD && git ls-files -s --debug && git ls-files -v &&
		git status --porcelain=v2 --untracked-files=all &&
		find . -path ./.git -prune -o -path ./.system -prune -o -print | sort &&
		git ls-files -z | xargs -0 -r cat)
}

test_expect_success 'setup' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	mkdir -p repo/fd/sub && echo one >repo/fd/a && echo two >repo/fd/sub/b &&
	echo lines >repo/lines.txt && git -C repo add . && git -C repo commit -q -m fd
'

test_expect_success 'an empty folder in a folder the merge turns into a file: merged, as git does' '
	echo "rm -r fd && echo file >fd" >"$BUILDERS/E1.sh" && wo repo E1 &&
	mkdir repo/fd/empty repo/fd/sub/deeper && mkdir repo/fd/sub/deeper/deepest &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo E1) && test "$(state_of repo $run)" = merged &&
	test "$(cat repo/fd)" = file &&
	test -z "$(git -C repo status --porcelain --untracked-files=no)"
'

test_expect_success 'an empty folder beside a file of the user: deferred touching nothing' '
	git -C repo rm -q fd && mkdir -p repo/fd/sub && echo one >repo/fd/a &&
	echo two >repo/fd/sub/b && git -C repo add fd && git -C repo commit -q -m "fd again" &&
	echo "rm -r fd && echo file2 >fd" >"$BUILDERS/E2.sh" && wo repo E2 &&
	mkdir repo/fd/empty && echo mine >repo/fd/sub/mine.txt &&
	digest repo >before &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo E2) && test "$(state_of repo $run)" = approved &&
	sluice -C repo status --json $run >st && test_grep "fd/sub/mine.txt" st &&
	digest repo >after && test_cmp before after && test -d repo/fd/empty &&
	rm repo/fd/sub/mine.txt && sluice -C repo tick >out 2>&1 &&
	test "$(state_of repo $run)" = merged && test "$(cat repo/fd)" = file2
'

test_expect_success 'the target checked out in two work trees: deferred, neither touched' '
	git -C repo worktree add -q -f "$TRASH/second" main &&
	echo "user edit" >>second/lines.txt &&
	echo "echo run >>lines.txt" >"$BUILDERS/T1.sh" && wo repo T1 &&
	tip=$(git -C repo rev-parse main) &&
	digest repo >before1 && digest second >before2 &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo T1) && test "$(state_of repo $run)" = approved &&
	sluice -C repo status --json $run >st && test_grep "more than one work tree" st &&
	test_grep "second" st &&
	test "$(git -C repo rev-parse main)" = "$tip" &&
	digest repo >after1 && digest second >after2 &&
	test_cmp before1 after1 && test_cmp before2 after2 &&
	git -C repo worktree remove --force "$TRASH/second" &&
	sluice -C repo tick >out 2>&1 &&
	test "$(state_of repo $run)" = merged && test "$(git -C repo show main:lines.txt)" = "lines
run"
'

test_expect_success 'the index keeps its flags: intent-to-add, skip-worktree, assume-unchanged' '
	echo new >repo/ita.txt && git -C repo add -N ita.txt &&
	echo mine >>repo/README.md && git -C repo update-index --skip-worktree README.md &&
	git -C repo update-index --assume-unchanged fd &&
	git -C repo ls-files -v >v.before && git -C repo diff >d.before &&
	echo "echo run >>lines.txt" >"$BUILDERS/U1.sh" && wo repo U1 &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo U1) && test "$(state_of repo $run)" = merged &&
	git -C repo ls-files -v >v.after && test_cmp v.before v.after &&
	git -C repo diff >d.after && test_cmp d.before d.after
'

test_expect_success 'a FIFO of the user at a path the merge adds: deferred at once, not written' '
	mkfifo repo/fifo &&
	echo "echo f >fifo" >"$BUILDERS/P1.sh" && wo repo P1 &&
	tip=$(git -C repo rev-parse main) &&
	timeout 600 "$SLUICE" -C repo tick >out 2>&1 &&
	run=$(run_of repo P1) && test "$(state_of repo $run)" = approved &&
	sluice -C repo status --json $run >st && test_grep "FIFO" st &&
	test -p repo/fifo && test "$(git -C repo rev-parse main)" = "$tip" &&
	rm repo/fifo && sluice -C repo tick >out 2>&1 &&
	test "$(state_of repo $run)" = merged && test "$(cat repo/fifo)" = f
'

test_done
