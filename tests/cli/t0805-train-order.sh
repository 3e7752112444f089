#!/bin/sh
# The train's order (DESIGN.md 7b): approved runs queue by priority, then
# approval time, whatever order the tick's workers reach the train in.
# Three runs built, approved by a person in the order Q1 (priority 3), Q2
# (priority 1), Q3 (priority 2), then one tick, the cars held in their gate
# (hold-gate.sh) until all three are in the train: they land Q2, Q3, Q1.
# (Among runs of one priority a run that reaches the train after cars under
# test goes behind them, 1912b37: not tested here.)
. "$(dirname "$0")/lib.sh"

G="$TRASH/gate"
mkdir -p "$G"
for q in Q1 Q2 Q3; do
	echo "echo $q >$q.txt" >"$BUILDERS/$q.sh"
done

test_expect_success 'setup: three runs built and approved by a person' '
	sluice_repo repo "gates:" "  g: [sh, $FIXTURES/train/hold-gate.sh, $G]" "merge:" "  train_depth: 3" \
		"queue:" "  jobs: 3" &&
	wo repo Q1 "priority: 3" && wo repo Q2 "priority: 1" && wo repo Q3 "priority: 2" &&
	sluice -C repo tick >tick0.out 2>&1 &&
	for q in Q1 Q2 Q3; do
		test "$(state_of repo $(run_of repo $q))" = awaiting_review &&
		sluice -C repo approve $(run_of repo $q) >/dev/null || return 1
	done
'

test_expect_success 'they land by priority' '
	: >"$G/hold-all" &&
	{ sluice -C repo tick >tick1.out 2>&1 & } &&
	tick=$! &&
	wait_until "[ \"\$(sluice -C repo runs | grep -c \"in the train\")\" = 3 ]" &&
	rm "$G/hold-all" &&
	{ wait $tick || true; } &&
	settle repo &&
	git -C repo log --reverse --first-parent --merges --format=%B main | sed -n "s/^Work-Order: //p" >order &&
	printf "%s\n" Q2 Q3 Q1 >order.want &&
	test_cmp order.want order &&
	landed_tested repo "$G"
'

test_done
