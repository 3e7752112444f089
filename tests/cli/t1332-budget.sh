#!/bin/sh
# The repository's budget (docs/budgets.md): once the spend recorded in the
# UTC day (budget.day.usd) or month (budget.month.usd) reaches the limit,
# no new work order starts; `tick` and `status` (text and --json) say why
# and what to do; a higher limit in the config lets the next tick start
# work again. Bad values are refused with the file and line.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool jq python3 curl


# Each work order's builder adds its file and reports $3 spent.
for w in A B C; do
	printf '%s\n' "echo $w >$w.txt" \
		"echo '{\"cost_usd\": 3, \"model\": \"m\"}' >\"\$SLUICE_USAGE_FILE\"" >"$BUILDERS/$w.sh"
done

# DIR: the work orders with a run, one per line
started() {
	sluice -C "$1" runs --json | jq -r ".[].work_order" | sort | paste -sd " "
}

test_expect_success 'the day spent: two runs start, the third waits and the tick says why' '
	sluice_repo r "queue:" "  jobs: 1" "budget:" "  day: {usd: 5}" "$(approve_reviewer_config)" &&
	sluice -C r check >/dev/null &&
	wo r A && wo r B && wo r C &&
	settle r &&
	test "$(started r | wc -w)" = 2 &&
	sluice -C r tick >tick.out &&
	grep -q "^tick: 0 started" tick.out &&
	test_grep "tick: the day.s budget is spent: \$6.00 recorded since midnight UTC, budget.day.usd is \$5.00; no new work order starts" tick.out &&
	test_grep "higher budget.day.usd in .system/config.yaml" tick.out &&
	sluice -C r tick --json >tick.json &&
	schema_validate tick.schema.json tick.json &&
	jq -r .budget tick.json | grep -q "^the day.s budget is spent" &&
	test "$(started r | wc -w)" = 2
'

test_expect_success 'the queue says the hold: its last line, --explain and --json' '
	sluice -C r queue >q.out &&
	test_grep "^ready .* C " q.out &&
	test_grep "^budget: the day.s budget is spent: \$6.00" q.out &&
	sluice -C r queue --explain >qe.out &&
	test_grep "^ *ready; the day.s budget is spent" qe.out &&
	sluice -C r queue --json >q.json &&
	schema_validate queue.schema.json q.json &&
	test "$(jq -r ".work_orders[] | select(.id == \"C\") | .may_start" q.json)" = false &&
	jq -r ".work_orders[] | select(.id == \"C\") | .explain" q.json | grep -q "budget.day.usd is \$5.00"
'

test_expect_success 'the desk holds the ready card and says why' '
	desk_up r && test_when_finished "kill $(cat "$TRASH/desk.pid")" &&
	desk_page / >desk.html &&
	test_grep "ready; the day&#39;s budget is spent: \$6.00" desk.html
'

test_expect_success 'nothing ready, nothing held: the tick says nothing of the budget' '
	sluice_repo i "budget:" "  day: {usd: 0}" &&
	sluice -C i tick >idle.out &&
	! grep -q budget idle.out &&
	sluice -C i tick --json >idle.json &&
	test "$(jq -r .budget idle.json)" = null
'

test_expect_success 'status says the spend and the budget that holds, text and --json' '
	sluice -C r status >st.out &&
	test_grep "^spend: today \$6.00, this month \$6.00" st.out &&
	test_grep "^budget: the day.s budget is spent" st.out &&
	sluice -C r status --json >st.json &&
	schema_validate status.schema.json st.json &&
	test "$(jq -c "[.spend.today_usd, .spend.month_usd, .spend.estimate]" st.json)" = "[6,6,false]" &&
	jq -r .spend.budget st.json | grep -q "budget.day.usd is \$5.00"
'

