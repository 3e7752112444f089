#!/bin/sh
# A validator's verdict takes effect with its decision or not at all. The
# validator below kills the sluice process that runs it (kill -9 of its
# parent, the run's worker) the first time, after printing true: the
# decision about attempt 1 was never saved, so the run is requeued as
# attempt 2 with the overrides saved before (none), and no event says that
# rule held on attempt 1. At the next decision the validator holds and the
# prompt override applies to attempt 3. The validator left running by the
# dead worker is ended by the next tick (its process group, child.owner).
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a gate failing attempts 1-2, a validator that kills its sluice once' '
	sluice_repo repo "$(approve_reviewer_config)" &&
	echo "TRASH=\"$TRASH\"" >"$TRASH/assess.sh" &&
	cat >>"$TRASH/assess.sh" <<-\EOS &&
	cat >/dev/null
	echo "$SLUICE_ATTEMPT" >>"$TRASH/calls"
	echo true
	if [ "$(wc -l <"$TRASH/calls")" -eq 1 ]; then
		ps -o comm= -p "$PPID" >"$TRASH/parent"
		kill -9 "$PPID"
		echo $$ >"$TRASH/left-pid"
		sleep 600
	fi
	EOS
	printf "%s\n" "echo \$SLUICE_ATTEMPT >n.txt" \
		"cp \"\$SLUICE_PROMPT_FILE\" \"$TRASH/prompt-\$SLUICE_ATTEMPT\"" >"$BUILDERS/A.sh" &&
	cat >>repo/.system/config.yaml <<-EOF &&
	gates:
	  test: [sh, -c, '"'"'test "\$(cat n.txt)" -ge 3'"'"']
	retry:
	  - validate: [sh, "$TRASH/assess.sh"]
	    prompt: "VALIDATED after {attempt}"
	  - exit: 4
	EOF
	sluice -C repo check &&
	wo repo A
'

test_expect_success 'the first tick: the worker is killed while the validator decides' '
	test_might_fail_tick() { sluice -C repo tick >tick1.out 2>&1 || :; } &&
	test_might_fail_tick &&
	test "$(cat parent)" = sluice &&
	test "$(cat calls)" = 1 &&
	run=$(run_of repo A) &&
	sluice -C repo log $run >log1 &&
	test_grep -v "held on attempt" log1
'

test_expect_success 'the run goes on: attempt 2 without the override, attempt 3 with it' '
	settle repo &&
	run=$(run_of repo A) &&
	test "$(state_of repo $run)" = merged &&
	test_grep -v VALIDATED prompt-2 &&
	test_grep "VALIDATED after 3" prompt-3 &&
	printf "%s\n" 1 2 >expect && test_cmp expect calls &&
	sluice -C repo log $run >log &&
	test_grep -v "held on attempt 1" log &&
	test_grep "retry rule 1 (validate: assess.sh) held on attempt 2" log &&
	test_grep "interrupted" log
'

test_expect_success 'the validator the dead worker left was ended' '
	pid=$(cat left-pid) &&
	# gone, or a zombie nobody reaped yet (its parent, the worker, is dead)
	st=$(ps -o stat= -p "$pid" || :) &&
	case $st in "" | Z*) : ;; *) echo "validator $pid still runs: $st"; false ;; esac &&
	test_grep "ended the builder or gate left running by run" settle.out
'

test_done
