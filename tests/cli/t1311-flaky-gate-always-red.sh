#!/bin/sh
# A merge gate red on every run (merge.rerun_failed, default 1): the car is
# blamed only when the gate was red twice on one tree, never after one run;
# the reason the run shows names the gate and says it was red on both runs
# of the same tree. The gate is not flaky: red on one tree, never green.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a merge gate red on every merge commit' '
	mkdir -p "$TRASH/counts" &&
	sluice_repo repo "gates:" "  check: [sh, $FIXTURES/train/flaky-gate.sh, $TRASH/counts, always]" \
		"$(approve_reviewer_config)" &&
	echo "echo one >one.txt" >"$BUILDERS/O.sh" &&
	sluice -C repo check >/dev/null
'

test_expect_success 'red on both runs of one tree: the car leaves, the reason says so' '
	wo repo O &&
	settle repo &&
	ro=$(run_of repo O) &&
	test "$(state_of repo $ro)" = failed &&
	test "$(wc -l <"$TRASH/counts/runs.log")" = 2 &&
	test "$(cut -d" " -f1 "$TRASH/counts/runs.log" | sort -u | wc -l)" = 1 &&
	tree=$(cut -d" " -f1 "$TRASH/counts/runs.log" | head -n 1) &&
	short=$(echo $tree | cut -c1-12) &&
	sluice -C repo status --json $ro >st.json &&
	test_grep "gate .check., red on both runs of the same tree $short" st.json &&
	sluice -C repo log $ro >log &&
	test_grep "red on both runs of the same tree $short" log &&
	test "$(git -C repo log --first-parent --merges --oneline main | wc -l)" = 0
'

test_expect_success 'the car record keeps the red runs and the tree' '
	ro=$(run_of repo O) &&
	tree=$(cut -d" " -f1 "$TRASH/counts/runs.log" | head -n 1) &&
	sqlite3 repo/.system/sluice.db "SELECT gate, tree, greens, reds FROM gate_runs" >rows &&
	test "$(cat rows)" = "check|$tree|0|2" &&
	sluice -C repo status --json >all.json &&
	test "$(jq -r ".merge_gates[0].flaky" all.json)" = 0 &&
	test "$(jq -r ".merge_gates[0].trees" all.json)" = 1
'

test_done
