#!/bin/sh
# Editing a done work order runs it again (a new revision is new work): the
# queue, the run's first reason, `status` and `sluice log` say "new revision
# of a done work order" before its agent starts, naming the run that did the
# revision before.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a work order merged' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	printf "%s\n" "n=\$(cat count.txt 2>/dev/null || echo 0)" "echo \$((n + 1)) >count.txt" \
		>"$BUILDERS/W1.sh" &&
	wo repo W1 &&
	sluice -C repo tick >/dev/null &&
	first=$(run_of repo W1) &&
	test "$(state_of repo $first)" = merged &&
	echo $first >first
'

test_expect_success 'one byte more in its file: the queue says it is a new revision of a done one' '
	echo "." >>repo/work_orders/W1.md &&
	sluice -C repo queue --explain >out &&
	test_grep "^ready .* W1 " out &&
	test_grep "^  *new revision of a done work order (run $(cat first) merged the one before); starts now" out
'

test_expect_success 'its run says so from its claim, before the agent ran' '
	cat >"$BUILDERS/W1.sh" <<-EOF &&
	"$SLUICE" -C "$TRASH/repo" log >"$TRASH/log-while-building" 2>&1
	echo 2 >count.txt
	EOF
	sluice -C repo tick >out &&
	test_grep "new -> queued: claimed by sluice tick: new revision of a done work order (run $(cat first) merged the one before)" out &&
	test_grep "new revision of a done work order" log-while-building &&
	second=$(run_of repo W1) &&
	test "$second" != "$(cat first)" &&
	test "$(state_of repo $second)" = merged &&
	sluice -C repo log --json >log.json &&
	test_grep "claimed by sluice tick: new revision of a done work order" log.json &&
	test "$(git -C repo show main:count.txt)" = 2
'

test_expect_success 'unchanged again, it stays done' '
	sluice -C repo tick >out &&
	test_grep "^tick: 0 started" out &&
	sluice -C repo queue --explain >out &&
	test_grep "^done .* W1 " out &&
	test_grep "^  *done: merged by run" out
'

test_done
