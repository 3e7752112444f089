#!/bin/sh
# kill -9 during a frozen tick (docs/RELIABILITY.md, "Freezes"): the tick and
# its workers killed at the train's fault points while the target is frozen
# (SLUICE_FAULT_GROUP: all at once, as a power cut); the ticks after it,
# still frozen, land nothing and never reach the landing; after sluice
# unfreeze, ticks land each run exactly once, as tested, and leave nothing
# behind (fault_check). A run left merging by a killed tick, the target
# frozen after it, is requeued to the train (reconciliation) and waits.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool setsid

echo 'echo a >a.txt' >"$BUILDERS/A.sh"
echo 'echo b >b.txt' >"$BUILDERS/B.sh"

for point in train.after_car train.after_gates train.after_result; do
	test_expect_success "killed at $point while frozen: nothing lands; unfrozen, each lands once" '
		d=r-'"$point"' &&
		fault_repo $d "$(approve_reviewer_config)" &&
		sluice -C $d freeze -m "release 3" >/dev/null &&
		wo $d A && wo $d B &&
		tip=$(git -C $d rev-parse main) &&
		FAULT_GROUP=1 fault_fire '"$point"' out -C $d tick &&
		test "$(git -C $d rev-parse main)" = "$tip" &&
		SLUICE_FAULT=train.before_land sluice -C $d tick >out 2>&1 &&
		SLUICE_FAULT=train.before_land sluice -C $d tick >>out 2>&1 &&
		test_grep -v "fault point" out &&
		test "$(git -C $d rev-parse main)" = "$tip" &&
		test -z "$(sluice -C $d runs --state merged | grep -E "^[0-9]{8}-")" &&
		test "$(sqlite3 $d/.system/sluice.db "SELECT COUNT(*) FROM train_cars WHERE status = '"'"'green'"'"'")" -ge 1 &&
		sluice -C $d status >st && test_grep "wait: frozen (release 3)" st &&
		sluice -C $d unfreeze >/dev/null &&
		settle $d &&
		fault_check $d "A B" "" &&
		for w in A B; do
			run=$(run_of $d $w) &&
			test "$(jq -r .green $d/.system/runs/$run/train.json)" = true || return 1
		done
	'
done

test_expect_success 'killed with a run merging (train.before_land), then frozen: requeued, it waits; unfrozen, each lands once' '
	d=r-before-land &&
	fault_repo $d "$(approve_reviewer_config)" &&
	wo $d A && wo $d B &&
	tip=$(git -C $d rev-parse main) &&
	FAULT_GROUP=1 fault_fire train.before_land out -C $d tick &&
	test "$(git -C $d rev-parse main)" = "$tip" &&
	sluice -C $d runs --state merging >m && test_grep "^[0-9]\{8\}-" m &&
	sluice -C $d freeze -m "late freeze" >/dev/null &&
	sluice -C $d tick >out 2>&1 &&
	test "$(git -C $d rev-parse main)" = "$tip" &&
	test -z "$(sluice -C $d runs --state merged | grep -E "^[0-9]{8}-")" &&
	test_grep "interrupted -> approved" out && test_grep "approved -> approved: .*wait: frozen (late freeze)" out &&
	sluice -C $d status >st && test_grep "wait: frozen (late freeze)" st &&
	sluice -C $d unfreeze >/dev/null &&
	settle $d &&
	fault_check $d "A B" ""
'

test_done
