#!/bin/sh
# The train's own workers (issue 28, "Gate runners are their own setting";
# docs/config.md, "Which limit holds what"): with merge.jobs a tick carries
# the train's cars in workers of their own, so a car held in its merge gate
# no longer keeps queue.jobs' builder from building. Without it the two
# share queue.jobs, as before.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool jq

G="$TRASH/gate"
mkdir -p "$G"
echo "echo a >a.txt" >"$BUILDERS/A.sh"
# B says whether A's car was held in its merge gate while B was built, or
# had been tested already (its line in gates.log): it waits for one or the
# other (A's car may reach its gate after B's builder starts).
cat >"$BUILDERS/B.sh" <<EOS
echo b >b.txt
i=0
while :; do
	if ls "$G"/waiting-* >/dev/null 2>&1; then echo while-held; break; fi
	if [ -s "$G/gates.log" ]; then echo after; break; fi
	i=\$((i + 1)); [ \$i -lt 3000 ] || { echo "neither in 300 s"; break; }
	sleep 0.1
done >"$TRASH/B.when"
EOS

# two_repo DIR [config lines]: A approved and B ready; A's car will hold in its merge gate.
two_repo() {
	_d=$1 && shift &&
	sluice_repo "$_d" "gates:" "  test: [sh, $FIXTURES/train/hold-gate.sh, $G]" "merge:" \
		"  gates: [test]" "$@" "queue:" "  jobs: 1" "reviewer:" "  mode: manual" &&
	wo "$_d" A && sluice -C "$_d" tick >tick0.out 2>&1 &&
	sluice -C "$_d" approve "$(run_of "$_d" A)" >/dev/null &&
	wo "$_d" B && rm -f "$TRASH/B.when" "$G"/waiting-* && : >"$G/gates.log" && : >"$G/hold-all"
}

test_expect_success 'merge.jobs 1: B is built while A.s car holds in its merge gate' '
	two_repo apart "  jobs: 1" &&
	{ sluice -C apart tick >tick.out 2>&1 & } &&
	tick=$! &&
	test_when_finished "rm -f \"$G/hold-all\"; wait $tick" &&
	wait_until "[ -s \"$TRASH/B.when\" ]" &&
	test "$(cat "$TRASH/B.when")" = while-held &&
	ls "$G"/waiting-"$(run_of apart A)" &&
	rm "$G/hold-all" &&
	wait $tick &&
	test "$(state_of apart "$(run_of apart A)")" = merged &&
	test "$(state_of apart "$(run_of apart B)")" = awaiting_review
'

test_expect_success 'merge.jobs 1: B, approved, is tested by the train.s worker in the same tick' '
	sluice -C apart approve "$(run_of apart B)" >/dev/null &&
	sluice -C apart tick --json >tick.json 2>tick.err &&
	test "$(state_of apart "$(run_of apart B)")" = merged &&
	sluice -C apart audit
'

test_expect_success 'without merge.jobs: the one job tests A.s car first, B is built after' '
	two_repo shared &&
	{ sluice -C shared tick >tick.out 2>&1 & } &&
	tick=$! &&
	test_when_finished "rm -f \"$G/hold-all\"; wait $tick" &&
	wait_until "[ -f \"$G/waiting-$(run_of shared A)\" ]" &&
	rm "$G/hold-all" &&
	wait $tick &&
	test "$(cat "$TRASH/B.when")" = after &&
	test "$(state_of shared "$(run_of shared A)")" = merged
'

test_expect_success 'a builder approved by its reviewer goes on in the train.s worker, in the same tick' '
	sluice_repo auto "merge:" "  jobs: 1" "queue:" "  jobs: 1" "$(approve_reviewer_config)" &&
	wo auto A && wo auto B &&
	sluice -C auto tick >tick.out 2>&1 &&
	test "$(state_of auto "$(run_of auto A)")" = merged &&
	test "$(state_of auto "$(run_of auto B)")" = merged &&
	sluice -C auto audit
'

test_expect_success 'merge.jobs must be a whole number from 1 to 256; check says so with the line' '
	sluice_repo bad "merge:" "  jobs: 0" &&
	test_expect_failure_code 1 sluice -C bad check >out 2>&1 &&
	test_grep "config.yaml:[0-9]*:.*merge.jobs" out &&
	sluice_repo deep "merge:" "  jobs: 1" "  train_depth: 3" &&
	sluice -C deep check >out 2>&1 &&
	test_grep "warning: merge.train_depth is 3 but merge.jobs is 1: the train.s cars are tested by a tick.s 1 train workers, so at most 1 at once; set merge.jobs to 3 or more, or merge.train_depth to 1$" out
'

# The tick and its workers killed (SIGKILL, the whole group) in the train's
# worker that a hand-over started: the next ticks land each run exactly once,
# tested, and the audit holds.
handover_kill() { # FAULT-POINT
	rm -rf kill &&
	sluice_repo kill "merge:" "  jobs: 1" "queue:" "  jobs: 1" "gates:" "  t: [\"true\"]" \
		"$(approve_reviewer_config)" &&
	wo kill A && wo kill B &&
	FAULT_GROUP=1 fault_fire "$1" out -C kill tick &&
	test $FAULT_RC = 137 &&
	settle kill &&
	test "$(state_of kill "$(run_of kill A)")" = merged &&
	test "$(state_of kill "$(run_of kill B)")" = merged &&
	test "$(git -C kill log --first-parent --format=%B main | grep -c "^Sluice-Run: ")" = 2 &&
	sluice -C kill audit >audit.out
}

for p in train.after_car train.after_gates train.before_land; do
	test_expect_success "merge.jobs 1: killed at $p in the train.s worker after the hand-over; each run lands once" "
		handover_kill $p
	"
done

test_done
