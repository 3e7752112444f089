#!/bin/sh
# A run's own budget (docs/budgets.md): the work order's budget: {usd,
# minutes}, else budget.run.usd and budget.run.minutes in the config. Once
# the run's attempts recorded that much, no further attempt starts and the
# run fails with a reason naming the limit; the minutes left also bound
# the attempt under way. A bad budget in a work order is refused with the
# file and line.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool jq

# Each attempt of these builders changes a file and reports $1 spent; the
# gate fails every time, and the retry rules allow five attempts.
for w in U C N; do
	printf '%s\n' "echo \"\$SLUICE_ATTEMPT\" >$w.txt" \
		"echo \"\${SLUICE_BUDGET_USD-unset}\" >>\"$TRASH/$w.budget\"" \
		"echo '{\"cost_usd\": 1, \"model\": \"m\"}' >\"\$SLUICE_USAGE_FILE\"" >"$BUILDERS/$w.sh"
done
# SLOW never ends by itself (nothing writes the file it waits for).
printf '%s\n' "echo slow >slow.txt" "while [ ! -e \"$TRASH/never\" ]; do sleep 0.1; done" \
	>"$BUILDERS/SLOW.sh"

red_repo() { # DIR [config lines...]
	_d=$1 && shift &&
	sluice_repo "$_d" "gates:" "  test: [\"false\"]" "retry:" "  - exit: 5" \
		"$(approve_reviewer_config)" "$@"
}

# attempts DIR WO: the attempts of the work order's run
attempts() {
	sluice -C "$1" status --json "$(run_of "$1" "$2")" | jq -r .attempt
}
reason() {
	sluice -C "$1" status --json "$(run_of "$1" "$2")" | jq -r .reason
}

test_expect_success 'the work order budget.usd: the run stops before the attempt past it' '
	red_repo r &&
	wo r U "budget: {usd: 2.50}" &&
	settle r &&
	test "$(state_of r "$(run_of r U)")" = failed &&
	test "$(attempts r U)" = 3 &&
	reason r U >why &&
	test_grep "the run.s budget is spent: its attempts recorded \$3.00, the work order.s budget.usd is \$2.50; no further attempt starts" why &&
	sluice -C r cost --json >cost.json &&
	test "$(jq -c "[.total.attempts, .total.cost_usd]" cost.json)" = "[3,3]" &&
	printf "%s\n" 2.5000 1.5000 0.5000 >want &&
	test_cmp want "$TRASH/U.budget" &&
	test_expect_failure_code 1 sluice -C r retry "$(run_of r U)" >out 2>&1 &&
	test_grep "nothing was done: a higher budget.usd in the work order.s file is a new revision, which the next tick starts as a new run$" out
'

test_expect_success 'budget.run.usd in the config, and a work order of budget usd none runs on' '
	red_repo c "budget:" "  run: {usd: 1.5}" &&
	wo c C && wo c N "budget: {usd: none}" &&
	settle c &&
	test "$(attempts c C)" = 2 &&
	reason c C >why &&
	test_grep "recorded \$2.00, budget.run.usd in .system/config.yaml is \$1.50" why &&
	test "$(attempts c N)" = 5 &&
	test "$(wc -l <"$TRASH/N.budget")" = 5 && test -z "$(sort -u "$TRASH/N.budget")" &&
	test "$(sed -n 2p "$TRASH/C.budget")" = 0.5000 &&
	reason c N >whyn &&
	test_grep "retry exit at 5" whyn
'

test_expect_success 'sluice retry of a run past its budget is refused; a higher limit lets it go on' '
	r=$(run_of c C) &&
	test_expect_failure_code 1 sluice -C c retry "$r" >out 2>&1 &&
	test_grep "run .$r.: the run.s budget is spent: .*; nothing was done: raise budget.run.usd in .system/config.yaml, then .sluice retry $r.$" out &&
	test "$(state_of c "$r")" = failed &&
	sed -i "s/usd: 1.5/usd: 3.5/" c/.system/config.yaml &&
	sluice -C c retry "$r" >out 2>&1 &&
	settle c &&
	test "$(attempts c C)" = 4 &&
	reason c C >why &&
	test_grep "recorded \$4.00, budget.run.usd in .system/config.yaml is \$3.50" why
'

test_expect_success 'budget.usd 0: no attempt starts at all' '
	red_repo z &&
	wo z U "budget:" "  usd: 0" &&
	settle z &&
	test "$(state_of z "$(run_of z U)")" = failed &&
	test "$(attempts z U)" = 0 &&
	reason z U >w0 &&
	test_grep "recorded \$0.00, the work order.s budget.usd is \$0.00" w0 &&
	test "$(sluice -C z cost --json | jq .total.attempts)" = 0
'

