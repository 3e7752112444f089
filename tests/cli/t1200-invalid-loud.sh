#!/bin/sh
# Loud where cron users look (issue 26): an invalid work order is named by
# every `sluice tick` and by `sluice status` (file, line, what to do), in
# their --json too, and counted among the invalid ones. A dependency whose
# file exists but does not parse is said to not parse, not to be unknown.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a good work order, one that does not parse, one that needs it' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	echo "echo good >good.txt" >"$BUILDERS/GOOD.sh" &&
	wo repo GOOD &&
	printf -- "---\nid: BROKEN\ntitle: \"Fix\" the parser\n---\nx\n" >repo/work_orders/broken.md &&
	wo repo NEEDS "depends_on: [BROKEN]"
'

test_expect_success 'tick names each invalid work order with its file, line and what to do' '
	sluice -C repo tick >out 2>err &&
	test_grep "^tick: 1 started, 1 merged" out &&
	test_grep "^tick: 2 invalid work orders, not run: fix them (sluice check" out &&
	test_grep "^  work_orders/broken.md:3:1: YAML syntax error: .*the value of .title. starts with a quote" out &&
	test_grep "^  work_orders/NEEDS.md:[0-9]*:[0-9]*: work order .NEEDS. depends on .BROKEN., whose file work_orders/broken.md does not parse; fix that file" out &&
	test_grep -v "depends on unknown" out
'

test_expect_success 'and again on the next tick: every tick says it' '
	sluice -C repo tick >out &&
	test_grep "^tick: 2 invalid work orders" out &&
	test_grep "^  work_orders/broken.md:3:1:" out
'

test_expect_success 'tick --json carries them as "invalid"' '
	sluice -C repo tick --json >out.json &&
	test_grep "\"invalid\": \[" out.json &&
	test_grep "\"path\": \"work_orders/broken.md\"" out.json &&
	test_grep "\"message\": \"work_orders/NEEDS.md:" out.json
'

test_expect_success 'status counts both and names them' '
	sluice -C repo status >out &&
	test_grep "^work orders:.* invalid 2" out &&
	test_grep "^2 invalid work orders, not run: fix them" out &&
	test_grep "^  work_orders/broken.md:3:1: YAML syntax error" out &&
	sluice -C repo status --json >out.json &&
	test_grep "\"invalid\": 2" out.json &&
	test_grep "\"path\": \"work_orders/NEEDS.md\"" out.json
'

test_expect_success 'fixed, they are gone from both and run' '
	printf -- "---\nid: BROKEN\ntitle: Fix the parser\n---\nx\n" >repo/work_orders/broken.md &&
	echo "echo b >broken.txt" >"$BUILDERS/BROKEN.sh" &&
	echo "echo n >needs.txt" >"$BUILDERS/NEEDS.sh" &&
	sluice -C repo tick >out &&
	test_grep -v "invalid" out &&
	sluice -C repo tick >out &&
	test_grep -v "invalid" out &&
	sluice -C repo status >out &&
	test_grep -v "invalid" out &&
	git -C repo show main:needs.txt
'

test_done
