#!/bin/sh
# A textual conflict in the train: two runs built on the same base edit the
# same line; both approved, the second's car conflicts with the first's.
# It waits for the first to land, then goes through resolution with kind
# textual (conflict.json, the store), its builder keeps both sides, it is
# reviewed again, and lands as a tested car. Every landing passed the gate
# as the very commit it is; one merge per work order.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool jq

G="$TRASH/gate"
mkdir -p "$G"
meeting_builders T1 T2 "sed -i \"5s/.*/five by %s/\" lines.txt"

test_expect_success 'two runs on the same line: one lands, the other resolves (textual) and lands' '
	sluice_repo repo "gates:" "  g: [sh, $FIXTURES/train/hold-gate.sh, $G]" "merge:" "  gates: [g]" \
		"queue:" "  jobs: 2" "$(approve_reviewer_config)" &&
	seq 1 10 >repo/lines.txt && git -C repo add lines.txt && git -C repo commit -q -m lines &&
	base=$(git -C repo rev-parse main) &&
	wo repo T1 && wo repo T2 &&
	settle repo &&
	for w in T1 T2; do
		test "$(state_of repo $(run_of repo $w))" = merged &&
		test "$(merges_of repo $w)" = 1 || return 1
	done &&
	git -C repo show main:lines.txt >lines &&
	test_grep "five by T1" lines && test_grep "five by T2" lines &&
	test_grep -v "^<<<<<<<" lines &&
	second=$(git -C repo log -1 --format=%B main | sed -n "s/^Work-Order: //p") &&
	r2=$(run_of repo $second) &&
	jq -e ".kind == \"textual\" and (.conflictFiles | index(\"lines.txt\") != null)" \
		repo/.system/runs/$r2/conflict.json >/dev/null &&
	sluice -C repo log $r2 >log2 &&
	test_grep "resolving" log2 &&
	landed_tested repo "$G" &&
	train_records_hold repo &&
	gate_first_parents repo $base "true"
'

test_done