test_expect_success 'budget.minutes bounds the attempt under way and stops the next' '
	red_repo m &&
	wo m SLOW "budget: {minutes: 0.02}" &&
	settle m &&
	r=$(run_of m SLOW) &&
	test "$(state_of m "$r")" = failed &&
	test "$(attempts m SLOW)" = 1 &&
	reason m SLOW >whym &&
	test_grep "the run.s time is spent: its attempts ran [0-9.]*s, the work order.s budget.minutes is 0.02 minutes; no further attempt starts" whym &&
	test_grep "timed out" m/.system/runs/$r/builder.log
'

test_expect_success 'a conflict past the budget: no builder resolves it, it waits for a person' '
	meeting_builders K1 K2 "echo %s >same.txt; echo \"{\\\"cost_usd\\\": 1}\" >\"\$SLUICE_USAGE_FILE\"" &&
	sluice_repo k "queue:" "  jobs: 2" "$(approve_reviewer_config)" &&
	wo k K1 "budget: {usd: 1}" && wo k K2 "budget: {usd: 1}" &&
	settle k &&
	states=$(for w in K1 K2; do state_of k "$(run_of k $w)"; done | sort | paste -sd " ") &&
	test "$states" = "merge_conflict merged" &&
	for w in K1 K2; do
		r=$(run_of k $w) &&
		if test "$(state_of k $r)" = merge_conflict; then
			reason k $w >whyk &&
			test_grep "the run.s budget is spent: its attempts recorded \$1.00, the work order.s budget.usd is \$1.00; no further attempt starts; the conflict waits for a person: see .sluice show $r." whyk &&
			test "$(attempts k $w)" = 1 || return 1
		fi || return 1
	done
'

test_expect_success 'a failed resolution spends the budget: the person gets a clean worktree' '
	meeting_builders K3 K4 "echo %s >same.txt; echo \"{\\\"cost_usd\\\": 1}\" >\"\$SLUICE_USAGE_FILE\"" &&
	cp "$BUILDERS/resolve.sh" resolve.keep &&
	test_when_finished "cp \"$TRASH/resolve.keep\" \"$BUILDERS/resolve.sh\"" &&
	printf "%s\n" "echo \"{\\\"cost_usd\\\": 1}\" >\"\$SLUICE_USAGE_FILE\"" "exit 1" \
		>"$BUILDERS/resolve.sh" &&
	sluice_repo h "queue:" "  jobs: 2" "merge:" "  resolve_attempts: 5" "$(approve_reviewer_config)" &&
	wo h K3 "budget: {usd: 2.5}" && wo h K4 "budget: {usd: 2.5}" &&
	settle h &&
	for w in K3 K4; do
		r=$(run_of h $w) &&
		if test "$(state_of h $r)" = merge_conflict; then
			reason h $w >whyh &&
			test_grep "recorded \$3.00, the work order.s budget.usd is \$2.50; no further attempt starts; the conflict waits for a person" whyh &&
			test "$(attempts h $w)" = 3 &&
			wt=h/.system/runs/$r/worktree &&
			test -z "$(git -C $wt status --porcelain --untracked-files=no)" &&
			! grep -q "^<<<<<<<" $wt/same.txt &&
			echo $w >conflicted || return 1
		fi || return 1
	done &&
	test -s conflicted
'

test_expect_success 'a bad budget in a work order: the file, the line and what to write' '
	sluice_repo b &&
	wo b B1 "budget: 5" &&
	test_expect_failure_code 1 sluice -C b check >out 2>&1 &&
	test_grep "work_orders/B1.md:4:.*budget must be a mapping such as {usd: 2.50, minutes: 30}" out &&
	rm b/work_orders/B1.md && wo b B2 "budget: {usd: -1}" &&
	test_expect_failure_code 1 sluice -C b check >out 2>&1 &&
	test_grep "B2.md:4:.*budget.usd must be an amount of US dollars such as 2.50" out &&
	rm b/work_orders/B2.md && wo b B3 "budget: {dollars: 3}" &&
	test_expect_failure_code 1 sluice -C b check >out 2>&1 &&
	test_grep "B3.md:4:.*unknown key .dollars. in budget; use usd" out &&
	rm b/work_orders/B3.md && wo b B4 "budget: {minutes: soon}" &&
	test_expect_failure_code 1 sluice -C b check >out 2>&1 &&
	test_grep "B4.md:4:.*budget.minutes must be a number of minutes" out
'

test_expect_success 'a bad budget.run in the config: the line and what to write' '
	sluice_repo bc "budget:" "  run: {usd: lots}" &&
	test_expect_failure_code 1 sluice -C bc check >out 2>&1 &&
	test_grep "config.yaml:[0-9]*:.*budget.run.usd. must be an amount of US dollars" out &&
	sluice_repo bm "budget:" "  run: {minutes: 1h}" &&
	test_expect_failure_code 1 sluice -C bm check >out 2>&1 &&
	test_grep "config.yaml:[0-9]*:.*budget.run.minutes. must be a number of minutes such as 45" out
'

test_done
