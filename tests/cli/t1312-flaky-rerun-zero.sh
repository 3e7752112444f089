#!/bin/sh
# merge.rerun_failed: 0 keeps the behaviour before reruns: one red run of a
# merge gate blames the car (a gate red on its first run and green on its
# second: the run fails, as t1083's second case without a retry rule).
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a gate red on the first run of each tree, no rerun' '
	mkdir -p "$TRASH/counts" &&
	sluice_repo repo "gates:" "  flaky: [sh, $FIXTURES/train/flaky-gate.sh, $TRASH/counts, 1]" \
		"merge:" "  rerun_failed: 0" "$(approve_reviewer_config)" &&
	echo "echo one >one.txt" >"$BUILDERS/O.sh" &&
	sluice -C repo check >/dev/null
'

test_expect_success 'one red run: the run fails, the gate ran once' '
	wo repo O &&
	settle repo &&
	ro=$(run_of repo O) &&
	test "$(state_of repo $ro)" = failed &&
	test "$(wc -l <"$TRASH/counts/runs.log")" = 1 &&
	sluice -C repo status --json $ro >st.json &&
	test_grep "merge gates failed on its own merge on top of [0-9a-f]*, with nothing new there to resolve against: gate .flaky.; no retry rules" st.json &&
	! grep -q "both runs" st.json
'

test_done
