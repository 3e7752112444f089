#!/bin/sh
# A sparse checkout of the target is brought along by git read-tree -m -u,
# which (git 2.39) overwrites an untracked file of the user's at a path the
# merge adds inside the sparse cone ("will not overwrite with sparse
# update", and does), and deletes the untracked and ignored files in a
# folder the merge turns into a file. sluice checks first, as it does for a
# full checkout: deferred, touching nothing, merged once they are gone.
. "$(dirname "$0")/lib.sh"

digest() { # DIR
	(cd "$1" && git rev-parse HEAD && git ls-files -s --debug && git ls-files -v &&
		git status --porcelain=v2 --untracked-files=all --ignored=matching &&
		find . -path ./.git -prune -o -path ./.system -prune -o -print | sort &&
		find . -path ./.git -prune -o -path ./.system -prune -o -type f -print0 |
			sort -z | xargs -0 -r sha256sum)
}

test_expect_success 'setup: a sparse checkout (cone: in/)' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	mkdir -p repo/in/fd repo/out && echo i >repo/in/i.txt && echo a >repo/in/fd/a &&
	echo o >repo/out/o.txt && echo "*.o" >repo/.gitignore &&
	git -C repo add . && git -C repo commit -q -m tree &&
	git -C repo sparse-checkout set --cone in >/dev/null 2>&1 && test ! -e repo/out/o.txt
'

test_expect_success 'an untracked file of the user at a path the merge adds: deferred, kept' '
	echo "echo run >in/new.txt" >"$BUILDERS/S1.sh" && wo repo S1 &&
	echo mine >repo/in/new.txt &&
	tip=$(git -C repo rev-parse main) && digest repo >before &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo S1) && test "$(state_of repo $run)" = approved &&
	sluice -C repo status --json $run >st && test_grep "in/new.txt" st &&
	test "$(git -C repo rev-parse main)" = "$tip" &&
	digest repo >after && test_cmp before after &&
	rm repo/in/new.txt && sluice -C repo tick >out 2>&1 &&
	test "$(state_of repo $run)" = merged && test "$(cat repo/in/new.txt)" = run
'

test_expect_success 'ignored and untracked files in a folder the merge turns into a file: deferred, kept' '
	echo "rm -r in/fd && echo file >in/fd" >"$BUILDERS/S2.sh" && wo repo S2 &&
	echo obj >repo/in/fd/x.o &&
	tip=$(git -C repo rev-parse main) && digest repo >before &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo S2) && test "$(state_of repo $run)" = approved &&
	sluice -C repo status --json $run >st && test_grep "in/fd/x.o" st &&
	test "$(git -C repo rev-parse main)" = "$tip" &&
	digest repo >after && test_cmp before after &&
	rm repo/in/fd/x.o && sluice -C repo tick >out 2>&1 &&
	test "$(state_of repo $run)" = merged && test "$(cat repo/in/fd)" = file
'

test_done
