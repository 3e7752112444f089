#!/bin/sh
# The train's order (DESIGN.md 7b): "approved runs queue per target
# (priority, then approval time)", whatever order the tick's workers reach
# the train in. Three runs built, approved by a person in the order Q1
# (priority 3), Q2 (priority 1), Q3 (priority 2), Q4 (priority 2), then
# one tick: they land Q2, Q3, Q4, Q1.
. "$(dirname "$0")/lib.sh"

for q in Q1 Q2 Q3 Q4; do
	echo "echo $q >$q.txt" >"$BUILDERS/$q.sh"
done

test_expect_success 'setup: four runs built and approved by a person' '
	sluice_repo repo "gates:" "  g: [\"true\"]" "merge:" "  train_depth: 4" "queue:" "  jobs: 4" &&
	wo repo Q1 "priority: 3" && wo repo Q2 "priority: 1" &&
	wo repo Q3 "priority: 2" && wo repo Q4 "priority: 2" &&
	sluice -C repo tick >tick0.out 2>&1 &&
	for q in Q1 Q2 Q3 Q4; do
		test "$(state_of repo $(run_of repo $q))" = awaiting_review &&
		sluice -C repo approve $(run_of repo $q) >/dev/null &&
		sleep 0.01 || return 1
	done
'

test_expect_success 'they land by priority, then approval time' '
	settle repo &&
	git -C repo log --reverse --first-parent --merges --format=%B main | sed -n "s/^Work-Order: //p" >order &&
	printf "%s\n" Q2 Q3 Q4 Q1 >order.want &&
	test_cmp order.want order
'

test_done
