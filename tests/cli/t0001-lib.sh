#!/bin/sh
# The test library itself: the &&-chain lint fails a test whose chain is
# broken, a loop fails with `|| return 1`, a missing tool skips (exit 77,
# never a pass), a failing body fails, a good one passes, and a known
# breakage (test_expect_failure) is shown without failing the script. Each
# case is a sample script, run with lib.sh in a shell of its own.
. "$(dirname "$0")/lib.sh"

# sample NAME: samples/NAME.sh, one test titled NAME whose body is stdin.
mkdir "$TRASH/samples"
sample() { # NAME
	{
		echo '. "$SLUICE_SOURCE_DIR/tests/cli/lib.sh"'
		echo "test_expect_success '$1' '"
		cat
		echo "'"
		echo "test_done"
	} >"$TRASH/samples/$1.sh"
}

sample pass <<\EOS
	echo one >one && test "$(cat one)" = one &&
	for i in 1 2 3; do test -f one || return 1; done
EOS
sample fail <<\EOS
	true && false
EOS
sample amp <<\EOS
	false && true
	true
EOS
sample semicolon <<\EOS
	false; true
EOS
sample or-true <<\EOS
	false &&
	true || true &&
	true
EOS
sample background <<\EOS
	false &&
	sleep 1 &
	true
EOS
sample heredoc <<\EOS
	cat >f <<-\EOT &&
	text
	EOTX
	true
EOS
sample loop-return <<\EOS
	for i in 1 2 3; do
		test $i != 2 || return 1
	done
EOS
sample loop-exit <<\EOS
	for i in 1 2 3; do
		test $i != 2 || exit 1
	done
EOS
sample tool <<\EOS
	test_skip_unless_tool sh no-such-tool-sluice-t0001 &&
	echo "not skipped" >&2 && false
EOS
sample tool-ok <<\EOS
	test_skip_unless_tool sh git
EOS
sample no-set-e <<\EOS
	f() { false; true; } &&
	f
EOS
sample failure-code <<\EOS
	test_expect_failure_code 3 sh -c "exit 3" &&
	! test_expect_failure_code 3 true
EOS
{
	echo '. "$SLUICE_SOURCE_DIR/tests/cli/lib.sh"'
	echo 'test_skip_unless_tool no-such-tool-sluice-t0001'
	echo "test_expect_success 'never run' 'false'"
	echo 'test_done'
} >"$TRASH/samples/tool-all.sh"
{
	echo '. "$SLUICE_SOURCE_DIR/tests/cli/lib.sh"'
	echo "test_expect_success 'skipped' 'test_skip_unless_tool no-such-tool-sluice-t0001'"
	echo "test_expect_success 'failed' 'false'"
	echo 'test_done'
} >"$TRASH/samples/tool-and-fail.sh"

{
	echo '. "$SLUICE_SOURCE_DIR/tests/cli/lib.sh"'
	echo "test_expect_failure 'known' 'false'"
	echo "test_expect_failure 'vanished' 'true'"
	echo "test_expect_failure 'known, broken chain' 'true; false'"
	echo 'test_done'
} >"$TRASH/samples/known.sh"

# test_when_finished: in a body at the end of that test, whatever its end
# (a pass, a failure, a skip), newest first; outside a body at the script's
# end. Each writes to log (in the sample's trash, printed by the last test).
{
	echo '. "$SLUICE_SOURCE_DIR/tests/cli/lib.sh"'
	echo 'test_when_finished "echo script-end >>\"\$TRASH/log\""'
	echo "test_expect_success 'pass' '"
	echo '	{ sleep 600 & } && pid=$! && echo $pid >"$TRASH/pid" &&'
	echo '	test_when_finished "kill $pid; wait $pid; echo killed >>\"\$TRASH/log\"" &&'
	echo '	test_when_finished "echo first-pass >>\"\$TRASH/log\"" &&'
	echo "	true'"
	echo "test_expect_success 'fail' '"
	echo '	test_when_finished "echo fail >>\"\$TRASH/log\"; false" && false'
	echo "'"
	echo "test_expect_success 'skip' '"
	echo '	test_when_finished "echo skip >>\"\$TRASH/log\"" &&'
	echo "	test_skip_unless_tool no-such-tool-sluice-t0001'"
	echo "test_expect_success 'log' '"
	echo '	{ ! kill -0 $(cat "$TRASH/pid") 2>/dev/null || echo alive >>"$TRASH/log"; } &&'
	echo '	cat "$TRASH/log" >"$SAMPLE_LOG"'
	echo "'"
	echo 'test_done'
} >"$TRASH/samples/finished.sh"

