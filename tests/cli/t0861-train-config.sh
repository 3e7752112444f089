#!/bin/sh
# The merge train's configuration (docs/config.md): merge.gates names gates
# (sluice check says which name is wrong, with its line), merge.train_depth
# is 1 to 256, and merge.gates: [] runs no gate on the merge: the train then
# only serializes the landings, still as the tested (built) commit.
. "$(dirname "$0")/lib.sh"

echo 'echo one >one.txt' >"$BUILDERS/ONE.sh"

test_expect_success 'merge.gates naming no gate is refused by check, with the name and line' '
	sluice_repo r "gates:" "  test: [\"true\"]" "merge:" "  gates: [test, lint]" &&
	test_expect_failure_code 1 sluice -C r check >out 2>&1 &&
	test_grep "merge.gates names .lint., which is no configured gate" out &&
	test_grep "config.yaml:[0-9]*:[0-9]*:" out &&
	test_grep -v "names .test." out
'

test_expect_success 'merge.gates must be a list, merge.train_depth 1 to 256' '
	sluice_repo r2 "merge:" "  gates: test" &&
	test_expect_failure_code 1 sluice -C r2 check >out 2>&1 &&
	test_grep "merge.gates. must be a list" out &&
	sluice_repo r3 "merge:" "  train_depth: 0" &&
	test_expect_failure_code 1 sluice -C r3 check >out 2>&1 &&
	test_grep "merge.train_depth" out &&
	sluice_repo r4 "merge:" "  train_depth: 257" &&
	test_expect_failure_code 1 sluice -C r4 check >out 2>&1 &&
	test_grep "merge.train_depth" out &&
	sluice_repo r5 "gates:" "  test: [\"true\"]" "merge:" "  gates: [test]" "  train_depth: 3" &&
	sluice -C r5 check >out 2>&1
'

test_expect_success 'merge.gates: [] lands through the train with no gate run on the merge' '
	sluice_repo r6 "gates:" "  test: [sh, -c, \"echo \$SLUICE_RUN_DIR >>$TRASH/runs6\"]" \
		"merge:" "  gates: []" "$(approve_reviewer_config)" &&
	wo r6 ONE && sluice -C r6 tick >/dev/null &&
	run=$(run_of r6 ONE) &&
	test "$(state_of r6 $run)" = merged &&
	test "$(wc -l <runs6)" = 1 &&
	test "$(jq -r ".gates | length" r6/.system/runs/$run/train.json)" = 0 &&
	test "$(jq -r .green r6/.system/runs/$run/train.json)" = true &&
	test "$(jq -r .commit r6/.system/runs/$run/train.json)" = "$(git -C r6 rev-parse main)" &&
	sluice -C r6 audit
'

test_expect_success 'by default every gate runs on the merge as well' '
	sluice_repo r7 "gates:" "  test: [sh, -c, \"echo \$SLUICE_RUN_DIR >>$TRASH/runs7\"]" \
		"$(approve_reviewer_config)" &&
	wo r7 ONE && sluice -C r7 tick >/dev/null &&
	run=$(run_of r7 ONE) &&
	test "$(state_of r7 $run)" = merged &&
	test "$(wc -l <runs7)" = 2 &&
	test "$(sed -n 1p runs7)" = "$TRASH/r7/.system/runs/$run" &&
	test "$(sed -n 2p runs7)" = "$TRASH/r7/.system/runs/$run/train" &&
	test "$(jq -r ".gates[0].name" r7/.system/runs/$run/train.json)" = test &&
	test -f r7/.system/runs/$run/train/gates/test.log &&
	test -z "$(git -C r7 for-each-ref refs/sluice/train)"
'

test_expect_success 'a run whose worktree a person removed after the approval: made again for the merge gates' '
	sluice_repo r8 "gates:" "  test: [sh, -c, \"test -f one.txt && test -f set-up\"]" \
		"worktree:" "  setup: [touch, set-up]" &&
	wo r8 ONE && sluice -C r8 tick >/dev/null &&
	run=$(run_of r8 ONE) &&
	test "$(state_of r8 $run)" = awaiting_review &&
	sluice -C r8 approve $run >/dev/null &&
	git -C r8 worktree remove --force .system/runs/$run/worktree &&
	sluice -C r8 tick >out 2>&1 &&
	test "$(state_of r8 $run)" = merged &&
	test "$(jq -r .green r8/.system/runs/$run/train.json)" = true &&
	sluice -C r8 audit
'

test_done
