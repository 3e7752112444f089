#!/bin/sh
# `sluice cost` and `sluice show` give exactly the figures the builders
# wrote to $SLUICE_USAGE_FILE (docs/budgets.md), grouped and totalled;
# the JSON documents match schema/cost.schema.json and show.schema.json.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool jq

PY=$(command -v python3)

cat >"$BUILDERS/A.sh" <<'EOS'
echo a >a.txt
echo '{"input_tokens": 1000, "output_tokens": 200, "cost_usd": 0.25, "model": "big"}' >"$SLUICE_USAGE_FILE"
EOS
cat >"$BUILDERS/B.sh" <<'EOS'
echo b >b.txt
echo '{"input_tokens": 10, "output_tokens": 20, "cache_read_tokens": 30, "cost_usd": 1.5, "model": "small"}' >"$SLUICE_USAGE_FILE"
EOS
echo 'echo c >c.txt' >"$BUILDERS/C.sh"

test_expect_success 'setup: three merged runs, two that reported usage' '
	sluice_repo r "$(approve_reviewer_config)" && wo r A && wo r B && wo r C && settle r &&
	for w in A B C; do test "$(state_of r $(run_of r $w))" = merged || return 1; done
'

test_expect_success 'cost --json: the groups and the total are the figures written' '
	sluice -C r cost --json >cost.json &&
	schema_validate cost.schema.json cost.json &&
	test "$(jq -r ".by" cost.json)" = work-order &&
	test "$(jq -c "[.groups[] | [.key, .attempts, .input_tokens, .output_tokens, .cache_read_tokens, .cost_usd]] | sort" cost.json)" = "[[\"A\",1,1000,200,0,0.25],[\"B\",1,10,20,30,1.5]]" &&
	test "$(jq -c "[.total.attempts, .total.input_tokens, .total.cost_usd, .total.estimate, .total.no_cost]" cost.json)" = "[2,1010,1.75,false,0]"
'

test_expect_success 'cost --by model and --by day' '
	sluice -C r cost --by model --json >m.json &&
	test "$(jq -c "[.groups[] | [.key, .cost_usd]] | sort" m.json)" = "[[\"big\",0.25],[\"small\",1.5]]" &&
	sluice -C r cost --by day --json >d.json &&
	days=$(sqlite3 r/.system/sluice.db "SELECT DISTINCT date(recorded_ms / 1000, '"'"'unixepoch'"'"') FROM usage ORDER BY 1" | paste -sd " ") &&
	test "$(jq -r "[.groups[].key] | sort | join(\" \")" d.json)" = "$days" &&
	sluice -C r cost --by agent --json >a.json &&
	test "$(jq -c "[.groups[] | [.key, .attempts]]" a.json)" = "[[\"builder.command\",2]]"
'

test_expect_success 'cost --since: a date after today counts nothing' '
	sluice -C r cost --since 2099-01-01 --json >s.json &&
	test "$(jq -c "[.since, .total.attempts, .total.cost_usd]" s.json)" = "[\"2099-01-01\",0,0]" &&
	sluice -C r cost --since 2000-01-01T00:00Z --json >s2.json &&
	test "$(jq -r ".total.attempts" s2.json)" = 2 &&
	test_expect_failure_code 2 sluice -C r cost --since yesterday &&
	test_expect_failure_code 2 sluice -C r cost --by colour
'

test_expect_success 'cost: a table with a total line' '
	sluice -C r cost >out &&
	test_grep "^WORK-ORDER .*ATTEMPTS .*COST" out &&
	test_grep "^B  *1  *10  *20  *30  *0  *\\\$1.5000$" out &&
	test_grep "^total  *2  *1010  *220  *30  *0  *\\\$1.7500$" out
'

test_expect_success 'show: per attempt and total; --json matches its schema' '
	run=$(run_of r B) &&
	sluice -C r show $run >show.out &&
	test_grep "^  attempt 1 builder, small: 10 in, 20 out, 30 cache read, \\\$1.5000, " show.out &&
	test_grep "^  total: \\\$1.5000$" show.out &&
	sluice -C r show --json $run >show.json &&
	schema_validate show.schema.json show.json &&
	test "$(jq -c "[.usage.rows[0].cost_usd, .usage.rows[0].cache_write_tokens, .usage.cost_usd]" show.json)" = "[1.5,null,1.5]" &&
	sluice -C r show $(run_of r C) >c.out &&
	test_grep -v "^usage:" c.out
'

test_expect_success 'status: today and this month in one line' '
	sluice -C r status >st.out &&
	test_grep "^spend: today \\\$1.75, this month \\\$1.75 (sluice cost)$" st.out &&
	sluice_repo empty && sluice -C empty status >st2.out &&
	test_grep -v "^spend:" st2.out
'

test_done
