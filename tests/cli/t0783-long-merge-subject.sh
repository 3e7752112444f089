#!/bin/sh
# merge.message may name any field of the work order ({work_order.<field>});
# a field of 20 KB made "the merge message is too long" and the approved run
# was deferred on every tick, forever. The subject is cut instead (at a
# character boundary, marked with "..."), and the run merges.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a merge message naming a long field' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	printf "%s\n" "merge:" "  message: \"Merge {work_order.id}: {work_order.goal}\"" \
		>>repo/.system/config.yaml &&
	big=$(printf "%05000d" 0 | sed "s/0/\\xc3\\xa9g/g") &&
	mkdir -p repo/work_orders &&
	printf -- "---\nid: L1\ntitle: long goal\ngoal: $big\n---\nx\n" >repo/work_orders/L1.md &&
	echo "echo l1 >l1.txt" >"$BUILDERS/L1.sh" &&
	sluice -C repo check
'

test_expect_success 'the run merges with the subject cut, its trailers intact' '
	sluice -C repo tick >out 2>err &&
	run=$(run_of repo L1) &&
	test "$(state_of repo $run)" = merged &&
	git -C repo log -1 --format=%s main >subject &&
	test $(wc -c <subject) -le 2049 &&
	test_grep "^Merge L1: .*\.\.\.$" subject &&
	iconv -f UTF-8 -t UTF-8 subject >/dev/null &&
	git -C repo log -1 --format=%B main >body &&
	test_grep "^Sluice-Run: $run$" body &&
	sluice -C repo audit >audit.out
'

test_done
