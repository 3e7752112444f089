#!/bin/sh
# Messages that say what is wrong: -C without a directory, an id with a
# letter outside ASCII.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup' '
	sluice_repo repo
'

test_expect_success '-C with no directory says so' '
	test_expect_failure_code 2 sluice -C >out 2>&1 &&
	test_grep "^sluice: -C needs a directory" out &&
	test_grep -v "unknown option" out &&
	test_expect_failure_code 2 sluice -C "" queue >out 2>&1 &&
	test_grep "^sluice: -C needs a directory" out
'

test_expect_success 'an id with a letter outside ASCII names the letter and its code point' '
	mkdir -p repo/work_orders &&
	printf -- "---\nid: WO-\303\251\ntitle: Accented\n---\nx\n" >repo/work_orders/acc.md &&
	test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
	e=$(printf "\303\251") &&
	test_grep "contains .$e. .U+00E9.; ids are .A-Za-z0-9._-." out &&
	test_grep -v "contains .?." out
'

test_done
