#!/bin/sh
# Validator conditions in retry rules (docs/config.md "Retry rules"): a
# `validate:` entry runs its command at each retry decision, in the run's
# worktree, with its `with:` inputs (prompt variables) as JSON on stdin and
# in $SLUICE_VALIDATE_INPUT. It holds when the command exits 0 and prints
# `true`; then its overrides (here a prompt) apply to the next attempt. It
# does not hold on `false`, a non-zero exit, other output, a timeout or a
# program that cannot start; each verdict is in the event log and in
# validate/<rule>-attempt<N>.log.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a gate that fails on attempt 1, a validator that decides by work order' '
	sluice_repo repo "$(approve_reviewer_config)" "  token_env: T1040_REVIEWER_TOKEN" &&
	echo "TRASH=\"$TRASH\"" >"$TRASH/assess.sh" &&
	cat >>"$TRASH/assess.sh" <<-\EOS &&
	wo=$SLUICE_WORK_ORDER_ID
	cat >"$TRASH/in-$wo-$SLUICE_ATTEMPT.json"
	cp "$SLUICE_VALIDATE_INPUT" "$TRASH/file-$wo-$SLUICE_ATTEMPT.json"
	env >"$TRASH/env-$wo"
	pwd >"$TRASH/pwd-$wo"
	echo "assessing $wo" >&2
	case $wo in
	yes) if grep -q "gate .test. failed" "$TRASH/in-$wo-$SLUICE_ATTEMPT.json"; then echo " true "; else echo false; fi ;;
	no) echo false ;;
	exit3) echo true; exit 3 ;;
	garbage) echo maybe ;;
	slow) sleep 60; echo true ;;
	esac
	EOS
	for w in yes no exit3 garbage slow; do
		printf "%s\n" "echo \$SLUICE_ATTEMPT >n.txt" \
			"cp \"\$SLUICE_PROMPT_FILE\" \"$TRASH/prompt-$w-\$SLUICE_ATTEMPT\"" >"$BUILDERS/$w.sh" || return 1
	done &&
	cat >>repo/.system/config.yaml <<-EOF &&
	gates:
	  test: [sh, -c, '"'"'echo "n is \$(cat n.txt)"; test "\$(cat n.txt)" -ge 2'"'"']
	retry:
	  - validate: [sh, "$TRASH/assess.sh"]
	    with:
	      diff: "{diff}"
	      error: "{error}"
	      out: "{gate.test.output}"
	      title: "{work_order.title}"
	      n: "{attempt}"
	    timeout: 15s
	    prompt: |
	      VALIDATED: {error}
	  - validate: ["$TRASH/no-such-validator"]
	    builder: [sh, -c, '"'"'echo WRONG >>"$TRASH/wrong"'"'"']
	  - exit: 3
	EOF
	sluice -C repo check &&
	for w in yes no exit3 garbage slow; do wo repo $w || return 1; done &&
	T1040_REVIEWER_TOKEN=secret-t1040 && export T1040_REVIEWER_TOKEN &&
	settle repo
'

test_expect_success 'validator true (exit 0): the prompt override applies to attempt 2' '
	run=$(run_of repo yes) &&
	test "$(state_of repo $run)" = merged &&
	test_grep "VALIDATED: attempt 2: gate .test. failed on attempt 1" prompt-yes-2 &&
	test_grep -v "VALIDATED" prompt-yes-1 &&
	test ! -e wrong &&
	sluice -C repo log $run >log &&
	test_grep "retry rule 1 (validate: assess.sh) held on attempt 1" log &&
	test_grep "retry rule 2 (validate: no-such-validator) did not hold on attempt 1: cannot run" log &&
	test_grep "with prompt from retry rule 1" log
'

test_expect_success 'the inputs: the rendered templates as JSON on stdin and in the file' '
	test_cmp in-yes-1.json file-yes-1.json &&
	python3 - in-yes-1.json <<-\PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert sorted(d) == ["diff", "error", "n", "out", "title"], d
	assert d["title"] == "Work order yes", d
	assert d["n"] == "1", d
	assert "n is 1" in d["out"], d
	assert "gate '"'"'test'"'"' failed on attempt 1" in d["error"], d
	PY
'

test_expect_success 'the validator runs in the worktree with the run environment' '
	run=$(run_of repo yes) &&
	test "$(cat pwd-yes)" = "$(cd repo && pwd -P)/.system/runs/$run/worktree" &&
	test_grep "^SLUICE_RUN_ID=$run\$" env-yes &&
	test_grep "^SLUICE_ATTEMPT=1\$" env-yes &&
	test_grep "^SLUICE_RETRY_RULE=1\$" env-yes &&
	test_grep "^SLUICE_VALIDATE_INPUT=.*/validate/1-attempt1.json\$" env-yes &&
	test_grep -v "secret-t1040" env-yes &&
	test_grep -v "T1040_REVIEWER_TOKEN" env-yes
'

test_expect_success 'the artifact: validate/<rule>-attempt<N>.log with output and verdict' '
	run=$(run_of repo yes) &&
	d=repo/.system/runs/$run/validate &&
	test_grep "assessing yes" $d/1-attempt1.log &&
	test_grep "held\]" $d/1-attempt1.log &&
	test_grep "did not hold: cannot run" $d/2-attempt1.log &&
	test_cmp in-yes-1.json $d/1-attempt1.json
'

check_not_held() { # WO WHY
	run=$(run_of repo $1) &&
	test "$(state_of repo $run)" = merged &&
	test_grep -v "VALIDATED" prompt-$1-2 &&
	sluice -C repo log $run >log-$1 &&
	test_grep "retry rule 1 (validate: assess.sh) did not hold on attempt 1: $2" log-$1 &&
	test_grep "did not hold: $2" repo/.system/runs/$run/validate/1-attempt1.log
}

test_expect_success 'validator prints false: it does not hold' '
	check_not_held no "it printed .false."
'

test_expect_success 'validator prints true but exits 3: it does not hold' '
	check_not_held exit3 "it ended with exit 3 (a .true. counts with exit 0 only)"
'

test_expect_success 'validator prints something else: it does not hold' '
	check_not_held garbage "it printed .maybe., neither true nor false"
'

test_expect_success 'validator past its timeout: killed, it does not hold' '
	check_not_held slow "it timed out after 15[.0]*s and was killed"
'

test_expect_success 'a missing validator is reported, never a crash: every run went on' '
	for w in yes no exit3 garbage slow; do
		run=$(run_of repo $w) &&
		test_grep "did not hold: cannot run .*no-such-validator" repo/.system/runs/$run/validate/2-attempt1.log ||
		return 1
	done &&
	test ! -e wrong
'

test_done
