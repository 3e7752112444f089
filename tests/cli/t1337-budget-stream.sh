#!/bin/sh
# A run's dollars during an attempt (docs/budgets.md): a builder that
# reports its usage as it goes (rewriting $SLUICE_USAGE_FILE) is stopped at
# the first report whose cost, the agent's or estimated from budget.prices,
# passes what is left of the run's budget; a report under it lets it run on.
# The builders here wait forever after their report: only the stop ends them
# before builder.timeout (10 minutes).
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool jq

# usage_then_wait NAME LINES...: a builder that changes a file, writes each
# line as its usage report (one a write, the next a rename into place), then
# waits for a file nothing writes.
usage_then_wait() {
	_n=$1 && shift &&
	{
		echo "echo \$SLUICE_ATTEMPT >$_n.txt" &&
		for l in "$@"; do
			echo "printf '%s\\n' '$l' >\"\$SLUICE_USAGE_FILE.tmp\"" &&
			echo "mv \"\$SLUICE_USAGE_FILE.tmp\" \"\$SLUICE_USAGE_FILE\"" || return 1
		done &&
		echo "while [ ! -e \"$TRASH/never\" ]; do sleep 0.1; done"
	} >"$BUILDERS/$_n.sh"
}
usage_then_wait S 'not json yet' '{"cost_usd": 0.4}' '{"cost_usd": 1.2, "model": "m"}'
usage_then_wait E '{"input_tokens": 1000000, "output_tokens": 10, "model": "m"}'
# U reports under its limit, twice (plain writes), and ends by itself.
printf '%s\n' "echo u >U.txt" "echo '{\"cost_usd\": 0.5}' >\"\$SLUICE_USAGE_FILE\"" \
	"echo '{\"cost_usd\": 0.9}' >\"\$SLUICE_USAGE_FILE\"" >"$BUILDERS/U.sh"
# L reports past its budget as its last act, and ends by itself.
printf '%s\n' "echo l >L.txt" "echo '{\"cost_usd\": 1.2}' >\"\$SLUICE_USAGE_FILE\"" "exit 0" >"$BUILDERS/L.sh"
# R: attempt 1 reports $0.60 and ends (its gate fails); attempt 2 reports $0.50 and waits.
printf '%s\n' "echo \$SLUICE_ATTEMPT >R.txt" \
	"if [ \$SLUICE_ATTEMPT = 1 ]; then echo '{\"cost_usd\": 0.6}' >\"\$SLUICE_USAGE_FILE\"; exit 0; fi" \
	"echo '{\"cost_usd\": 0.5}' >\"\$SLUICE_USAGE_FILE\"" \
	"while [ ! -e \"$TRASH/never\" ]; do sleep 0.1; done" >"$BUILDERS/R.sh"

# K: attempt 1 reports $0.30, says so, and waits (its tick is killed);
# attempt 2 reports $0.20 and ends.
printf '%s\n' "echo \$SLUICE_ATTEMPT >K.txt" \
	"if [ \$SLUICE_ATTEMPT = 1 ]; then echo '{\"cost_usd\": 0.3}' >\"\$SLUICE_USAGE_FILE\";" \
	"  : >\"$TRASH/K.reported\"; while [ ! -e \"$TRASH/never\" ]; do sleep 0.1; done; fi" \
	"echo '{\"cost_usd\": 0.2}' >\"\$SLUICE_USAGE_FILE\"" >"$BUILDERS/K.sh"

attempt_reason() { # DIR WO N
	sluice -C "$1" show --json "$(run_of "$1" "$2")" | jq -r ".attempts[] | select(.n == $3) | .outcome"
}

test_expect_success 'a report past the run.s dollars stops the builder at once; no retry starts' '
	sluice_repo s "builder:" "  timeout: 10m" "retry:" "  - exit: 5" "$(approve_reviewer_config)" &&
	wo s S "budget: {usd: 1}" &&
	settle s &&
	r=$(run_of s S) &&
	test "$(state_of s $r)" = failed &&
	attempt_reason s S 1 >why &&
	test_grep "stopped: its usage report says \$1.20, past the \$1.00 left of the run.s budget (the work order.s budget.usd)" why &&
	test_grep "attempt 1 ended: stopped: its usage report says \$1.20" s/.system/runs/$r/builder.log &&
	sluice -C s status --json $r | jq -r .reason >run-why &&
	test_grep "the run.s budget is spent: its attempts recorded \$1.20, the work order.s budget.usd is \$1.00" run-why &&
	test "$(sluice -C s show --json $r | jq ".attempts | length")" = 1 &&
	test "$(sluice -C s cost --json | jq .total.cost_usd)" = 1.2
