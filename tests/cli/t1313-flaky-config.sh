#!/bin/sh
# merge.rerun_failed in the config: a count from 0 to 10; a negative
# number or a word is refused, the message naming the config file and the
# line.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup' '
	sluice_repo repo
'

test_expect_success 'a count is taken' '
	cp repo/.system/config.yaml good.yaml &&
	printf "%s\n" "merge:" "  rerun_failed: 3" >>repo/.system/config.yaml &&
	sluice -C repo check >out 2>&1 &&
	cp good.yaml repo/.system/config.yaml
'

test_expect_success 'a negative count is refused, naming the file and the line' '
	printf "%s\n" "merge:" "  rerun_failed: -1" >>repo/.system/config.yaml &&
	line=$(grep -n "rerun_failed" repo/.system/config.yaml | cut -d: -f1) &&
	! sluice -C repo check >out 2>&1 &&
	test_grep "config.yaml:$line:.*merge.rerun_failed" out &&
	! sluice -C repo tick >out2 2>&1 &&
	test_grep "config.yaml:$line:.*merge.rerun_failed" out2 &&
	cp good.yaml repo/.system/config.yaml
'

test_expect_success 'a word is refused, naming the file and the line' '
	printf "%s\n" "merge:" "  rerun_failed: twice" >>repo/.system/config.yaml &&
	line=$(grep -n "rerun_failed" repo/.system/config.yaml | cut -d: -f1) &&
	! sluice -C repo check >out 2>&1 &&
	test_grep "config.yaml:$line:.*merge.rerun_failed" out &&
	cp good.yaml repo/.system/config.yaml
'

test_expect_success 'more than 10 is refused' '
	printf "%s\n" "merge:" "  rerun_failed: 11" >>repo/.system/config.yaml &&
	! sluice -C repo check >out 2>&1 &&
	test_grep "merge.rerun_failed" out &&
	cp good.yaml repo/.system/config.yaml
'

test_done
