#!/bin/sh
# A person commits on the checked-out target while the train's cars are in
# their gates (a gate that waits for a file; the test commits meanwhile):
# nothing lands on a base it was not tested on. Every landed merge is the
# very commit its gate passed on (logged by the gate), its first parent is
# the base of train.json, the first one lands on the person's commit (the
# cars were rebuilt on the new tip), and the gate passes on every
# first-parent commit of main.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool jq

G="$TRASH/gate"
mkdir -p "$G"
for i in 1 2; do
	echo "echo P$i >p$i.txt" >"$BUILDERS/P$i.sh"
done

test_expect_success 'setup: two runs built and approved, their cars held in the gate' '
	sluice_repo repo "gates:" "  hold: [sh, $FIXTURES/train/hold-gate.sh, $G]" \
		"merge:" "  gates: [hold]" "  train_depth: 2" "queue:" "  jobs: 2" &&
	printf "%s\n" "grep -qx person person.txt" >repo/check.sh &&
	echo person >repo/person.txt &&
	git -C repo add check.sh person.txt && git -C repo commit -q -m "a check of person.txt" &&
	git -C repo rev-parse main >base &&
	wo repo P1 && wo repo P2 &&
	sluice -C repo tick >tick0.out 2>&1 &&
	for w in P1 P2; do
		test "$(state_of repo $(run_of repo $w))" = awaiting_review || return 1
	done &&
	: >"$G/hold-all" && : >"$G/gates.log" &&
	sluice -C repo approve $(run_of repo P1) >/dev/null &&
	sluice -C repo approve $(run_of repo P2) >/dev/null
'

test_expect_success 'a person commits while both cars test; the train lands neither on its old base' '
	{ sluice -C repo tick >tick1.out 2>&1 & } &&
	tick=$! &&
	wait_for "$G/waiting-$(run_of repo P1)" &&
	wait_for "$G/waiting-$(run_of repo P2)" &&
	test "$(git -C repo rev-parse main)" = "$(cat base)" &&
	(cd repo && echo "a line by a person" >>notes.txt && git add notes.txt &&
		git commit -q -m "a person commits while the train tests") &&
	git -C repo rev-parse main >person &&
	rm "$G/hold-all" &&
	{ wait $tick || true; } &&
	cat tick1.out &&
	sluice -C repo status >status.out &&
	test_grep -v "did not land" status.out &&
	settle repo &&
	for w in P1 P2; do
		test "$(merges_of repo $w)" = 1 &&
		test "$(state_of repo $(run_of repo $w))" = merged || return 1
	done
'

test_expect_success 'every landing is the commit that passed, on the base it was tested on' '
	landed_tested repo "$G" &&
	train_records_hold repo &&
	git -C repo rev-list --first-parent --reverse "$(cat base)..main" >line &&
	test "$(sed -n 1p line)" = "$(cat person)" &&
	test "$(wc -l <line)" = 3 &&
	first=$(sed -n 2p line) &&
	test "$(git -C repo rev-parse $first^1)" = "$(cat person)"
'

test_expect_success 'the cars tested before the commit were rebuilt on the new tip, never landed' '
	person=$(cat person) &&
	n=0 &&
	while read -r run head tree clean rc; do
		git -C repo merge-base --is-ancestor $person $head || {
			n=$((n + 1)) &&
			! git -C repo merge-base --is-ancestor $head main || return 1
		} || return 1
	done <"$G/gates.log" &&
	test $n -ge 2
'

test_expect_success 'the log says the cars were rebuilt on the new tip (TRAIN.md reasons)' '
	sluice -C repo log >log &&
	test_grep "rebuilt on the new tip of main" log
'

test_expect_success 'the gate passes on every first-parent commit; audit holds' '
	gate_first_parents repo "$(cat base)" "sh check.sh" &&
	sluice -C repo audit >audit.out 2>&1 &&
	cat audit.out
'

test_done
