#!/bin/sh
# A path from the builder's tree enters a run's reason (git's CONFLICT line)
# and the conflict's markers: tick's own progress lines print the reason
# escaped as runs does, and show prints the path on one line (no fake line).
. "$(dirname "$0")/lib.sh"

ESC=$(printf '\033')

test_expect_success 'setup: two runs change a file whose name holds an escape code and a line break' '
	sluice_repo repo "merge:" "  resolver: none" &&
	f=$(printf "x\033[31m\nWO-FAKE  merged") &&
	seq 1 5 >"repo/$f" && git -C repo add -A && git -C repo commit -q -m f &&
	for n in 1 2; do
		printf "sed -i \"3s/.*/c$n/\" \"\$(printf %s)\"\n" "'\''x\\033[31m\\nWO-FAKE  merged'\''" \
			>"$BUILDERS/C$n.sh" || return 1
	done &&
	wo repo C1 && wo repo C2
'

test_expect_success 'the tick: one merges, one conflicts; its progress lines hold no escape code' '
	sluice -C repo tick --jobs 2 >out 2>err &&
	for n in 1 2; do sluice -C repo approve $(run_of repo C$n) >/dev/null || return 1; done &&
	sluice -C repo tick >out 2>err &&
	test_grep "merge_conflict" out &&
	! grep -q "$ESC" out &&
	! grep -q "$ESC" err
'

test_expect_success 'show prints the path on one line' '
	run=$(sluice -C repo runs | awk "\$3 == \"merge_conflict\" {print \$1}") &&
	test -n "$run" &&
	sluice -C repo show $run >show &&
	! grep -q "$ESC" show &&
	test_grep -v "^WO-FAKE" show
'

test_expect_success 'merge-preview prints the conflicting path escaped, on one line' '
	run=$(sluice -C repo runs | awk "\$3 == \"merge_conflict\" {print \$1}") &&
	branch=$(sluice -C repo status --json $run | sed -n "s/^ *\"branch_name\": \"\(.*\)\",*$/\1/p") &&
	test -n "$branch" &&
	test_expect_failure_code 1 sluice -C repo merge-preview main "$branch" >mp 2>mp.err &&
	test_grep "^conflict$" mp &&
	! grep -q "$ESC" mp &&
	test_grep -v "^WO-FAKE" mp &&
	test_grep "x.x1b\[31m.nWO-FAKE" mp
'

test_done
