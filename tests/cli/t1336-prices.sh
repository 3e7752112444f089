#!/bin/sh
# budget.prices (docs/budgets.md): where an attempt reported tokens but no
# cost, the price of its model (US dollars per million tokens) gives one,
# marked an estimate in `sluice cost`, `show` and the budget's words; a
# cost the agent said is kept; a model not in the table stays without one.
# A bad table is refused with the file and line.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool jq

tokens() { # WO MODEL [COST]
	printf '%s\n' "echo $1 >$1.txt" \
		"echo '{\"input_tokens\": 1000000, \"output_tokens\": 200000, \"cache_read_tokens\": 500000, \"model\": \"$2\"${3:+, \"cost_usd\": $3}}' >\"\$SLUICE_USAGE_FILE\"" \
		>"$BUILDERS/$1.sh"
}
tokens E m-1
tokens K m-1 0.5
tokens U m-2
tokens R m-1

test_expect_success 'tokens of a priced model get a cost, marked an estimate' '
	sluice_repo r "$(approve_reviewer_config)" "budget:" "  prices:" \
		"    m-1: {input: 3, output: 15, cache_read: 0.30}" &&
	wo r E && wo r K && wo r U && settle r &&
	sluice -C r cost --json >cost.json &&
	jq -c "[.groups[] | [.key, .cost_usd, .estimate, .no_cost]]" cost.json >groups &&
	echo "[[\"E\",6.15,true,0],[\"K\",0.5,false,0],[\"U\",0,false,1]]" >want &&
	jq -c "sort" groups >got && jq -c "sort" want >want.sorted &&
	test_cmp want.sorted got &&
	sluice -C r cost >cost.out &&
	test_grep "^E .*\$6.1500 (estimate)$" cost.out &&
	sluice -C r show "$(run_of r E)" >show.out &&
	test_grep "estimate" show.out
'

test_expect_success 'an estimated cost counts in the run budget, and says so' '
	sluice_repo b "gates:" "  test: [\"false\"]" "retry:" "  - exit: 3" "budget:" "  prices:" \
		"    m-1: {input: 3, output: 15, cache_read: 0.30}" &&
	wo b R "budget: {usd: 5}" && settle b &&
	sluice -C b status --json "$(run_of b R)" >st.json &&
	test "$(jq -r .attempt st.json)" = 1 &&
	jq -r .reason st.json | grep -q "its attempts recorded \$6.15 (estimate), the work order.s budget.usd is \$5.00"
'

test_expect_success 'a bad price table: the line and what to write' '
	for bad in "prices: 3" "prices: {m-1: 3}" "prices: {m-1: {inptu: 3}}" \
		"prices: {m-1: {input: -1}}" "prices: {m-1: {input: none}}" "prices: {m-1: {}}"; do
		rm -rf x && sluice_repo x "budget:" "  $bad" &&
		! sluice -C x check >x.out 2>&1 &&
		grep -q "config.yaml:[0-9]*:" x.out &&
		grep -q "budget.prices" x.out || { echo "taken: $bad" >&2; cat x.out >&2; return 1; }
	done &&
	rm -rf x && sluice_repo x "budget:" "  prices: {m-1: {inptu: 3}}" &&
	! sluice -C x check >x.out 2>&1 &&
	test_grep "did you mean .input." x.out
'

test_done
