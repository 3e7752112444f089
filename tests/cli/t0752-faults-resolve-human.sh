#!/bin/sh
# Named fault points (src/core/fault.h) of the resolution and of the human
# commands: the process is killed at the point, then what a person or cron
# does next (the command again, ticks) reaches the same end as without the
# kill; each work order lands once or ends failed, the user's uncommitted
# edit stays byte for byte, `sluice audit` holds, nothing is left behind.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool setsid

# C1 and C2 change the same line of the same base: built and approved by a
# person first, then the second to merge conflicts.
printf '%s\n' 'sed -i 5s/.*/five-by-C1/ lines.txt' >"$BUILDERS/C1.sh"
printf '%s\n' 'sed -i 5s/.*/five-by-C2/ lines.txt' >"$BUILDERS/C2.sh"
conflict_repo() { # CONFIG-LINES...: r with C1 and C2 approved on one base
	rm -rf r && fault_repo r "$@" &&
	wo r C1 && wo r C2 &&
	sluice -C r tick >/dev/null &&
	for w in C1 C2; do
		sluice -C r approve "$(run_of r $w)" >/dev/null || return 1
	done &&
	approve_reviewer_config >>r/.system/config.yaml
}

test_expect_success 'the starting repository, built once (lib.sh, repo_template): C1 and C2 approved' '
	conflict_repo && repo_template r conflict
'

for p in resolve.after_markers resolve.after_resolver resolve.after_commit; do
	for g in 0 1; do # the worker alone, then the tick with all its workers
		test_expect_success "killed at $p (group $g): the resolution is made again and lands once" "
			repo_copy conflict r &&
			FAULT_GROUP=$g fault_fire $p tick.out -C r tick &&
			{ [ $g = 0 ] || [ \"\$FAULT_RC\" = 137 ]; } &&
			settle r &&
			fault_check r 'C1 C2' '' &&
			git -C r show main:lines.txt >got &&
			grep -qx five-by-C1 got && grep -qx five-by-C2 got &&
			test \$(grep -c five got) = 2 &&
			git -C r log --first-parent --format=%B main | grep -q '^Resolved-with: '
		"
	done
done

for p in abandon.after_save abandon.after_remove; do
	test_expect_success "killed at $p: abandoning again ends the run abandoned" "
		rm -rf r && fault_repo r &&
		printf '%s\n' 'echo x >x.txt' >\"\$BUILDERS/X.sh\" &&
		wo r X &&
		sluice -C r tick >/dev/null &&
		run=\$(run_of r X) &&
		test \"\$(state_of r \$run)\" = awaiting_review &&
		fault_fire $p out -C r abandon \$run --delete-branch &&
		test \$FAULT_RC = 137 &&
		sluice -C r abandon \$run --delete-branch &&
		test \"\$(state_of r \$run)\" = abandoned &&
		settle r &&
		fault_check r '' X &&
		grep -q '^+x\$' r/.system/runs/\$run/diff.patch
	"
done

test_expect_success 'killed at retry.after_save: retrying again builds and lands the work order' '
	rm -rf r && fault_repo r "$(approve_reviewer_config)" &&
	printf "%s\n" "echo f >f.txt" "test -f \"$TRASH/f-ok\"" >"$BUILDERS/F.sh" &&
	wo r F &&
	sluice -C r tick >/dev/null &&
	run=$(run_of r F) &&
	test "$(state_of r $run)" = failed &&
	touch "$TRASH/f-ok" &&
	fault_fire retry.after_save out -C r retry $run &&
	test $FAULT_RC = 137 &&
	sluice -C r retry $run >/dev/null &&
	settle r &&
	fault_check r F "" &&
	test "$(git -C r show main:f.txt)" = f
'

test_expect_success 'killed at retry.after_resolution: retrying again lands the resolution' '
	conflict_repo "merge:" "  resolver: none" &&
	sluice -C r tick >/dev/null &&
	run=$(sluice -C r runs --state merge_conflict | cut -d" " -f1) &&
	test -n "$run" &&
	wt=r/.system/runs/$run/worktree &&
	{ git -C $wt merge -q main >/dev/null 2>&1 || true; } &&
	printf "%s\n" 1 2 3 4 five-by-a-person 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 >$wt/lines.txt &&
	git -C $wt add lines.txt &&
	fault_fire retry.after_resolution out -C r retry $run &&
	test $FAULT_RC = 137 &&
	sluice -C r retry $run >/dev/null &&
	settle r &&
	fault_check r "C1 C2" "" &&
	git -C r show main:lines.txt | grep -qx five-by-a-person
'

test_done
