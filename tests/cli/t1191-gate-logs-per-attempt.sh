#!/bin/sh
# Each attempt's gate output is kept: attempts/<n>/gates/<name>.log beside
# attempts/<n>/gates.json (whose "log" names it), sealed by the manifest and
# checked by `sluice audit`; gates/<name>.log stays the last attempt's. It
# used to be overwritten, so "keeps every artifact" failed for gate output.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a gate that fails on attempt 1 and passes on 2' '
	echo "echo \$SLUICE_ATTEMPT >n.txt" >"$BUILDERS/W1.sh" &&
	sluice_repo repo "$(approve_reviewer_config)" "gates:" \
		"  check: [sh, -c, '\''echo \"gate output of attempt \$(cat n.txt)\"; test \"\$(cat n.txt)\" -ge 2'\'']" \
		"retry:" "  - not: gate.check" "  - exit: 3" &&
	wo repo W1 &&
	settle repo &&
	r=$(run_of repo W1) &&
	test "$(state_of repo $r)" = merged &&
	echo $r >run
'

test_expect_success 'each attempt keeps its own gate log' '
	d=repo/.system/runs/$(cat run) &&
	test_grep "gate output of attempt 1" $d/attempts/1/gates/check.log &&
	test_grep "gate output of attempt 2" $d/attempts/2/gates/check.log &&
	test_grep "gate output of attempt 2" $d/gates/check.log &&
	test_grep "\"log\": \"attempts/1/gates/check.log\"" $d/attempts/1/gates.json &&
	test_grep "\"log\": \"attempts/2/gates/check.log\"" $d/attempts/2/gates.json &&
	test_grep "\"log\": \"gates/check.log\"" $d/gates.json
'

test_expect_success 'show names each attempt'\''s log' '
	sluice -C repo show $(cat run) >show.out &&
	test_grep "gate check: failed (attempts/1/gates/check.log)" show.out &&
	test_grep "gate check: passed (attempts/2/gates/check.log)" show.out
'

test_expect_success 'the manifest seals them and the audit checks them' '
	d=repo/.system/runs/$(cat run) &&
	test_grep "attempts/1/gates/check.log" $d/manifest.json &&
	sluice -C repo audit &&
	echo forged >>$d/attempts/1/gates/check.log &&
	test_expect_failure_code 1 sluice -C repo audit >audit.out 2>&1 &&
	test_grep "attempts/1/gates/check.log" audit.out
'

test_done
