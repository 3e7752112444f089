#!/bin/sh
# What a person reads while the train works (TRAIN.md, "Reasons"): three
# approved runs, merge.train_depth 2, the cars held in their gate
# (hold-gate.sh). `sluice status`, `sluice runs`, `sluice log` and
# `sluice status RUN` say which car each run is and what it waits for:
# "in the train: car 1 of 3, testing on top of main (gates: hold)",
# "car 2 of 3, testing on top of P1", "car 3 of 3, waits for a place
# (merge.train_depth 2)", then, the first car held alone, "car 2 of 3,
# green in N s; waits for P1 to land". train.json and merge.json record it.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool jq

G="$TRASH/gate"
mkdir -p "$G"
for i in 1 2 3; do
	echo "echo P$i >p$i.txt" >"$BUILDERS/P$i.sh"
done

# every reason a person may read of run RUN, one a line
reasons() { # RUN
	sluice -C repo status >status.out &&
	sluice -C repo runs >runs.out &&
	sluice -C repo log "$1" >log.out &&
	sluice -C repo status --json "$1" >status.json &&
	sluice -C repo queue --explain >queue.out
}

test_expect_success 'setup: three runs built; they join the train in order, held in the gate' '
	sluice_repo repo "gates:" "  hold: [sh, $FIXTURES/train/hold-gate.sh, $G]" \
		"merge:" "  gates: [hold]" "  train_depth: 2" "queue:" "  jobs: 3" &&
	wo repo P1 && wo repo P2 && wo repo P3 &&
	sluice -C repo tick >tick0.out 2>&1 &&
	for w in P1 P2 P3; do
		test "$(state_of repo $(run_of repo $w))" = awaiting_review || return 1
	done &&
	: >"$G/hold-all" && : >"$G/gates.log" &&
	train_join_in_order repo "$G" P1 P2 P3
'

test_expect_success 'car 1 tests on top of main' '
	r1=$(run_of repo P1) && reasons $r1 &&
	want="in the train: car 1 of [0-9]*, testing on top of main (gates: hold)" &&
	test_grep "$want" status.out &&
	grep "^$r1 " runs.out >line && test_grep "$want" line &&
	test_grep "$want" log.out &&
	test_grep "$want" status.json &&
	test "$(state_of repo $r1)" = approved
'

test_expect_success 'car 2 tests on top of P1' '
	r2=$(run_of repo P2) && reasons $r2 &&
	want="in the train: car 2 of [0-9]*, testing on top of P1 (gates: hold)" &&
	test_grep "$want" status.out &&
	grep "^$r2 " runs.out >line && test_grep "$want" line &&
	test_grep "$want" log.out &&
	test "$(state_of repo $r2)" = approved
'

test_expect_success 'car 3 waits for a place' '
	r3=$(run_of repo P3) && reasons $r3 &&
	want="in the train: car 3 of 3, waits for a place (merge.train_depth 2)" &&
	test_grep "$want" status.out &&
	grep "^$r3 " runs.out >line && test_grep "$want" line &&
	test_grep "$want" log.out &&
	test ! -f "$G/waiting-$r3"
'

# A car's reason is written when it starts testing; every plan of the
# train tells it its place again (it used to keep "car 1 of 1").
test_expect_success 'each reason counts the cars in the train now (3), not when it started testing' '
	sluice -C repo runs >runs.out &&
	grep "^$(run_of repo P1) " runs.out | grep "car 1 of 3" &&
	grep "^$(run_of repo P2) " runs.out | grep "car 2 of 3"
'

test_expect_success 'queue --explain says the work orders are in the train' '
	test_grep "in the train" queue.out
'

test_expect_success 'car 2 green while car 1 is held: it waits for P1 to land' '
	r1=$(run_of repo P1) && r2=$(run_of repo P2) &&
	: >"$G/hold-$r1" && rm "$G/hold-all" &&
	wait_until "sluice -C repo runs --wo P2 | grep -q \"green in\"" &&
	reasons $r2 &&
	grep "^$r2 " runs.out >line &&
	grep -E "in the train: car 2 of 3, green in [0-9]+\.[0-9] s; waits for P1 to land" line &&
	test "$(git -C repo rev-list --merges --count main)" = 0
'

test_expect_success 'then all land; train.json and merge.json say what was tested' '
	r1=$(run_of repo P1) &&
	rm "$G/hold-$r1" &&
	for p in $(cat "$TRASH/ticks"); do { wait $p || true; } || return 1; done &&
	settle repo &&
	for w in P1 P2 P3; do
		r=$(run_of repo $w) &&
		test "$(state_of repo $r)" = merged &&
		jq -e ".tested == true and .train == \"train.json\"" repo/.system/runs/$r/merge.json >/dev/null &&
		jq -e "[.gates[].name] == [\"hold\"] and .green == true and (.gates_ms | type) == \"number\"" \
			repo/.system/runs/$r/train.json >/dev/null || return 1
	done &&
	train_records_hold repo &&
	landed_tested repo "$G" &&
	git -C repo log --reverse --first-parent --merges --format=%B main | sed -n "s/^Work-Order: //p" >order &&
	printf "%s\n" P1 P2 P3 >order.want &&
	test_cmp order.want order
'

test_done
