#!/bin/sh
# sluice show of a conflicted run prints the conflicted hunks with their
# context, as git diff shows hunks, under "@@ lines A-B @@" (the line
# numbers of the file with markers, as in the worktree after git merge):
# not the whole file cut at a fixed size (issue 26).
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: C1 and C2 change lines 20 and 9990 of a 10000-line file' '
	meeting_builders C1 C2 "sed -i -e \"20s/.*/twenty by %s/\" -e \"9990s/.*/far by \$SLUICE_WORK_ORDER_ID/\" big.txt" &&
	sluice_repo r "queue:" "  jobs: 2" "merge:" "  resolver: none" "$(approve_reviewer_config)" &&
	seq 1 10000 | sed "s/^/line /" >r/big.txt &&
	git -C r add big.txt && git -C r commit -q -m big &&
	wo r C1 && wo r C2 &&
	settle r &&
	r1=$(run_of r C1) && r2=$(run_of r C2) &&
	if test "$(state_of r $r1)" = merged; then echo $r2; else echo $r1; fi >run.id &&
	test "$(state_of r "$(cat run.id)")" = merge_conflict
'

test_expect_success 'show: both conflicted hunks with three lines of context, nothing else of the file' '
	run=$(cat run.id) &&
	sluice -C r show $run >show &&
	test_grep "^--- big.txt: content conflict$" show &&
	test_grep "^@@ lines 17-27 @@$" show &&
	test_grep "^line 17$" show && test_grep "^line 19$" show &&
	test_grep "^line 21$" show && test_grep "^line 23$" show &&
	test_grep -v "^line 16$" show && test_grep -v "^line 24$" show &&
	test_grep "^@@ lines 9991-10001 @@$" show &&
	test_grep "^far by C1$" show && test_grep "^far by C2$" show &&
	test_grep "^line 9987$" show && test_grep "^line 9993$" show &&
	test_grep -v "^line 5000$" show &&
	test_grep -v "truncated" show
'

test_expect_success 'the hunk line numbers are those of the file after git merge in the worktree' '
	run=$(cat run.id) && wt=r/.system/runs/$run/worktree &&
	{ git -C $wt merge -q main >/dev/null 2>&1 || :; } &&
	sed -n "17p;27p" $wt/big.txt >got &&
	printf "%s\n" "line 17" "line 23" >want &&
	test_cmp want got &&
	sed -n "9991p" $wt/big.txt >got &&
	echo "line 9987" >want &&
	test_cmp want got &&
	git -C $wt merge --abort
'

test_expect_success 'show --json: the hunks, not truncated' '
	run=$(cat run.id) &&
	sluice -C r show --json $run >show.json &&
	test_grep "\"markers_truncated\": false" show.json &&
	test_grep "@@ lines 9991-10001 @@" show.json
'

test_done