test_expect_success 'a higher limit: the next tick starts the third, and nothing holds' '
	sed -i "s/day: {usd: 5}/day: {usd: 100}/" r/.system/config.yaml &&
	settle r &&
	test "$(started r)" = "A B C" &&
	for w in A B C; do test "$(state_of r $(run_of r $w))" = merged || return 1; done &&
	sluice -C r status >st2.out &&
	test_grep "^spend: today \$9.00" st2.out &&
	! grep -q "^budget:" st2.out &&
	sluice -C r status --json >st2.json &&
	test "$(jq -r .spend.budget st2.json)" = null
'

test_expect_success 'the month spent holds as the day does; usd: 0 starts nothing at all' '
	sluice_repo m "queue:" "  jobs: 1" "budget:" "  month:" "    usd: 2.50" \
		"$(approve_reviewer_config)" &&
	wo m A && wo m B &&
	settle m &&
	test "$(started m | wc -w)" = 1 &&
	sluice -C m tick >m.out &&
	test_grep "the month.s budget is spent: \$3.00 recorded since the 1st of the month UTC, budget.month.usd is \$2.50" m.out &&
	sluice_repo z "budget:" "  day: {usd: 0}" "$(approve_reviewer_config)" &&
	wo z A &&
	sluice -C z tick >z.out &&
	test_grep "the day.s budget is spent: \$0.00" z.out &&
	! sluice -C z run A >run.out 2>&1 &&
	test_grep "work order .A. cannot start now: the day.s budget is spent" run.out &&
	test -z "$(started z)"
'

test_expect_success 'the notifiers hear once a day that the budget holds' '
	printf "%s\n" "cat >>\"$TRASH/told\"" "echo >>\"$TRASH/told\"" "env | grep ^SLUICE_ | sort >\"$TRASH/told.env\"" >notifier.sh &&
	sluice_repo t "budget:" "  day: {usd: 0}" "notify:" "  command: [sh, $TRASH/notifier.sh]" &&
	wo t A &&
	sluice -C t tick >t1.out && sluice -C t tick >t2.out &&
	test_grep "the day.s budget is spent" t2.out &&
	test "$(jq -s "[.[] | select(.event == \"budget_spent\")] | length" told)" = 1 &&
	jq -s ".[0]" told >event.json &&
	schema_validate notify-event.schema.json event.json &&
	test "$(jq -r ".run, .work_order, .from, .commit" event.json | sort -u)" = null &&
	test "$(jq -r .state event.json)" = budget_spent &&
	test "$(jq -r .period event.json)" = "day $(jq -r .at event.json | cut -c1-10)" &&
	jq -r .reason event.json | grep -q "^the day.s budget is spent: \$0.00 recorded since midnight UTC" &&
	test_grep "^SLUICE_EVENT=budget_spent$" told.env &&
	test_grep "^SLUICE_RUN_ID=$" told.env &&
	sluice -C t notify >list.out &&
	test "$(grep -c budget_spent list.out)" = 1 &&
	sluice -C t log >log.out &&
	test_grep "  repository  - -> budget_spent  the day.s budget is spent: .* (day 2" log.out
'

test_expect_success 'usd: none is no limit; bad amounts are refused with file and line' '
	sluice_repo n "budget:" "  day: {usd: none}" "  month: {usd: none}" &&
	sluice -C n check >/dev/null &&
	for bad in lots -1 1. "\"40\"" 2000000000 "[1]"; do
		sluice_repo b "budget:" "  day:" "    usd: $bad" &&
		line=$(grep -n "usd:" b/.system/config.yaml | cut -d: -f1) &&
		! sluice -C b check >b.out 2>&1 || { cat b.out; return 1; }
		test_grep "config.yaml:$line:[0-9]*: .budget.day.usd. must be an amount of US dollars" b.out ||
			return 1
		rm -rf b
	done &&
	sluice_repo u "budget:" "  week: {usd: 1}" &&
	! sluice -C u check >u.out 2>&1 &&
	test_grep "unknown key .week." u.out
'

test_done
