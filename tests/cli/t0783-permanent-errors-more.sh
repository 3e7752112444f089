#!/bin/sh
# Permanent errors that were retried on every tick, forever:
# - merge.message may name any field of the work order ({work_order.<field>});
#   a field of 20 KB made "the merge message is too long" and the approved
#   run was deferred each tick. The subject is cut instead (at a character
#   boundary, marked with "..."), and the run merges.
# - a file over 2 GiB (a sparse file costs the builder nothing): git diff
#   fails ("Out of memory, malloc failed") and the builder was run again each
#   tick. The run ends failed with the reason.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool iconv

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

test_expect_success 'a file over 2 GiB: the run fails once, with the reason' '
	sluice_repo big &&
	approve_reviewer_config >>big/.system/config.yaml &&
	echo "truncate -s 2200M big.bin; echo x >x.txt" >"$BUILDERS/B1.sh" &&
	wo big B1 &&
	timeout 600 "$SLUICE" -C big tick >out 2>err &&
	run=$(run_of big B1) &&
	test "$(state_of big $run)" = failed &&
	sluice -C big runs >runs &&
	test_grep "cannot record the diff of attempt 1: .git diff" runs &&
	test_grep -v "retried next tick" runs &&
	timeout 600 "$SLUICE" -C big tick >out2 2>err2 &&
	test_grep "^tick: 0 started" out2 &&
	test "$(state_of big $run)" = failed
'

test_done
