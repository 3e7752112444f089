#!/bin/sh
# A tick killed (SIGKILL, its workers with it) between a merge gate's red
# run and its rerun on the same tree (fault point train.rerun): the red run
# is in the store already, so the next tick tests the car again and counts
# it. A gate green on that run: the car lands, once, the gate flaky. A gate
# red on every run: the car leaves after two red runs of the tree in all,
# not three, once.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool setsid

echo 'echo k >k.txt' >"$BUILDERS/K.sh"

test_expect_success 'killed before the rerun, green next time: lands once, flaky' '
	mkdir -p "$TRASH/c1" &&
	sluice_repo r "gates:" "  flaky: [sh, $FIXTURES/train/flaky-gate.sh, $TRASH/c1, 1]" \
		"$(approve_reviewer_config)" &&
	wo r K &&
	FAULT_GROUP=1 fault_fire train.rerun out -C r tick &&
	run=$(run_of r K) &&
	test "$(state_of r $run)" = approved &&
	test "$(wc -l <"$TRASH/c1/runs.log")" = 1 &&
	settle r &&
	test "$(state_of r $run)" = merged &&
	test "$(cut -d" " -f3 "$TRASH/c1/runs.log" | tr "\n" " ")" = "1 0 " &&
	test "$(git -C r log --first-parent --merges --format=%s main | grep -c "^Merge K")" = 1 &&
	sluice -C r status --json >st.json &&
	test "$(jq -r ".merge_gates[0].flaky" st.json)" = 1 &&
	sluice -C r audit
'

test_expect_success 'killed before the rerun, red again: leaves once, after two red runs' '
	mkdir -p "$TRASH/c2" &&
	sluice_repo a "gates:" "  check: [sh, $FIXTURES/train/flaky-gate.sh, $TRASH/c2, always]" \
		"$(approve_reviewer_config)" &&
	wo a K &&
	FAULT_GROUP=1 fault_fire train.rerun out -C a tick &&
	run=$(run_of a K) &&
	test "$(state_of a $run)" = approved &&
	settle a &&
	test "$(state_of a $run)" = failed &&
	test "$(wc -l <"$TRASH/c2/runs.log")" = 2 &&
	sluice -C a log $run >log &&
	test "$(grep -c "red on both runs of the same tree" log)" = 1 &&
	test "$(git -C a log --first-parent --merges --oneline main | wc -l)" = 0
'

test_done
