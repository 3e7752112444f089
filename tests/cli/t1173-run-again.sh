#!/bin/sh
# sluice run --again WO: a failed or abandoned work order runs again, a new
# run of the same revision, without editing its file. A work order that is
# running, done or unknown is refused with what it is.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: W1 fails on its first run, W2 is done' '
	sluice_repo repo &&
	cat >"$BUILDERS/W1.sh" <<-EOS &&
	if [ ! -f "$TRASH/fixed" ]; then exit 3; fi
	echo fixed >>w1.txt
	EOS
	echo "echo two >>w2.txt" >"$BUILDERS/W2.sh" &&
	wo repo W1 && wo repo W2 &&
	{ sluice -C repo tick >out || :; } &&
	r1=$(run_of repo W1) &&
	test "$(state_of repo $r1)" = failed &&
	r2=$(run_of repo W2) &&
	sluice -C repo approve $r2 && sluice -C repo tick >out &&
	test "$(state_of repo $r2)" = merged &&
	sluice -C repo queue --json >q &&
	test_grep "\"failed\"" q
'

test_expect_success 'a plain sluice run of the failed work order is refused' '
	test_expect_failure_code 1 sluice -C repo run W1 2>err &&
	test_grep "cannot start now" err
'

test_expect_success 'run --again runs it again: a new run of the same file' '
	r1=$(run_of repo W1) &&
	: >fixed &&
	cp repo/work_orders/W1.md before.md &&
	sluice -C repo run --again W1 >out &&
	test_cmp before.md repo/work_orders/W1.md &&
	r=$(run_of repo W1) &&
	test "$r" != "$r1" &&
	test "$(state_of repo $r)" = awaiting_review &&
	test "$(state_of repo $r1)" = failed &&
	sluice -C repo log $r >log &&
	test_grep "run --again" log
'

test_expect_success 'run --again of a running work order is refused' '
	test_expect_failure_code 1 sluice -C repo run --again W1 2>err &&
	test_grep "work order .W1. is running" err
'

test_expect_success 'an abandoned work order runs again too' '
	r=$(run_of repo W1) &&
	sluice -C repo abandon $r &&
	sluice -C repo run --again W1 >out &&
	r3=$(run_of repo W1) &&
	test "$r3" != "$r" &&
	test "$(state_of repo $r3)" = awaiting_review
'

test_expect_success 'run --again of a done or unknown work order is refused' '
	test_expect_failure_code 1 sluice -C repo run --again W2 2>err &&
	test_grep "work order .W2. is done" err &&
	test_expect_failure_code 1 sluice -C repo run --again W9 2>err &&
	test_grep "no work order .W9." err
'

test_done
