#!/bin/sh
# A worker whose car waits in the train (behind a car held in its gate, for
# up to 30 minutes) holds its run's lock. `sluice abandon` and `sluice retry`
# of that run used to say the run was being worked on; now the command asks
# the waiting worker to let go (a request in the run folder), the worker
# sees it at its next poll, stops waiting and lets go of the lock, and the
# command takes effect. The car ahead is not disturbed.
. "$(dirname "$0")/lib.sh"

G="$TRASH/gate"
mkdir -p "$G"
for w in A B C; do
	echo "echo $w >$w.txt" >"$BUILDERS/$w.sh"
done

test_expect_success 'setup: A held in its merge gate, B and C wait for a place behind it' '
	sluice_repo repo "gates:" "  hold: [sh, $FIXTURES/train/hold-gate.sh, $G]" \
		"merge:" "  gates: [hold]" "  train_depth: 1" "queue:" "  jobs: 3" &&
	wo repo A && wo repo B && wo repo C &&
	sluice -C repo tick >tick0.out 2>&1 &&
	for w in A B C; do
		test "$(state_of repo $(run_of repo $w))" = awaiting_review || return 1
	done &&
	: >"$G/hold-all" &&
	train_join_in_order repo "$G" A B C &&
	test -f "$G/waiting-$(run_of repo A)"
'

test_expect_success 'abandon of a waiting car takes effect; the front car stays held' '
	rb=$(run_of repo B) &&
	sluice -C repo abandon $rb >out 2>err &&
	test "$(state_of repo $rb)" = abandoned &&
	test "$(state_of repo $(run_of repo A))" = approved &&
	test -f "$G/waiting-$(run_of repo A)"
'

test_expect_success 'retry of a waiting car takes effect' '
	rc=$(run_of repo C) &&
	sluice -C repo retry $rc >out 2>err &&
	sluice -C repo log $rc >log &&
	test_grep "retry asked by" log &&
	test -f "$G/waiting-$(run_of repo A)"
'

test_expect_success 'the front car lands once let go; nothing of B lands' '
	rm -f "$G/hold-all" &&
	for p in $(cat "$TRASH/ticks"); do wait $p || :; done &&
	sluice -C repo tick >tick1.out 2>&1 &&
	test "$(state_of repo $(run_of repo A))" = merged &&
	test "$(state_of repo $(run_of repo C))" = merged &&
	! git -C repo show main:B.txt 2>/dev/null
'

test_done