'

test_expect_success 'tokens priced by budget.prices: the estimate stops it too' '
	sluice_repo e "builder:" "  timeout: 10m" "budget:" "  run: {usd: 1}" "  prices:" \
		"    m: {input: 2, output: 0}" "$(approve_reviewer_config)" &&
	wo e E &&
	settle e &&
	test "$(state_of e "$(run_of e E)")" = failed &&
	attempt_reason e E 1 >why &&
	test_grep "stopped: its usage report says \$2.00 (estimate), past the \$1.00 left of the run.s budget (budget.run.usd in .system/config.yaml)" why
'

test_expect_success 'reports under the limit: the builder ends by itself and the run merges' '
	sluice_repo u "builder:" "  timeout: 10m" "$(approve_reviewer_config)" &&
	wo u U "budget: {usd: 1}" &&
	settle u &&
	test "$(state_of u "$(run_of u U)")" = merged &&
	test "$(sluice -C u cost --json | jq .total.cost_usd)" = 0.9
'

test_expect_success 'a report past the budget as the builder.s last act: it ends by itself, its work goes on' '
	sluice_repo l "builder:" "  timeout: 10m" "$(approve_reviewer_config)" &&
	wo l L "budget: {usd: 1}" &&
	settle l &&
	test "$(state_of l "$(run_of l L)")" = merged &&
	attempt_reason l L 1 >why &&
	test_grep -v stopped why &&
	test "$(sluice -C l cost --json | jq .total.cost_usd)" = 1.2
'

test_expect_success 'a later attempt is held to what the earlier ones left' '
	sluice_repo rr "builder:" "  timeout: 10m" "gates:" "  test: [\"sh\", \"-c\", \"test \$(cat R.txt) = 1 && exit 1; exit 0\"]" \
		"retry:" "  - exit: 3" "$(approve_reviewer_config)" &&
	wo rr R "budget: {usd: 1}" &&
	settle rr &&
	test "$(state_of rr "$(run_of rr R)")" = failed &&
	attempt_reason rr R 2 >why &&
	test_grep "stopped: its usage report says \$0.50, past the \$0.40 left of the run.s budget" why
'

test_expect_success 'a tick killed (kill -9) while its builder runs: what it reported counts once, its minutes too' '
	test_skip_unless_tool setsid sqlite3 &&
	sluice_repo k "builder:" "  timeout: 10m" "retry:" "  - exit: 3" "$(approve_reviewer_config)" &&
	wo k K "budget: {usd: 1}" &&
	{ setsid sh -c "echo \$\$ >tick.sid; exec \"$SLUICE\" -C k tick >tick1.out 2>&1" & } &&
	wait_until "[ -e \"$TRASH/K.reported\" ]" &&
	kill -9 -"$(cat tick.sid)" &&
	wait_until "! kill -0 -$(cat tick.sid) 2>/dev/null" &&
	settle k &&
	r=$(run_of k K) &&
	test "$(state_of k $r)" = merged &&
	attempt_reason k K 1 >why1 &&
	test_grep "^interrupted: the sluice process running it is gone$" why1 &&
	sqlite3 k/.system/sluice.db "SELECT attempt, role, cost_usd, wall_ms > 0 FROM usage WHERE run_id = '\''$r'\'' ORDER BY attempt" >rows &&
	printf "%s\n" "1|builder|0.3|1" "2|builder|0.2|1" >want &&
	test_cmp want rows &&
	sqlite3 k/.system/sluice.db "SELECT COUNT(*) FROM attempts WHERE run_id = '\''$r'\'' AND finished_ms IS NOT NULL" >n &&
	echo 2 >want2 && test_cmp want2 n &&
	sluice -C k tick >/dev/null 2>&1 &&
	test "$(sluice -C k cost --json | jq .total.cost_usd)" = 0.5
'

test_done
