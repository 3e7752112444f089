#!/bin/sh
# The conflict hand-off (issue 26): a merge_conflict run's worktree is left
# so that the steps `sluice show` prints work exactly as printed (followed
# here literally, as a script), the run's gates run on a person's
# resolution before review, and a resolution that still holds conflict
# markers is refused by `retry` with the file and the line.
. "$(dirname "$0")/lib.sh"

# repo DIR whose C1 and C2 change line 5 of lines.txt on one base: one lands,
# the other conflicts; its resolver writes an unrelated file and leaves the
# markers (so the builder's resolution is refused), then a person decides.
# The gate `nomark` fails while lines.txt holds "five by nobody".
handoff_repo() { # DIR
	sluice_repo "$1" "queue:" "  jobs: 2" "merge:" "  resolve_attempts: 1" \
		"gates:" "  nomark: [sh, -c, '! grep -q \"five by nobody\" lines.txt']" &&
	seq 1 10 >"$1/lines.txt" && git -C "$1" add lines.txt && git -C "$1" commit -q -m lines &&
	cat >>"$1/.system/config.yaml" <<-EOF &&
	builder:
	  command: [sh, -c, 'if [ "\$SLUICE_MODE" = resolve ]; then echo half >half.txt; exit 0; fi; exec sh "$BUILDERS/\$SLUICE_WORK_ORDER_ID.sh"']
	EOF
	approve_reviewer_config >>"$1/.system/config.yaml" &&
	sluice -C "$1" check >/dev/null &&
	wo "$1" C1 && wo "$1" C2 &&
	settle "$1" &&
	r1=$(run_of "$1" C1) && r2=$(run_of "$1" C2) &&
	if test "$(state_of "$1" $r1)" = merged; then echo $r2; else echo $r1; fi >"$1.run" &&
	test "$(state_of "$1" "$(cat "$1.run")")" = merge_conflict
}

# The commands of the "next:" line of `sluice show`: step N (1: the cd and
# merge, 2: the commit, 3: the retry), as printed.
next_step() { # SHOW-OUTPUT N
	sed -n 's/^next: //p' "$1" | tr ';' '\n' | sed -e 's/^ *//' -e 's/^then: //' -e 's/, or .*//' |
		grep -E '^(cd |git |sluice )' | sed -n "${2}p"
}

unmark() { # FILE: keep both sides
	sed -i -e "/^<<<<<<< /d" -e "/^=======\$/d" -e "/^>>>>>>> /d" "$1"
}

test_expect_success 'setup: the builder could not resolve it; a person must decide' '
	meeting_builders C1 C2 "sed -i \"5s/.*/five by %s/\" lines.txt" &&
	handoff_repo a &&
	run=$(cat a.run) &&
	sluice -C a show $run >show &&
	test_grep "^next: cd .* && git merge main" show
'

test_expect_success 'the steps of sluice show, followed as printed, land the run' '
	run=$(cat a.run) &&
	mkdir -p bin && ln -sf "$SLUICE" bin/sluice &&
	sluice -C a show $run >show &&
	step1=$(next_step show 1) && step2=$(next_step show 2) && step3=$(next_step show 3) &&
	test -n "$step1" && test -n "$step2" && test "$step3" = "sluice retry $run" &&
	(
		cd a &&
		{ sh -c "$step1" >merge.out 2>&1; test $? = 1; } &&
		test_grep "CONFLICT (content): Merge conflict in lines.txt" merge.out &&
		wt=.system/runs/$run/worktree &&
		test_grep "^<<<<<<< " $wt/lines.txt &&
		! test -e $wt/half.txt &&
		unmark $wt/lines.txt &&
		sh -c "cd $wt && $step2" &&
		PATH="$TRASH/bin:$PATH" sh -c "$step3"
	) &&
	test "$(state_of a $run)" = resolving &&
	settle a &&
	test "$(state_of a $run)" = merged &&
	git -C a show main:lines.txt >lines &&
	test_grep "^five by C1$" lines && test_grep "^five by C2$" lines &&
	sluice -C a audit >/dev/null
'

test_expect_success 'a person who commits the markers: retry refuses, naming the file and the line' '
	handoff_repo b &&
	run=$(cat b.run) && wt=b/.system/runs/$run/worktree &&
	test_expect_failure_code 1 sluice -C b retry $run 2>err &&
	test_grep "has not merged .main." err &&
	test "$(state_of b $run)" = merge_conflict &&
	{ git -C $wt merge -q main >/dev/null 2>&1 || :; } &&
	git -C $wt commit -q -a --no-edit &&
	test_expect_failure_code 1 sluice -C b retry $run 2>err &&
	test_grep "lines.txt. still has a conflict marker at line 5" err &&
	test "$(state_of b $run)" = merge_conflict
'

test_expect_success 'a person who leaves the markers uncommitted: refused the same way' '
	run=$(cat b.run) && wt=b/.system/runs/$run/worktree &&
	git -C $wt reset -q --hard HEAD^ &&
	{ git -C $wt merge -q main >/dev/null 2>&1 || :; } &&
	test_expect_failure_code 1 sluice -C b retry $run 2>err &&
	test_grep "lines.txt. still has a conflict marker at line 5" err &&
	test "$(state_of b $run)" = merge_conflict
'

test_expect_success 'a person resolution that fails the gates: back to the person, who is named' '
	run=$(cat b.run) && wt=b/.system/runs/$run/worktree &&
	git -C $wt merge --abort &&
	{ git -C $wt merge -q main >/dev/null 2>&1 || :; } &&
	sed -i -e "/^<<<<<<< /d" -e "/^=======\$/d" -e "s/^>>>>>>> .*/five by nobody/" $wt/lines.txt &&
	sed -i "/^five by C[12]\$/d" $wt/lines.txt &&
	git -C $wt commit -q -a --no-edit &&
	sluice -C b retry $run &&
	test "$(state_of b $run)" = resolving &&
	settle b &&
	test "$(state_of b $run)" = merge_conflict &&
	sluice -C b status --json $run >st &&
	test_grep "a person resolved" st &&
	test_grep -v "the builder could not" st &&
	sluice -C b show $run >show &&
	test_grep "^next: cd .* && git merge main" show &&
	test -z "$(git -C $wt status --porcelain)" &&
	! test -e "$(git -C $wt rev-parse --git-dir)/MERGE_HEAD"
'

test_done
