#!/bin/sh
# A worker killed by a signal fails the tick (exit 1, the run named), but the
# tick still ends its pass as it did before issue 11: the summary line (or
# the --json object) is printed and the target is observed after the
# workers, so a landing the killed worker made is recorded as sluice's own
# while its run is still merging. Before the fix the tick stopped at the
# kill: no summary, no JSON on stdout, the landing unobserved, and a person
# who then abandoned the run got an "unreviewed landing" alarm that stopped
# every merge.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a repository with a command reviewer' '
	sluice_repo r "$(approve_reviewer_config)" &&
	echo "echo a >a.txt" >"$BUILDERS/A.sh" &&
	echo "echo b >b.txt" >"$BUILDERS/B.sh"
'

test_expect_success 'killed after the ref move: exit 1, the run named, and the summary line' '
	wo r A &&
	test_expect_failure_code 1 env SLUICE_FAULT=merge.after_ref_move "$SLUICE" -C r tick >out 2>err &&
	run=$(run_of r A) &&
	test_grep "the worker of run $run was killed by SIGKILL" err &&
	test_grep "^tick: 1 started, 0 merged, 0 failed, 0 waiting" out
'

test_expect_success 'the landing was observed while its run was merging: no alarm after abandon' '
	run=$(run_of r A) &&
	test "$(state_of r $run)" = merging &&
	sluice -C r abandon $run &&
	sluice -C r tick >out 2>&1 &&
	test_grep -v "did not land" out &&
	sluice -C r status >st &&
	test_grep -v "UNREVIEWED" st
'

test_expect_success 'tick --json prints its object on stdout even when a worker was killed' '
	sluice_repo r2 "$(approve_reviewer_config)" &&
	wo r2 B &&
	test_expect_failure_code 1 env SLUICE_FAULT=merge.after_ref_move "$SLUICE" -C r2 tick --json >out 2>err &&
	test_grep "killed by SIGKILL" err &&
	test_grep "\"started\": 1" out &&
	test_grep "\"unreviewed\": null" out
'

test_done
