#!/bin/sh
# `sluice report` (HTML on stdout by default) and `report --dot -` print text
# from work orders as queue does: no escape code, no bidirectional override,
# no raw line break or tab from a title (an invalid work order's title is
# stored as written).
. "$(dirname "$0")/lib.sh"

ESC=$(printf '\033')
RLO=$(printf '\342\200\256')
TAB=$(printf '\t')

test_expect_success 'setup: work orders whose titles hold an escape code, an override, a tab' '
	sluice_repo repo &&
	mkdir -p repo/work_orders &&
	printf -- "---\nid: R1\ntitle: \"red \\\\e[31m title\\\\nR9  ready  fake\"\n---\nx\n" >repo/work_orders/R1.md &&
	printf -- "---\nid: R2\ntitle: \"a\\\\u202Eevil\"\n---\nx\n" >repo/work_orders/R2.md &&
	printf -- "---\nid: R3\ntitle: \"tab\\\\there\"\n---\nx\n" >repo/work_orders/R3.md &&
	sluice -C repo queue >out 2>&1 &&
	test_grep "^invalid .*R1" out
'

test_expect_success 'the HTML page shows them escaped' '
	sluice -C repo report >page.html &&
	test_grep "R1" page.html &&
	! grep -q "$ESC" page.html &&
	! grep -q "$RLO" page.html &&
	! grep -q "title$TAB" page.html &&
	test_grep "red .x1b\[31m title.nR9" page.html &&
	test_grep "a.u202eevil" page.html
'

test_expect_success 'the DOT graph too' '
	sluice -C repo report --dot - >graph.dot &&
	test_grep "R1" graph.dot &&
	! grep -q "$ESC" graph.dot &&
	! grep -q "$RLO" graph.dot &&
	! grep -q "tab$TAB" graph.dot &&
	test_grep "a.*u202eevil" graph.dot
'

test_done
