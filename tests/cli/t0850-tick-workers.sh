#!/bin/sh
# The tick's workers (sluice advance-run, started through core/proc.h): the
# internal command answers --help; a worker that cannot be started fails
# the tick only after the workers already running ended (none outlives the
# tick), and the next tick carries on; a worker killed by a signal fails
# the tick with the run named, and the next tick reconciles the run.
. "$(dirname "$0")/lib.sh"

command -v pgrep >/dev/null || test_skip_all "pgrep missing"

# No worker of the repository DIR alive (a zombie would not be reaped).
no_workers() { # DIR
	if pgrep -f -- "-C $TRASH/$1 advance-run" >workers; then
		echo "workers still running:" >&2
		ps -o pid,stat,args -p "$(paste -sd, workers)" >&2
		return 1
	fi
}

test_expect_success 'advance-run is an internal command: not listed, but it answers --help' '
	sluice --help >help &&
	test_grep -v advance-run help &&
	sluice advance-run --help >out &&
	test_grep "^usage: sluice \[-C DIR\] advance-run RUN \[--stage=build|train\] \[--token-fd=N\]" out &&
	test_grep "worker process of .sluice tick" out &&
	test_expect_failure_code 2 sluice advance-run &&
	test_expect_failure_code 2 sluice advance-run RUN --token-fd=1
'

for w in A B C; do
	printf '%s\n' "sleep 2" "echo $w >$w.txt" >"$BUILDERS/$w.sh"
done

test_expect_success 'the second worker cannot start (tick.spawn:2): the first is waited for' '
	sluice_repo r "$(approve_reviewer_config)" &&
	wo r A && wo r B && wo r C &&
	fault_fire tick.spawn:2 tick.out -C r tick --jobs 2 &&
	test "$FAULT_RC" = 1 &&
	no_workers r &&
	sluice -C r runs >runs &&
	test "$(grep -c " merged " runs)" = 1 &&
	test "$(grep -c " queued " runs)" = 1 &&
	test "$(wc -l <runs)" = 2 &&
	queued=$(awk "\$3 == \"queued\" { print \$1 }" runs) &&
	test_grep "cannot start the worker of run $queued: .*the next tick tries again" tick.out &&
	settle r &&
	no_workers r &&
	sluice -C r runs >runs &&
	test "$(grep -c " merged " runs)" = 3 &&
	test "$(git -C r log --first-parent --merges --oneline main | wc -l)" = 3
'

# K kills its worker (the builder'"'"'s parent) with SIGKILL the first time.
cat >"$BUILDERS/K.sh" <<EOS
if [ ! -e "$TRASH/killed-once" ]; then
	: >"$TRASH/killed-once"
	tr "\\\\0" " " </proc/\$PPID/cmdline >"$TRASH/killed-cmdline"
	kill -KILL \$PPID
	sleep 1
	exit 0
fi
echo k >k.txt
EOS

test_expect_success 'a worker killed by SIGKILL fails the tick, naming the run; the next tick reconciles it' '
	sluice_repo k "$(approve_reviewer_config)" &&
	wo k K &&
	test_expect_failure_code 1 sluice -C k tick >tick.out 2>&1 &&
	test_grep "advance-run" "$TRASH/killed-cmdline" &&
	run=$(run_of k K) &&
	test_grep "the worker of run $run was killed by SIGKILL; the next tick reconciles the run" tick.out &&
	test "$(state_of k $run)" = building &&
	no_workers k &&
	sluice -C k tick >tick2.out 2>&1 &&
	test_grep "interrupted" tick2.out &&
	settle k &&
	test "$(state_of k $run)" = merged &&
	git -C k show main:k.txt >got && test_grep k got
'

test_done
