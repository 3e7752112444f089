#!/bin/sh
# A semantic conflict handed to a person (issue 26): the steps `sluice show`
# prints (git merge --no-commit, make the merge gates pass, git commit -a
# --no-edit, sluice retry), run as printed, land the run.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: X1 and X2 break the merge gate together; one lands, the other waits' '
	sluice_repo r "gates:" \
		"  test: [sh, -c, \"if grep -qx x X1.txt && grep -qx x X2.txt; then exit 1; fi\"]" \
		"merge:" "  gates: [test]" "  resolve_attempts: 0" "queue:" "  jobs: 2" \
		"$(approve_reviewer_config)" &&
	meeting_builders X1 X2 "echo x >%s.txt" &&
	wo r X1 && wo r X2 &&
	settle r &&
	x1=$(run_of r X1) && x2=$(run_of r X2) &&
	if test "$(state_of r $x1)" = merged; then echo $x2; else echo $x1; fi >run.id &&
	test "$(state_of r "$(cat run.id)")" = merge_conflict
'

test_expect_success 'the printed steps, run as printed, land the run' '
	run=$(cat run.id) &&
	mkdir -p bin && ln -sf "$SLUICE" bin/sluice &&
	sluice -C r show $run >show &&
	sed -n "s/^next: //p" show | tr ";" "\n" | sed -e "s/^ *//" -e "s/^then: //" -e "s/, or .*//" |
		grep -E "^(cd |git |sluice )" >steps &&
	test_line_count() { test $(wc -l <"$2") = "$1"; } &&
	test_line_count 3 steps &&
	test_grep "git merge --no-commit main$" steps &&
	wt=r/.system/runs/$run/worktree &&
	(cd r && sh -c "$(sed -n 1p ../steps)") &&
	test "$(cat $wt/X1.txt)" = x && test "$(cat $wt/X2.txt)" = x &&
	echo fixed >$wt/X1.txt &&
	sh -c "cd $wt && $(sed -n 2p steps)" &&
	(cd r && PATH="$TRASH/bin:$PATH" sh -c "$(sed -n 3p ../steps)") &&
	test "$(state_of r $run)" = resolving &&
	settle r &&
	test "$(state_of r $run)" = merged &&
	git -C r show main:X1.txt >x1 && git -C r show main:X2.txt >x2 &&
	! { grep -qx x x1 && grep -qx x x2; } &&
	sluice -C r audit >/dev/null
'

test_done
