#!/bin/sh
# Worktree modes: `worktree: none` runs the builder in an empty folder of
# the run's with only the prompt and the work order (no worktree, no
# branch); worktree.mode is the default a work order overrides; bad values
# are errors naming the file, line and the three values; a report run
# approved by a person is reported and never merged, even by a tick.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup' '
	sluice_repo repo "$(approve_reviewer_config)" &&
	git -C repo rev-parse main >main.before
'

test_expect_success 'a bad worktree value in a work order: the file, the line, the three values' '
	wo repo BAD "priority: 2" "worktree: sideways" &&
	test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
	test_grep "work_orders/BAD.md:5:" out &&
	test_grep "unknown worktree .sideways.; use read-write, read-only or none" out &&
	wo repo BAD2 "worktree: [read-only]" &&
	test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
	test_grep "work_orders/BAD2.md:4:.*unknown worktree" out &&
	rm repo/work_orders/BAD.md repo/work_orders/BAD2.md
'

test_expect_success 'a bad worktree.mode in the config: the line and the three values' '
	cp repo/.system/config.yaml config.good &&
	printf "%s\n" "worktree:" "  mode: readonly" >>repo/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
	test_grep "config.yaml:[0-9]*:.*unknown worktree.mode .readonly.; use read-write, read-only or none" out &&
	cp config.good repo/.system/config.yaml
'

test_expect_success 'none: the builder works in an empty folder holding the prompt and the work order' '
	cat >"$BUILDERS/N1.sh" <<-\EOF &&
	pwd -P >"$SLUICE_RUN_DIR/cwd-$SLUICE_ATTEMPT.txt"
	ls -A >"$SLUICE_RUN_DIR/ls-$SLUICE_ATTEMPT.txt"
	echo "$SLUICE_WORKTREE" >"$SLUICE_RUN_DIR/env-$SLUICE_ATTEMPT.txt"
	echo "$SLUICE_WORKTREE_MODE" >>"$SLUICE_RUN_DIR/env-$SLUICE_ATTEMPT.txt"
	cat work_order.md >"$SLUICE_RUN_DIR/seen-wo.txt"
	cmp prompt.md "$SLUICE_PROMPT_FILE" && echo same >"$SLUICE_RUN_DIR/prompt-same.txt"
	git rev-parse --git-dir >"$SLUICE_RUN_DIR/git.txt" 2>&1 || echo "no repository" >>"$SLUICE_RUN_DIR/git.txt"
	echo "leftover" >made-by-builder.txt
	echo "The codebase has a README." >"$SLUICE_SUMMARY_FILE"
	EOF
	wo repo N1 "worktree: none" &&
	sluice -C repo tick &&
	run=$(run_of repo N1) &&
	test "$(state_of repo $run)" = reported &&
	d=repo/.system/runs/$run &&
	test "$(cat $d/cwd-1.txt)" = "$(cd $d && pwd -P)/scratch" &&
	printf "%s\n" prompt.md work_order.md >ls.expect &&
	test_cmp ls.expect $d/ls-1.txt &&
	test "$(sed -n 1p $d/env-1.txt)" = "$(cd $d && pwd -P)/scratch" &&
	test "$(sed -n 2p $d/env-1.txt)" = none &&
	test_grep "Do the work of N1" $d/seen-wo.txt &&
	test -f $d/prompt-same.txt &&
	test_grep "no repository" $d/git.txt &&
	test_grep "The codebase has a README." $d/report.md &&
	test_grep "Verdict: approve" $d/report.md &&
	! test -e $d/worktree &&
	! git -C repo rev-parse --verify -q "refs/heads/run/N1-${run##*-}" &&
	! git -C repo worktree list | grep -q "$run" &&
	test "$(git -C repo rev-parse main)" = "$(cat main.before)"
'

test_expect_success 'none: each attempt gets a fresh empty folder' '
	cat >"$BUILDERS/N2.sh" <<-\EOF &&
	ls -A >"$SLUICE_RUN_DIR/ls-$SLUICE_ATTEMPT.txt"
	echo "left by attempt $SLUICE_ATTEMPT" >left.txt
	[ "$SLUICE_ATTEMPT" = 2 ] || exit 3
	echo "second time" >"$SLUICE_SUMMARY_FILE"
	EOF
	cp repo/.system/config.yaml config.good &&
	printf "%s\n" "retry:" "  - not: gate.builder" "  - exit: 2" >>repo/.system/config.yaml &&
	wo repo N2 "worktree: none" &&
	sluice -C repo tick &&
	run=$(run_of repo N2) &&
	test "$(state_of repo $run)" = reported &&
	printf "%s\n" prompt.md work_order.md >ls.expect &&
	test_cmp ls.expect repo/.system/runs/$run/ls-2.txt &&
	cp config.good repo/.system/config.yaml
