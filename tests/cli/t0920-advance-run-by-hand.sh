#!/bin/sh
# sluice advance-run run by hand with hostile RUN arguments: a name that is
# no run is refused without a folder made under .system/runs/, and a prefix
# of a run that a tick's worker is building takes that run's own lock (the
# by-hand worker leaves it alone) instead of a lock named by the prefix
# beside which it built the same run a second time. A reviewer token too
# long for the pipe to a worker is named by its variable; --token-fd takes a
# pipe only (a terminal would wait for a person).
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup' '
	sluice_repo r "$(approve_reviewer_config)"
'

test_expect_success 'no run, an unknown one, option-like and path-like names: refused, nothing made' '
	long=$(printf "%0300d" 0) &&
	for id in nope -c --token-fd=3 -C ../x a/b . .. "$long" "%s%n"; do
		test_expect_failure_code 1 sluice -C r advance-run "$id" 2>err &&
		test_grep "no run" err || return 1
	done &&
	test_expect_failure_code 1 sluice -C r advance-run "" 2>err &&
	test_grep "no run given" err &&
	find r/.system/runs -mindepth 1 >made &&
	test_cmp /dev/null made
'

# S waits (at most 300 s and more, a guard against a hang) for the file "go" before it writes its file; each start is counted.
cat >"$BUILDERS/S.sh" <<EOS
echo started >>"$TRASH/S.starts"
i=0
while [ ! -e "$TRASH/go" ] && [ \$i -lt 3000 ]; do sleep 0.1; i=\$((i + 1)); done
echo s >s.txt
EOS

test_expect_success 'a prefix of a run a tick is building: busy (exit 0), not built twice' '
	wo r S &&
	{ sluice -C r tick >tick.out 2>&1 & } && tick=$! &&
	i=0 &&
	while [ ! -s S.starts ] && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done &&
	run=$(run_of r S) &&
	prefix=$(printf "%s" "$run" | cut -c1-17) &&
	test "$prefix" != "$run" &&
	sluice -C r advance-run "$prefix" >hand.out 2>&1 &&
	sluice -C r advance-run "$run" >>hand.out 2>&1 &&
	: >go &&
	wait $tick &&
	test "$(wc -l <S.starts)" = 1 &&
	test "$(state_of r $run)" = merged &&
	test ! -e "r/.system/runs/$prefix" &&
	sluice -C r status "$run" >status &&
	test_grep -v "worktree.s .git file" status
'

test_expect_success '--token-fd: a file, a device, a closed fd are refused; a pipe is read' '
	run=$(run_of r S) &&
	echo "T=x" >tokfile &&
	test_expect_failure_code 1 sluice -C r advance-run "$run" --token-fd=7 7<tokfile 2>err &&
	test_grep "fd 7 is not a pipe" err &&
	test_expect_failure_code 1 sluice -C r advance-run "$run" --token-fd=7 7</dev/null 2>err &&
	test_grep "fd 7 is not a pipe" err &&
	test_expect_failure_code 1 sluice -C r advance-run "$run" --token-fd=9 2>err &&
	test_grep "fd 9: Bad file descriptor" err &&
	echo "T=x" | sluice -C r advance-run "$run" --token-fd=7 7<&0
'

test_expect_success 'a reviewer token too long to hand to a worker: the tick names the variable' '
	sluice_repo t "$(approve_reviewer_config)" "  token_env: LONG_TOKEN" &&
	echo "echo t >t.txt" >"$BUILDERS/T.sh" &&
	wo t T &&
	tok=$(printf "%070000d" 7) &&
	LONG_TOKEN=$tok test_expect_failure_code 1 sluice -C t tick >out 2>&1 &&
	test_grep "the reviewer token in .LONG_TOKEN. (reviewer.token_env) is 70000 bytes, too long" out &&
	test_grep -v "0000000000000000000007" out &&
	test "$(state_of t "$(run_of t T)")" = queued
'

test_done
