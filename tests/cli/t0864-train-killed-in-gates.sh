#!/bin/sh
# A tick killed while the merge gates run on a car (SLUICE_FAULT_GROUP: the
# tick, its workers and git with them): the run's worktree is left detached
# at the car, with the index lock of a git that died in its checkout. The
# next ticks end what the killed tick left running, remove the lock (only
# this run's processes work there), check the run branch out again, test
# the car again and land it, once.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool setsid

echo 'echo k >k.txt' >"$BUILDERS/K.sh"

test_expect_success 'killed in the merge gates: the car is tested again and lands once' '
	sluice_repo r "gates:" "  test: [sh, -c, \"test -f k.txt\"]" \
		"$(approve_reviewer_config)" &&
	wo r K &&
	FAULT_GROUP=1 fault_fire gates.before_gate:2 out -C r tick &&
	run=$(run_of r K) &&
	test "$(state_of r $run)" = approved &&
	test "$(git -C r/.system/runs/$run/worktree rev-parse --abbrev-ref HEAD)" = HEAD &&
	: >r/.git/worktrees/$run/index.lock &&
	settle r &&
	test "$(state_of r $run)" = merged &&
	test ! -e r/.git/worktrees/$run/index.lock &&
	test "$(git -C r log --first-parent --merges --format=%s main | grep -c "^Merge K")" = 1 &&
	test "$(jq -r .green r/.system/runs/$run/train.json)" = true &&
	sluice -C r audit
'

test_expect_success 'a car ref lock a killed sluice left is removed by the next tick' '
	mkdir -p r/.git/refs/sluice/train &&
	: >r/.git/refs/sluice/train/20261124-000000-deadbeef.lock &&
	sluice -C r tick >out 2>&1 &&
	test ! -e r/.git/refs/sluice/train/20261124-000000-deadbeef.lock
'

test_done
