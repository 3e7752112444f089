#!/bin/sh
# git refuses to move a branch that a rebase in progress will update
# (git rebase --update-refs lists it in rebase-merge/update-refs; "cannot
# force update the branch 'main' checked out at ..."); sluice moved it. In
# the main work tree and in a linked one: deferred, named, merged after.
. "$(dirname "$0")/lib.sh"

setup_rebase() { # DIR BRANCH: BRANCH rebased with --update-refs, stopped; main in its range
	git -C "$1" checkout -q -b "$2" &&
	echo f1 >"$1/$2-1.txt" && git -C "$1" add "$2-1.txt" && git -C "$1" commit -q -m f1 &&
	git -C "$1" branch -f main HEAD &&
	echo f2 >"$1/$2-2.txt" && git -C "$1" add "$2-2.txt" && git -C "$1" commit -q -m f2 &&
	(cd "$1" && GIT_SEQUENCE_EDITOR="sed -i 1ibreak" git rebase -q -i --update-refs HEAD~2 \
		>/dev/null 2>&1) &&
	grep -qx refs/heads/main "$(git -C "$1" rev-parse --absolute-git-dir)/rebase-merge/update-refs"
}

test_expect_success 'setup' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml
'

test_expect_success 'a rebase --update-refs that will update the target: deferred, named' '
	setup_rebase repo feat &&
	echo "echo u >u.txt" >"$BUILDERS/U1.sh" && wo repo U1 &&
	tip=$(git -C repo rev-parse main) &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo U1) && test "$(state_of repo $run)" = approved &&
	sluice -C repo status --json $run >st && test_grep "update-refs" st &&
	test "$(git -C repo rev-parse main)" = "$tip" &&
	(cd repo && git rebase --continue >/dev/null 2>&1) &&
	sluice -C repo tick >out 2>&1 && test "$(state_of repo $run)" = merged
'

test_expect_success 'the same in a linked work tree' '
	git -C repo worktree add -q "$TRASH/lw" -b other main &&
	setup_rebase lw feat2 &&
	echo "echo v >v.txt" >"$BUILDERS/U2.sh" && wo repo U2 &&
	tip=$(git -C repo rev-parse main) &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo U2) && test "$(state_of repo $run)" = approved &&
	sluice -C repo status --json $run >st && test_grep "update-refs" st &&
	test "$(git -C repo rev-parse main)" = "$tip" &&
	(cd lw && git rebase --continue >/dev/null 2>&1) &&
	sluice -C repo tick >out 2>&1 && test "$(state_of repo $run)" = merged
'

test_done
