#!/bin/sh
# A merge driver planted in the shared .git/config (selected by
# .git/info/attributes, or by merge.default with no attribute at all) does
# not run in the `git merge` that puts a conflict's markers into the
# resolution worktree either (it runs there with the repository lock held):
# the conflict gets git's own markers and the resolver resolves it.
. "$(dirname "$0")/lib.sh"

for how in attributes default; do
	test_expect_success "a driver chosen by $how: not run, markers as git makes them" '
		sluice_repo $how &&
		approve_reviewer_config >>$how/.system/config.yaml &&
		seq 1 10 >$how/lines.txt && git -C $how add lines.txt &&
		git -C $how commit -q -m lines &&
		{
			echo "sed -i \"5s/.*/five by P1/\" lines.txt" &&
			echo "git config merge.evil.driver \"touch $TRASH/ran-$how; cp %B %A\"" &&
			if test $how = attributes; then
				echo "echo \"* merge=evil\" >\"\$(git rev-parse --git-common-dir)/info/attributes\""
			else
				echo "git config merge.default evil"
			fi
		} >"$BUILDERS/P1.sh" &&
		echo "sed -i \"5s/.*/five by P2/\" lines.txt" >"$BUILDERS/P2.sh" &&
		wo $how P1 && wo $how P2 &&
		timeout 300 "$SLUICE" -C $how tick --jobs 2 >out 2>err &&
		timeout 300 "$SLUICE" -C $how tick >out 2>err &&
		test "$(state_of $how $(run_of $how P1))" = merged &&
		test "$(state_of $how $(run_of $how P2))" = merged &&
		! test -e ran-$how &&
		git -C $how show main:lines.txt >merged &&
		test_grep "^five by P1$" merged &&
		test_grep "^five by P2$" merged
	'
done

test_done
