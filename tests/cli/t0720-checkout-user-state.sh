#!/bin/sh
# The user's checkout of the target, in states a merge must not move: the
# user's own .git/index.lock after a killed merge, a rebase in progress, a
# symbolic link in place of a tracked folder. Through `sluice tick`: the run
# stays approved with the reason, the target does not move, nothing of the
# user's changes; once the user is done, a later tick merges.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a repository and an approving reviewer' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	mkdir repo/s && echo sx >repo/s/x.txt && git -C repo add s &&
	git -C repo commit -q -m s
'

test_expect_success 'a dead merge journal does not free the user index.lock' '
	t=$(git -C repo rev-parse main^{tree}) &&
	printf "%s\n%s\n%s\n" "1:1" "$t" "$t" >repo/.system/merge.journal &&
	touch -d "30 seconds ago" repo/.system/merge.journal &&
	echo "the user git" >repo/.git/index.lock &&
	touch -d "20 seconds ago" repo/.git/index.lock &&
	echo "echo one >one.txt" >"$BUILDERS/L1.sh" && wo repo L1 &&
	tip=$(git -C repo rev-parse main) &&
	sluice -C repo tick >out 2>&1 &&
	test "$(cat repo/.git/index.lock)" = "the user git" &&
	test "$(git -C repo rev-parse main)" = "$tip" &&
	run=$(run_of repo L1) && test "$(state_of repo $run)" = approved &&
	rm repo/.git/index.lock &&
	sluice -C repo tick >out 2>&1 &&
	test "$(state_of repo $run)" = merged &&
	test "$(cat repo/one.txt)" = one && test -z "$(git -C repo status --porcelain --untracked-files=no)"
'

test_expect_success 'a rebase of the target in progress: deferred, named, merged after it' '
	echo "echo two >two.txt" >"$BUILDERS/R1.sh" && wo repo R1 &&
	echo mine >repo/mine.txt && git -C repo add mine.txt && git -C repo commit -q -m mine &&
	(cd repo && GIT_SEQUENCE_EDITOR="sed -i 1s/^pick/edit/" git rebase -q -i HEAD~1 >/dev/null 2>&1) &&
	test -d repo/.git/rebase-merge &&
	tip=$(git -C repo rev-parse main) &&
	checkout_digest repo >before &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo R1) && test "$(state_of repo $run)" = approved &&
	sluice -C repo status --json $run >st && test_grep "middle of a rebase" st &&
	test "$(git -C repo rev-parse main)" = "$tip" &&
	checkout_digest repo >after && test_cmp before after &&
	(cd repo && git rebase --continue >/dev/null 2>&1) &&
	sluice -C repo tick >out 2>&1 &&
	test "$(state_of repo $run)" = merged &&
	test "$(git -C repo rev-parse main~1)" = "$tip" && test "$(cat repo/two.txt)" = two
'

test_expect_success 'a link in place of a tracked folder: nothing written through it' '
	echo "echo sy >s/y.txt" >"$BUILDERS/S1.sh" && wo repo S1 &&
	mv repo/s outside && ln -s ../outside repo/s &&
	tip=$(git -C repo rev-parse main) &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo S1) && test "$(state_of repo $run)" = approved &&
	sluice -C repo status --json $run >st && test_grep "symbolic link" st &&
	test "$(git -C repo rev-parse main)" = "$tip" &&
	! test -e outside/y.txt && test "$(cat outside/x.txt)" = sx && test -L repo/s
'

test_expect_success 'a staged change whose file equals HEAD: deferred, the index entry kept' '
	rm repo/s && mv outside repo/s &&
	sluice -C repo tick >out 2>&1 && run=$(run_of repo S1) && test "$(state_of repo $run)" = merged &&
	echo "echo run >>one.txt" >"$BUILDERS/I1.sh" && wo repo I1 &&
	echo staged >repo/one.txt && git -C repo add one.txt && echo one >repo/one.txt &&
	tip=$(git -C repo rev-parse main) &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo I1) && test "$(state_of repo $run)" = approved &&
	sluice -C repo status --json $run >st && test_grep "staged changes" st &&
	test "$(git -C repo rev-parse main)" = "$tip" &&
	test "$(git -C repo show :one.txt)" = staged && test "$(cat repo/one.txt)" = one &&
	git -C repo commit -q -m "user staged" && git -C repo checkout -q one.txt &&
	sluice -C repo tick >out 2>&1 &&
	test "$(state_of repo $run)" = merged
'

test_expect_success 'a folder the merge turns into a file holds an ignored file: nothing deleted' '
	mkdir repo/fd && echo one >repo/fd/a.txt && echo two >repo/fd/b.txt && echo "*.o" >repo/.gitignore &&
	git -C repo add fd .gitignore && git -C repo commit -q -m fd &&
	echo "rm -r fd && echo file >fd" >"$BUILDERS/F1.sh" && wo repo F1 &&
	echo obj >repo/fd/x.o &&
	tip=$(git -C repo rev-parse main) &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo F1) && test "$(state_of repo $run)" = approved &&
	sluice -C repo status --json $run >st && test_grep "in the way" st &&
	test "$(git -C repo rev-parse main)" = "$tip" &&
	test "$(cat repo/fd/a.txt)" = one && test "$(cat repo/fd/b.txt)" = two &&
	test "$(cat repo/fd/x.o)" = obj &&
	test -z "$(git -C repo status --porcelain --untracked-files=no)" &&
	rm repo/fd/x.o && sluice -C repo tick >out 2>&1 &&
	test "$(state_of repo $run)" = merged && test "$(cat repo/fd)" = file
'

test_expect_success 'a clean sparse checkout: merged on the first tick, outside files not written' '
	mkdir repo/far && echo far >repo/far/f.txt && git -C repo add far &&
	git -C repo commit -q -m far &&
	git -C repo sparse-checkout set s >/dev/null 2>&1 && test ! -e repo/far/f.txt &&
	echo "echo changed >far/f.txt && echo near >near.txt" >"$BUILDERS/P1.sh" && wo repo P1 &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo P1) && test "$(state_of repo $run)" = merged &&
	test ! -e repo/far/f.txt && test "$(git -C repo show :far/f.txt)" = changed &&
	git -C repo ls-files -t far/f.txt | grep -q "^S " &&
	test "$(cat repo/near.txt)" = near &&
	test -z "$(git -C repo status --porcelain --untracked-files=no)"
'

test_done
