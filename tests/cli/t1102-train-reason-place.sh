#!/bin/sh
# "in the train: car k of M" is the car's place now, not when its worker
# last looked: a worker that stopped waiting (its car behind a car nobody
# carries) left its reason as it was while cars joined behind it and the
# car ahead left. Now every plan of the train (and every landing) tells
# each car's run its place again.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool setsid pkill

G="$TRASH/gate"
mkdir -p "$G"
for i in 1 2 3; do
	echo "echo P$i >p$i.txt" >"$BUILDERS/P$i.sh"
done

reason_of() { # RUN
	sluice -C repo runs | grep "^$1 "
}

test_expect_success 'setup: three runs built, awaiting review' '
	sluice_repo repo "gates:" "  hold: [sh, $FIXTURES/train/hold-gate.sh, $G]" \
		"merge:" "  gates: [hold]" "  train_depth: 1" "queue:" "  jobs: 3" &&
	wo repo P1 && wo repo P2 && wo repo P3 &&
	sluice -C repo tick >tick0.out 2>&1 &&
	for w in P1 P2 P3; do
		test "$(state_of repo $(run_of repo $w))" = awaiting_review || return 1
	done
'

test_expect_success 'P1 held in its gate, its tick killed: nobody carries it' '
	r1=$(run_of repo P1) &&
	: >"$G/hold-all" &&
	sluice -C repo approve $r1 >/dev/null &&
	{ setsid sh -c "echo \$\$ >run1.sid; exec \"$SLUICE\" -C repo run P1 >run1.out 2>&1" & } &&
	wait_for "$G/waiting-$r1" &&
	pkill -KILL -s "$(cat run1.sid)" &&
	n=0 && while pkill -0 -s "$(cat run1.sid)"; do
		[ $n -lt 6000 ] && sleep 0.1 && n=$((n + 1)) || return 1
	done &&
	rm -f "$G/waiting-$r1" &&
	test "$(state_of repo $r1)" = approved
'

test_expect_success 'P2, then P3 join and stop waiting; P2 counts P3' '
	r2=$(run_of repo P2) && r3=$(run_of repo P3) &&
	sluice -C repo approve $r2 >/dev/null && sluice -C repo run P2 >run2.out 2>&1 &&
	reason_of $r2 | grep "in the train: car 2 of 2, waits for a place" &&
	sluice -C repo approve $r3 >/dev/null && sluice -C repo run P3 >run3.out 2>&1 &&
	reason_of $r3 | grep "in the train: car 3 of 3, waits for a place" &&
	reason_of $r2 >line && test_grep "in the train: car 2 of 3, waits for a place" line
'

test_expect_success 'P1 abandoned: P2 is car 1 of 2 in its reason, P3 car 2 of 2' '
	r1=$(run_of repo P1) && r2=$(run_of repo P2) && r3=$(run_of repo P3) &&
	test -d repo/.system/runs/$r1/worktree-train &&
	sluice -C repo abandon $r1 >/dev/null &&
	test ! -e repo/.system/runs/$r1/worktree-train &&
	! git -C repo worktree list | grep worktree-train &&
	sluice -C repo run P3 >run3.out 2>&1 &&
	reason_of $r3 | grep "in the train: car 2 of 2" &&
	reason_of $r2 >line && test_grep "in the train: car 1 of 2" line &&
	sluice -C repo status --json $r2 >st && test_grep "car 1 of 2" st
'

test_expect_success 'then both land' '
	rm -f "$G/hold-all" &&
	settle repo &&
	test "$(state_of repo $(run_of repo P2))" = merged &&
	test "$(state_of repo $(run_of repo P3))" = merged
'

test_done
