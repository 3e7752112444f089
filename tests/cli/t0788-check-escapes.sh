#!/bin/sh
# sluice check prints what it found in work orders as queue does: a file
# name with an escape code and a line break, an id with a bidirectional
# override, each shown escaped on the problem's one line (text and --json).
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool python3

ESC=$(printf '\033')
RLO=$(printf '\342\200\256')

test_expect_success 'setup: a work order whose file name and dependency are hostile' '
	sluice_repo repo &&
	mkdir -p repo/work_orders &&
	printf -- "---\nid: F1\ntitle: t\ndepends_on: [\"X\\\\u202eY\"]\n---\nx\n" \
		>"repo/work_orders/$(printf "a\033[31m\nFAKE").md"
'

test_expect_success 'check: one line per problem, nothing raw' '
	test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
	! grep -q "$ESC" out &&
	! grep -q "$RLO" out &&
	test_grep -v "^FAKE" out &&
	test_grep "^work_orders/a.x1b\[31m.nFAKE.md:4:[0-9]*: depends_on entry .X.u202eY." out &&
	test_grep "^1 problem found" out
'

test_expect_success 'check --json: one entry for the problem' '
	test_expect_failure_code 1 sluice -C repo check --json >out.json &&
	python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert len(j[\"problems\"]) == 1, j" out.json
'

test_expect_success 'an error quoting an argument escapes C1 codes and overrides too' '
	test_expect_failure_code 1 sluice -C repo show "$(printf "x\342\200\256y\302\233z\033[31m")" >out 2>err &&
	! grep -q "$RLO" err &&
	! grep -q "$(printf "\302\233")" err &&
	! grep -q "$ESC" err &&
	test_grep "x.u202ey.u009bz.x1b\[31m" err
'

test_done