'

test_expect_success 'worktree.mode is the default; a work order overrides it' '
	cp repo/.system/config.yaml config.good &&
	printf "%s\n" "worktree:" "  mode: read-only" >>repo/.system/config.yaml &&
	sluice -C repo check &&
	cat >"$BUILDERS/D1.sh" <<-\EOF &&
	echo "$SLUICE_WORKTREE_MODE" >"$SLUICE_SUMMARY_FILE"
	EOF
	cat >"$BUILDERS/D2.sh" <<-\EOF &&
	echo d2 >d2.txt
	EOF
	wo repo D1 &&
	wo repo D2 "worktree: read-write" &&
	sluice -C repo tick &&
	test "$(state_of repo $(run_of repo D1))" = reported &&
	test_grep "^read-only" repo/.system/runs/$(run_of repo D1)/report.md &&
	test "$(state_of repo $(run_of repo D2))" = merged &&
	git -C repo show main:d2.txt &&
	cp config.good repo/.system/config.yaml &&
	git -C repo rev-parse main >main.before
'

test_expect_success 'a report run approved by a person is reported; no tick merges it' '
	cp repo/.system/config.yaml config.good &&
	sed -i "/^reviewer:/,\$d" repo/.system/config.yaml &&
	printf "%s\n" "reviewer:" "  mode: manual" >>repo/.system/config.yaml &&
	cat >"$BUILDERS/M1.sh" <<-\EOF &&
	echo "manual report" >"$SLUICE_SUMMARY_FILE"
	EOF
	wo repo M1 "worktree: read-only" &&
	sluice -C repo tick &&
	run=$(run_of repo M1) &&
	test "$(state_of repo $run)" = awaiting_review &&
	test_grep "\"kind\": *\"report\"" repo/.system/runs/$run/review-request.json &&
	sluice -C repo approve $run >said &&
	test "$(state_of repo $run)" = reported &&
	test_grep "now reported; nothing is merged" said && test_grep -v "merges it" said &&
	test_grep "manual report" repo/.system/runs/$run/report.md &&
	sluice -C repo tick &&
	sluice -C repo tick &&
	test "$(state_of repo $run)" = reported &&
	test "$(git -C repo rev-parse main)" = "$(cat main.before)" &&
	test_expect_failure_code 1 sluice -C repo approve $run &&
	cp config.good repo/.system/config.yaml
'

test_expect_success 'status --json and runs --state know reported' '
	sluice -C repo runs --state reported >r &&
	test_grep "N1" r && test_grep "M1" r &&
	sluice -C repo status --json "$(run_of repo N1)" >s.json &&
	test_grep "\"state\": \"reported\"" s.json
'

test_expect_success 'none: a retry rule s validator runs in the scratch folder (there is no worktree)' '
	sluice_repo vrepo &&
	printf "%s\n" "pwd -P >\"\$SLUICE_RUN_DIR/vcwd-\$SLUICE_ATTEMPT.txt\"" "echo true" >"$TRASH/validator.sh" &&
	cat >>vrepo/.system/config.yaml <<-EOF &&
	retry:
	  - validate: [sh, "$TRASH/validator.sh"]
	    prompt: "the validator held: {error}"
	  - exit: 2
	EOF
	printf "%s\n" "echo report >\"\$SLUICE_SUMMARY_FILE\"" "exit 1" >"$BUILDERS/V1.sh" &&
	wo vrepo V1 "worktree: none" &&
	sluice -C vrepo tick >/dev/null &&
	run=$(run_of vrepo V1) &&
	test "$(cat vrepo/.system/runs/$run/vcwd-1.txt)" = "$TRASH/vrepo/.system/runs/$run/scratch" &&
	sluice -C vrepo log $run >log &&
	test_grep "retry rule 1 (validate: validator.sh) held on attempt 1" log &&
	test_grep "the validator held" vrepo/.system/runs/$run/attempts/2/prompt.md
'

test_done
