#!/bin/sh
# A tick whose worker dies of a signal other than SIGKILL (a builder sends
# SIGABRT, as abort() or a failed assert() would end it, to its worker, the
# sluice advance-run that started it; not SIGSEGV, which AddressSanitizer
# catches and turns into an exit in the sanitizer build) exits 1
# naming the run and the signal, in text and in --json ("killed": the run
# and the signal; schema/tick.schema.json), after its pass; the next tick
# reconciles the run and it lands (issue 25). Before, --json said nothing
# of it: the same object as a tick where nothing went wrong.
. "$(dirname "$0")/lib.sh"

# S sends SIGABRT to its worker (the builder's parent) the first time.
cat >"$BUILDERS/S.sh" <<EOS
if [ ! -e "$TRASH/abrt-\$SLUICE_RUN_ID" ]; then
	: >"$TRASH/abrt-\$SLUICE_RUN_ID"
	tr "\\\\0" " " </proc/\$PPID/cmdline >"$TRASH/abrt-cmdline"
	kill -ABRT \$PPID
	sleep 1
	exit 0
fi
echo s >s.txt
EOS
echo "echo t >t.txt" >"$BUILDERS/T.sh"

test_expect_success 'a worker killed by SIGABRT: exit 1, the run and the signal named' '
	sluice_repo r "$(approve_reviewer_config)" &&
	wo r S &&
	test_expect_failure_code 1 sluice -C r tick >out 2>err &&
	test_grep "advance-run" "$TRASH/abrt-cmdline" &&
	run=$(run_of r S) &&
	test_grep "the worker of run $run was killed by SIGABRT; the next tick reconciles the run" err &&
	test_grep "^tick: 1 started" out &&
	test "$(state_of r $run)" = building
'

test_expect_success 'the next tick reconciles it and it lands' '
	run=$(run_of r S) &&
	sluice -C r tick >out 2>&1 &&
	settle r &&
	test "$(state_of r $run)" = merged &&
	git -C r show main:s.txt >got && test_grep s got
'

test_expect_success 'tick --json: "killed" names the run and the signal; exit 1' '
	test_skip_unless_tool python3 &&
	sluice_repo j "$(approve_reviewer_config)" &&
	wo j S && wo j T &&
	test_expect_failure_code 1 sluice -C j tick --jobs 2 --json >out 2>err &&
	run=$(run_of j S) &&
	test_grep "the worker of run $run was killed by SIGABRT" err &&
	cat >check.py <<-\EOF &&
	import json, sys
	j = json.load(open(sys.argv[1]))
	assert j["killed"] == [{"run": sys.argv[2], "signal": "SIGABRT"}], j
	assert j["merged"] == 1 and j["started"] == 2, j
	EOF
	python3 check.py out "$run"
'

test_expect_success 'a tick without a killed worker: "killed" is empty, exit 0' '
	sluice -C j tick --json >out &&
	test_grep "\"killed\": \[\]" out &&
	test "$(state_of j $(run_of j S))" = merged
'

test_done
