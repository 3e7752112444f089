#!/bin/sh
# A merge gate that fails its first run on a car's tree and passes on the
# second (merge.rerun_failed, default 1): the red gate runs again on the
# same tree before the car is blamed, the car lands in its first attempt,
# and the gate is recorded as flaky: its flake rate (flaky trees / trees
# run) shows in `sluice status` (text and --json), `sluice report` and
# the desk.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a merge gate red on the first run of each tree' '
	mkdir -p "$TRASH/counts" &&
	sluice_repo repo "gates:" "  flaky: [sh, $FIXTURES/train/flaky-gate.sh, $TRASH/counts, 1]" \
		"$(approve_reviewer_config)" &&
	echo "echo one >one.txt" >"$BUILDERS/O.sh" &&
	echo "echo two >two.txt" >"$BUILDERS/T.sh" &&
	sluice -C repo check >/dev/null
'

test_expect_success 'red then green on one tree: the car lands, once, in its first attempt' '
	wo repo O &&
	settle repo &&
	ro=$(run_of repo O) &&
	test "$(state_of repo $ro)" = merged &&
	test "$(wc -l <"$TRASH/counts/runs.log")" = 2 &&
	test "$(cut -d" " -f1 "$TRASH/counts/runs.log" | sort -u | wc -l)" = 1 &&
	test "$(cut -d" " -f3 "$TRASH/counts/runs.log" | tr "\n" " ")" = "1 0 " &&
	test "$(git -C repo rev-parse "main^{tree}")" = "$(cut -d" " -f1 "$TRASH/counts/runs.log" | head -n 1)" &&
	sluice -C repo log $ro >log &&
	! grep -q "attempt 2" log &&
	test "$(git -C repo log --first-parent --merges --oneline main | wc -l)" = 1 &&
	git -C repo show main:one.txt | grep -q one &&
	test "$(jq -r ".[0].passed" repo/.system/runs/$ro/train/gates.json)" = true &&
	sluice -C repo audit
'

test_expect_success 'status shows the flake rate, in text and as JSON' '
	sluice -C repo status >st &&
	test_grep "^merge gates: flaky flaky on 1 of 1 tree (100%)$" st &&
	sluice -C repo status --json >st.json &&
	test "$(jq -r ".merge_gates[0].gate" st.json)" = flaky &&
	test "$(jq -r ".merge_gates[0].trees" st.json)" = 1 &&
	test "$(jq -r ".merge_gates[0].flaky" st.json)" = 1 &&
	test "$(jq -r ".merge_gates[0].flake_rate" st.json)" = 1
'

test_expect_success 'a second tree green on its first run: flaky on 1 of 2' '
	sed -i "s|counts, 1]|counts, 0]|" repo/.system/config.yaml &&
	wo repo T &&
	settle repo &&
	test "$(state_of repo $(run_of repo T))" = merged &&
	test "$(wc -l <"$TRASH/counts/runs.log")" = 3 &&
	sluice -C repo status >st2 &&
	test_grep "^merge gates: flaky flaky on 1 of 2 trees (50%)$" st2 &&
	sluice -C repo status --json >st2.json &&
	test "$(jq -r ".merge_gates[0].flake_rate" st2.json)" = 0.5
'

test_expect_success 'the report and the desk show the flake rate' '
	sluice -C repo report --html report.html >/dev/null &&
	test_grep "<h2>Merge gates</h2>" report.html &&
	test_grep "<tr><td>flaky</td><td>2</td><td>1</td><td>50%</td></tr>" report.html
'

command -v curl >/dev/null &&
test_expect_success 'the desk shows the flake rate on its queue page' '
	{ "$SLUICE" -C repo serve >serve.out 2>&1 & echo $! >serve.pid; } &&
	test_when_finished "kill \$(cat serve.pid)" &&
	wait_until "grep -q http:// serve.out" 300 &&
	url=$(grep -o "http://[^ ]*" serve.out | head -n 1) &&
	port=$(echo "$url" | sed "s|http://127.0.0.1:\([0-9]*\)/.*|\1|") &&
	curl -s -u "sluice:${url##*=}" "http://127.0.0.1:$port/" >desk.html &&
	test_grep "<h2>Merge gates</h2>" desk.html &&
	test_grep "<tr><td>flaky</td><td>2</td><td>1</td><td>50%</td></tr>" desk.html
'

test_done
