#!/bin/sh
# A merge driver planted in the git config (selected by .git/info/attributes,
# by merge.default with no attribute at all, or in a worktree's own
# config.worktree) does not run in the `git merge` that puts a conflict's
# markers into the resolution worktree either (it runs there with the
# repository lock held): the conflict gets git's own markers and the
# resolver resolves it.
. "$(dirname "$0")/lib.sh"

# each builder waits until the other has started: both are built on one base
barrier="touch $TRASH/\$SLUICE_WORK_ORDER_ID.started; i=0; while test \$(ls $TRASH/*.started | wc -l) -lt 2 && test \$i -lt 3000; do sleep 0.1; i=\$((i + 1)); done"

for how in attributes default worktree; do
	test_expect_success "a driver chosen by $how: not run, markers as git makes them" '
		rm -f *.started &&
		sluice_repo $how &&
		approve_reviewer_config >>$how/.system/config.yaml &&
		seq 1 10 >$how/lines.txt && git -C $how add lines.txt &&
		git -C $how commit -q -m lines &&
		for n in 1 2; do
			{
				echo "$barrier" &&
				echo "sed -i \"5s/.*/five by P$n/\" lines.txt" &&
				case $how in
				attributes)
					echo "git config merge.evil.driver \"touch $TRASH/ran-$how; cp %B %A\"" &&
					echo "echo \"* merge=evil\" >\"\$(git rev-parse --git-common-dir)/info/attributes\"" ;;
				default)
					echo "git config merge.evil.driver \"touch $TRASH/ran-$how; cp %B %A\"" &&
					echo "git config merge.default evil" ;;
				worktree)
					echo "git config extensions.worktreeConfig true" &&
					echo "git config --worktree merge.evil.driver \"touch $TRASH/ran-$how; cp %B %A\"" &&
					echo "git config --worktree merge.default evil" ;;
				esac
			} >"$BUILDERS/P$n.sh" || return 1
		done &&
		wo $how P1 && wo $how P2 &&
		timeout 600 "$SLUICE" -C $how tick --jobs 2 >out 2>err &&
		timeout 600 "$SLUICE" -C $how tick >out 2>err &&
		test "$(state_of $how $(run_of $how P1))" = merged &&
		test "$(state_of $how $(run_of $how P2))" = merged &&
		! test -e ran-$how &&
		git -C $how show main:lines.txt >merged &&
		test_grep "^five by P1$" merged &&
		test_grep "^five by P2$" merged
	'
done

test_done
