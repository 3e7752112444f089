#!/bin/sh
# The watch: section of the config (docs/watch.md): watch gates (name ->
# argv, or a mapping like a gate's), every (landings between two watches)
# and revert_review (person or auto). sluice check takes a good section and
# refuses bad values, naming the config file and the line.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup' '
	sluice_repo repo &&
	cp repo/.system/config.yaml good.yaml
'

# with LINES...: the config is good.yaml and these lines after it
with() {
	cp good.yaml repo/.system/config.yaml &&
	printf "%s\n" "$@" >>repo/.system/config.yaml
}

test_expect_success 'a watch section is taken' '
	with "watch:" "  gates:" "    e2e: [make, e2e]" \
		"    fuzz: {command: [sh, -c, \"exit 0\"], timeout: 1h}" \
		"  every: 5" "  revert_review: auto" &&
	sluice -C repo check >out 2>&1 &&
	test_grep -v "warning: watch" out
'

test_expect_success 'every without gates: a warning that nothing is watched' '
	with "watch:" "  every: 5" &&
	sluice -C repo check >out 2>&1 &&
	test_grep "warning: watch.every is 5 but watch.gates names no gate: nothing is watched" out
'

test_expect_success 'an empty watch section, or gates alone, is taken with no warning' '
	with "watch:" &&
	sluice -C repo check >out 2>&1 &&
	test_grep -v "warning: watch" out &&
	with "watch:" "  gates:" "    e2e: [make, e2e]" &&
	sluice -C repo check >out 2>&1 &&
	test_grep -v "warning: watch" out
'

test_expect_success 'every: a negative number is refused with file and line' '
	with "watch:" "  every: -1" &&
	line=$(grep -n "every" repo/.system/config.yaml | cut -d: -f1) &&
	! sluice -C repo check >out 2>&1 &&
	test_grep "config.yaml:$line:.*watch.every" out &&
	! sluice -C repo tick >out2 2>&1 &&
	test_grep "config.yaml:$line:.*watch.every" out2
'

test_expect_success 'every: a word is refused' '
	with "watch:" "  every: often" &&
	line=$(grep -n "every" repo/.system/config.yaml | cut -d: -f1) &&
	! sluice -C repo check >out 2>&1 &&
	test_grep "config.yaml:$line:.*watch.every" out
'

test_expect_success 'revert_review: an unknown word is refused' '
	with "watch:" "  revert_review: robot" &&
	line=$(grep -n "revert_review" repo/.system/config.yaml | cut -d: -f1) &&
	! sluice -C repo check >out 2>&1 &&
	test_grep "config.yaml:$line:.*watch.revert_review.*person.*auto" out
'

test_expect_success 'a watch gate with a bad name is refused' '
	with "watch:" "  gates:" "    \"e 2 e\": [make]" &&
	line=$(grep -n "e 2 e" repo/.system/config.yaml | cut -d: -f1) &&
	! sluice -C repo check >out 2>&1 &&
	test_grep "config.yaml:$line:.*e 2 e" out
'

test_expect_success 'a watch gate that is no command is refused' '
	with "watch:" "  gates:" "    e2e: 7" &&
	line=$(grep -n "e2e" repo/.system/config.yaml | cut -d: -f1) &&
	! sluice -C repo check >out 2>&1 &&
	test_grep "config.yaml:$line:.*watch.gates" out
'

test_expect_success 'a watch gate mapping without a command is refused' '
	with "watch:" "  gates:" "    e2e: {timeout: 1h}" &&
	line=$(grep -n "e2e" repo/.system/config.yaml | cut -d: -f1) &&
	! sluice -C repo check >out 2>&1 &&
	test_grep "config.yaml:$line:.*e2e.*command" out
'

test_expect_success 'an unknown key under watch is refused' '
	with "watch:" "  often: 3" &&
	line=$(grep -n "often" repo/.system/config.yaml | cut -d: -f1) &&
	! sluice -C repo check >out 2>&1 &&
	test_grep "config.yaml:$line:.*often" out
'

test_done
