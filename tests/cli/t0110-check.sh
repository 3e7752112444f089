#!/bin/sh
# sluice check: every invalid fixture gives its expected message, valid ones
# still queue, config problems are reported with line and column.
. "$(dirname "$0")/lib.sh"

INVALID="$FIXTURES/work_orders/invalid"

test_expect_success 'setup' '
	test_repo r &&
	sluice -C r init >/dev/null &&
	cp -R "$FIXTURES/work_orders/valid/." r/work_orders/
'

test_expect_success 'the valid fixtures pass' '
	sluice -C r check >out &&
	test_grep "^ok: the config and 8 work orders are valid" out
'

# One case at a time, beside the valid work orders.
for exp in "$INVALID"/*.expected; do
	case=$(basename "$exp" .expected)
	test_expect_success "invalid case $case" '
		rm -rf r/work_orders && mkdir r/work_orders &&
		cp -R "$FIXTURES/work_orders/valid/." r/work_orders/ &&
		if test -f "$INVALID/$case.gen"; then
			sh "$INVALID/$case.gen" >"r/work_orders/$case.md"
		else
			cp "$INVALID/$case".md "$INVALID/$case".*.md r/work_orders/ 2>/dev/null ||
			cp "$INVALID/$case.md" r/work_orders/
		fi &&
		test_expect_failure_code 1 sluice -C r check >out 2>&1 &&
		{ grep -F -e "$(cat "$exp")" out >/dev/null || { cat out; false; }; } &&
		test_grep "work_orders/$case" out &&
		sluice -C r queue --json >q.json &&
		test_grep "\"id\": \"WO-103\"" q.json &&
		test "$(grep -c "\"state\": \"ready\"" q.json)" -ge 3
	'
done

test_expect_success 'all invalid cases at once: each reported, nothing else broken' '
	rm -rf r/work_orders && mkdir r/work_orders &&
	cp -R "$FIXTURES/work_orders/valid/." r/work_orders/ &&
	cp "$INVALID"/*.md r/work_orders/ &&
	sh "$INVALID/too-big.gen" >r/work_orders/too-big.md &&
	test_expect_failure_code 1 sluice -C r check >out 2>&1 &&
	for exp in "$INVALID"/*.expected; do
		grep -F -e "$(cat "$exp")" out >/dev/null || { echo "missing: $(cat "$exp")"; exit 1; }
	done &&
	sluice -C r queue --explain >q &&
	test_grep "WO-103" q
'

test_expect_success 'a symbolic link in the inbox is reported, not followed' '
	rm -rf r/work_orders && mkdir r/work_orders &&
	echo "---" >outside.md &&
	ln -s "$TRASH/outside.md" r/work_orders/link.md &&
	test_expect_failure_code 1 sluice -C r check >out &&
	test_grep "work_orders/link.md: is a symbolic link" out
'

test_expect_success 'config problems carry line and column' '
	rm -rf r/work_orders && mkdir r/work_orders &&
	cat >r/.system/config.yaml <<-\EOC &&
	target: main
	queue:
	  jobs: many
	  colour: blue
	gates:
	  test: [make, test]
	retry:
	  - not: gate.lint
	  - attempt: 2
	EOC
	test_expect_failure_code 1 sluice -C r check >out &&
	test_grep "^.system/config.yaml:3:9: .queue.jobs. must be a whole number" out &&
	test_grep "^.system/config.yaml:4:3: unknown key .colour. in queue" out &&
	test_grep "names no configured gate" out &&
	test_grep "retry has no .exit. entry; add .- exit: N. to say when to stop" out
'

test_expect_success 'a config YAML error is reported with its position' '
	printf "target: main\nqueue: [\n" >r/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C r check >out &&
	test_grep "^.system/config.yaml:3:1: YAML syntax error" out
'

test_expect_success 'check --json lists the problems' '
	test_expect_failure_code 1 sluice -C r check --json >out.json &&
	test_grep "\"ok\": false" out.json &&
	test_grep "YAML syntax error" out.json
'

test_expect_success 'check before init says what to do' '
	test_repo fresh &&
	test_expect_failure_code 1 sluice -C fresh check 2>err &&
	test_grep "sluice init" err
'

test_expect_success 'check runs nothing: no database is created by it' '
	test_repo r2 && sluice -C r2 init >/dev/null &&
	rm r2/.system/sluice.db &&
	sluice -C r2 check >out &&
	test ! -f r2/.system/sluice.db
'

test_done
