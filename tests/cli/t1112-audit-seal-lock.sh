#!/bin/sh
# `sluice audit --write-manifest RUN` (the hidden seal of a merged run with
# no manifest) takes the repository lock (.system/lock) as every other
# writer of the manifest chain does (a merge, reconciliation): while another
# process holds it, it says so and waits, writes nothing; once the lock is
# free it seals the run and the audit holds (issue 25). Before, it wrote the
# manifest at once, under a merge that held the lock.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool flock

echo "echo a >a.txt" >"$BUILDERS/A.sh"

test_expect_success 'setup: a merged run whose manifest is gone' '
	sluice_repo r "$(approve_reviewer_config)" &&
	wo r A && sluice -C r tick >/dev/null &&
	run=$(run_of r A) && test "$(state_of r $run)" = merged &&
	echo $run >run.id &&
	rm r/.system/runs/$run/manifest.json &&
	test_expect_failure_code 1 sluice -C r audit >out 2>&1
'

test_expect_success 'with the repository lock held, it waits and writes nothing' '
	run=$(cat run.id) &&
	{ flock r/.system/lock sh -c ": >held; while [ ! -e release ]; do sleep 0.1; done" & } &&
	holder=$! &&
	test_when_finished "touch release; wait $holder 2>/dev/null" &&
	i=0 && while [ ! -e held ] && [ $i -lt 6000 ]; do sleep 0.1; i=$((i + 1)); done &&
	test -e held &&
	{ "$SLUICE" -C r audit --write-manifest $run >seal.out 2>seal.err & } &&
	sealer=$! &&
	i=0 && while ! grep -q "waiting for it" seal.err && [ $i -lt 6000 ]; do sleep 0.1; i=$((i + 1)); done &&
	test_grep "the repository lock (.*/r/.system/lock) is held by another sluice process" seal.err &&
	test ! -e r/.system/runs/$run/manifest.json &&
	kill -0 $sealer &&
	touch release &&
	wait $holder &&
	wait $sealer &&
	test_grep "^sealed $run\$" seal.out &&
	test -f r/.system/runs/$run/manifest.json &&
	sluice -C r audit >out &&
	test_grep "all hold" out
'

test_expect_success 'a sealed run is not sealed again' '
	run=$(cat run.id) &&
	test_expect_failure_code 1 sluice -C r audit --write-manifest $run 2>err &&
	test_grep "is not merged or has a manifest already; nothing to seal" err
'

test_done