# run NAME: run samples/NAME.sh; its output in NAME.out, its exit status in NAME.rc
run() { # NAME
	SLUICE_TEST_CHAIN_LINT=1 sh "$TRASH/samples/$1.sh" >"$1.out" 2>&1
	echo $? >"$1.rc"
}

test_expect_success 'a good body passes' '
	run pass &&
	test "$(cat pass.rc)" = 0 &&
	test_grep "^ok 1 - pass$" pass.out &&
	test_grep "^1 passed, 0 failed, 0 skipped$" pass.out
'

test_expect_success 'a failing body fails' '
	run fail &&
	test "$(cat fail.rc)" = 1 &&
	test_grep "^not ok 1 - fail (exit 1)$" fail.out
'

test_expect_success 'a broken &&-chain fails and says so, whatever its commands do' '
	for c in amp semicolon or-true background heredoc; do
		run $c &&
		test "$(cat $c.rc)" = 1 &&
		test_grep "^not ok 1 - $c (broken &&-chain in test 1)$" $c.out &&
		test_grep "broken &&-chain in test 1: join its commands with &&" $c.out || return 1
	done
'

test_expect_success 'a loop that fails in the middle fails the test' '
	run loop-return &&
	test "$(cat loop-return.rc)" = 1 &&
	test_grep "^not ok 1 - loop-return (exit 1)$" loop-return.out &&
	run loop-exit &&
	test "$(cat loop-exit.rc)" = 1 &&
	test_grep "^not ok 1 - loop-exit (exit 1)$" loop-exit.out
'

test_expect_success 'a missing tool skips the test: exit 77, never a pass' '
	run tool &&
	test "$(cat tool.rc)" = 77 &&
	test_grep "^ok 1 - tool # skipped: no-such-tool-sluice-t0001 not installed$" tool.out &&
	test_grep -v "not skipped" tool.out &&
	test_grep "^0 passed, 0 failed, 1 skipped$" tool.out &&
	run tool-ok &&
	test "$(cat tool-ok.rc)" = 0
'

test_expect_success 'a missing tool before the tests skips the whole script' '
	run tool-all &&
	test "$(cat tool-all.rc)" = 77 &&
	test_grep "^# skipped: no-such-tool-sluice-t0001 not installed$" tool-all.out &&
	test_grep -v "never run" tool-all.out
'

test_expect_success 'a failure wins over a skip' '
	run tool-and-fail &&
	test "$(cat tool-and-fail.rc)" = 1 &&
	test_grep "^ok 1 - skipped # skipped: no-such-tool-sluice-t0001 not installed$" tool-and-fail.out &&
	test_grep "^not ok 2 - failed (exit 1)$" tool-and-fail.out
'

test_expect_success 'a body runs without set -e, as in git' '
	run no-set-e &&
	test "$(cat no-set-e.rc)" = 0
'

test_expect_success 'a known breakage is shown and does not fail the script; its chain is checked' '
	run known &&
	test "$(cat known.rc)" = 1 &&
	test_grep "^not ok 1 - known # TODO known breakage (exit 1)$" known.out &&
	test_grep "^ok 2 - vanished # TODO known breakage vanished" known.out &&
	test_grep "^not ok 3 - known, broken chain (broken &&-chain in test 3)$" known.out &&
	test_grep "^0 passed, 1 failed, 0 skipped, 2 known breakage$" known.out &&
	sed -i "/broken chain/d" "$TRASH/samples/known.sh" &&
	run known &&
	test "$(cat known.rc)" = 0
'

test_expect_success 'test_when_finished in a body runs as its test ends, whatever the end' '
	SAMPLE_LOG="$TRASH/finished.log" && export SAMPLE_LOG &&
	run finished &&
	test "$(cat finished.rc)" = 1 &&
	test_grep "^ok 1 - pass$" finished.out &&
	test_grep "^not ok 2 - fail (exit 1)$" finished.out &&
	test_grep "^ok 3 - skip # skipped" finished.out &&
	test_grep "^ok 4 - log$" finished.out &&
	printf "%s\n" first-pass killed fail skip >expect &&
	test_cmp expect finished.log
'

test_expect_success 'test_expect_failure_code checks the code' '
	run failure-code &&
	test "$(cat failure-code.rc)" = 0
'

test_expect_success 'wait_until waits for the event, and gives up at its bound saying what it waited for' '
	{ (sleep 2 && : >late) & } &&
	wait_until "test -f late" 600 &&
	test -f late &&
	wait_for "lat*" &&
	test_expect_failure_code 1 wait_until "test -f never" 1 2>err &&
	test_grep "^gave up after 1 s waiting for: test -f never$" err &&
	eval "$(wait_until_sh "test -f late" 600)" &&
	wait_until_sh "test -f never" 7 >loop.sh &&
	test_grep "+ 7))" loop.sh
'

test_done
