#!/bin/sh
# A car that sluice did not land is not a landing. A merge gate (or anyone
# else) that moves the target onto the car it tests, with
# `git update-ref refs/heads/main <car>`, made a move sluice did not make:
# the run is not recorded as merged (it used to be: "landed before a
# crash; recording it"), the tick fails naming the commit and the run,
# `sluice status` shows the alarm and the merges are held. Whether the car
# went green or red after the move does not matter: only a landing sluice
# set out to make (its intent in the store, naming that commit) counts.
. "$(dirname "$0")/lib.sh"

G="$TRASH/gate"
mkdir -p "$G"
echo "echo a >a.txt" >"$BUILDERS/A.sh"
echo "echo b >b.txt" >"$BUILDERS/B.sh"

# a merge gate that, on the car (a merge: HEAD^2), once ($G/move), moves
# main onto it and exits with the status in $G/rc; else passes
cat >"$TRASH/move-gate.sh" <<EOS
if git rev-parse -q --verify HEAD^2 >/dev/null && [ -f "$G/move" ]; then
	rm -f "$G/move"
	git rev-parse HEAD >"$G/car"
	git update-ref refs/heads/main HEAD
	exit \$(cat "$G/rc")
fi
exit 0
EOS

# a merge gate that, on the car, waits (at most 60 s) while $G/hold is there
cat >"$TRASH/hold-car.sh" <<EOS
if git rev-parse -q --verify HEAD^2 >/dev/null; then
	: >"$G/waiting"
	i=0
	while [ -f "$G/hold" ] && [ \$i -lt 6000 ]; do sleep 0.1; i=\$((i + 1)); done
fi
exit 0
EOS

# the alarm, as the tick, status and the merges show it: RUN and COMMIT named
alarmed() { # DIR RUN COMMIT TICK-RC TICK-ERR
	test "$4" = 1 &&
	test_grep "carries commit $3 from run $2 that sluice did not land" "$5" &&
	sluice -C "$1" status >st &&
	test_grep "UNREVIEWED LANDING: it carries commit $3 from run $2" st &&
	test "$(state_of "$1" "$2")" != merged &&
	! sluice -C "$1" runs --json | grep -q '"state": "merged"'
}

# a second run, built and approved after the alarm: it does not land, the tick fails
held() { # DIR
	wo "$1" B && rc=0 && { sluice -C "$1" tick >tickb.out 2>tickb.err || rc=$?; } &&
	rb=$(run_of "$1" B) &&
	test "$rc" = 1 &&
	test "$(state_of "$1" "$rb")" = approved &&
	test "$(git -C "$1" rev-parse main)" = "$(cat "$G/car")"
}

for verdict in 0 1; do
	case $verdict in 0) what=green ;; *) what=red ;; esac
	test_expect_success "a merge gate moves main onto its car, then the car is $what: alarm" "
		rm -rf repo && rm -f \"\$G\"/* && echo $verdict >\"\$G/rc\" && : >\"\$G/move\" &&
		sluice_repo repo 'gates:' '  move: [sh, $TRASH/move-gate.sh]' 'merge:' \
			'  gates: [move]' '  rerun_failed: 0' \"\$(approve_reviewer_config)\" &&
		wo repo A && rc=0 && { sluice -C repo tick >tick.out 2>tick.err || rc=\$?; } &&
		ra=\$(run_of repo A) && car=\$(cat \"\$G/car\") &&
		test \"\$(git -C repo rev-parse main)\" = \"\$car\" &&
		alarmed repo \$ra \$car \$rc tick.err &&
		held repo
	"
done

test_expect_success 'accepted by a person: the red car is recorded as landed, and audit fails on it' '
	ra=$(run_of repo A) && rb=$(run_of repo B) && car=$(cat "$G/car") &&
	sluice -C repo accept-target $car >out &&
	sluice -C repo tick >tick.out 2>tick.err &&
	test "$(state_of repo $ra)" = merged &&
	test "$(state_of repo $rb)" = merged &&
	test_expect_failure_code 1 sluice -C repo audit >audit.out 2>&1
'

test_expect_success 'reset by a person: the green car lands as sluice tested it' '
	rm -rf repo && rm -f "$G"/* && echo 0 >"$G/rc" && : >"$G/move" &&
	sluice_repo repo "gates:" "  move: [sh, $TRASH/move-gate.sh]" "merge:" \
		"  gates: [move]" "$(approve_reviewer_config)" &&
	base=$(git -C repo rev-parse main) &&
	wo repo A && { sluice -C repo tick >tick.out 2>tick.err || :; } &&
	ra=$(run_of repo A) && car=$(cat "$G/car") &&
	test "$(state_of repo $ra)" = approved &&
	git -C repo update-ref refs/heads/main $base &&
	sluice -C repo tick >tick.out 2>tick.err &&
	test "$(state_of repo $ra)" = merged &&
	test "$(git -C repo rev-parse main)" = "$car" &&
	sluice -C repo audit >audit.out
'


test_expect_success 'someone moves main onto a car held in its gate: alarm' '
	rm -rf repo && rm -f "$G"/* &&
	sluice_repo repo "gates:" "  hold: [sh, $TRASH/hold-car.sh]" "merge:" \
		"  gates: [hold]" "$(approve_reviewer_config)" &&
	: >"$G/hold" &&
	wo repo A && { { sluice -C repo tick >tick.out 2>tick.err; echo $? >tick.rc; } & } &&
	pid=$! && wait_for "$G/waiting" &&
	ra=$(run_of repo A) &&
	car=$(git -C repo rev-parse refs/sluice/train/$ra) &&
	git -C repo update-ref refs/heads/main $car &&
	rm -f "$G/hold" && wait $pid &&
	alarmed repo $ra $car "$(cat tick.rc)" tick.err &&
	echo $car >"$G/car" &&
	held repo
'

test_done
