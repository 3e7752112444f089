#!/bin/sh
# A tick killed while the merge gates run on a car (SLUICE_FAULT_GROUP: the
# tick, its workers and git with them): the gates' own checkout of the car
# (worktree-train) is left, and the run's worktree with the index lock of a
# git that died there. The next ticks end what the killed tick left running,
# remove the lock (only this run's processes work there) and the gates'
# checkout, test the car again and land it, once.
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
	test -d r/.system/runs/$run/worktree-train &&
	test "$(git -C r/.system/runs/$run/worktree rev-parse --abbrev-ref HEAD)" != HEAD &&
	: >r/.git/worktrees/$run/index.lock &&
	settle r &&
	test "$(state_of r $run)" = merged &&
	test ! -e r/.system/runs/$run/worktree-train &&
	! git -C r worktree list | grep worktree-train &&
	test ! -e r/.git/worktrees/$run/index.lock &&
	test "$(git -C r log --first-parent --merges --format=%s main | grep -c "^Merge K")" = 1 &&
	test "$(jq -r .green r/.system/runs/$run/train.json)" = true &&
	sluice -C r audit
'

test_expect_success 'a lock a killed tick left in a green car'"'"'s worktree is removed by the next tick' '
	sluice_repo g "gates:" "  test: [sh, -c, \"test -f k.txt\"]" \
		"$(approve_reviewer_config)" &&
	wo g K &&
	FAULT_GROUP=1 fault_fire train.after_result out -C g tick &&
	run=$(run_of g K) &&
	test "$(state_of g $run)" = approved &&
	test "$(jq -r .status g/.system/runs/$run/train.json 2>/dev/null || echo none)" != red &&
	: >g/.git/worktrees/$run/index.lock &&
	settle g &&
	test "$(state_of g $run)" = merged &&
	test ! -e g/.git/worktrees/$run/index.lock &&
	test "$(git -C g log --first-parent --merges --format=%s main | grep -c "^Merge K")" = 1 &&
	sluice -C g audit
'

test_expect_success 'a car ref lock a killed sluice left is removed by the next tick' '
	mkdir -p r/.git/refs/sluice/train &&
	: >r/.git/refs/sluice/train/20261124-000000-deadbeef.lock &&
	sluice -C r tick >out 2>&1 &&
	test ! -e r/.git/refs/sluice/train/20261124-000000-deadbeef.lock
'

test_expect_success 'an edit in a waiting car'"'"'s worktree is committed and reviewed again, never checked out over' '
	G="$TRASH/gate" && mkdir -p "$G" &&
	echo "echo w1 >w1.txt" >"$BUILDERS/W1.sh" && echo "echo w2 >w2.txt" >"$BUILDERS/W2.sh" &&
	sluice_repo w "gates:" "  hold: [sh, $FIXTURES/train/hold-gate.sh, $G]" \
		"merge:" "  gates: [hold]" "  train_depth: 1" "queue:" "  jobs: 2" &&
	wo w W1 && wo w W2 &&
	sluice -C w tick >tick0.out 2>&1 &&
	: >"$G/hold-all" &&
	train_join_in_order w "$G" W1 W2 &&
	w2=$(run_of w W2) &&
	echo "a person'"'"'s line" >>w/.system/runs/$w2/worktree/w2.txt &&
	rm "$G/hold-all" &&
	for p in $(cat ticks); do wait $p || true; done &&
	settle w &&
	test "$(state_of w $w2)" = awaiting_review &&
	sluice -C w approve $w2 >/dev/null &&
	settle w &&
	test "$(state_of w $w2)" = merged &&
	git -C w show main:w2.txt | grep -qx "a person'"'"'s line" &&
	sluice -C w log $w2 >log.out &&
	test_grep "changed after the review" log.out &&
	sluice -C w audit
'

test_done
