#!/bin/sh
# The conflict hand-off's printed steps work as printed when the repository's
# path holds a space or a quote: the worktree in `cd ...` is quoted for the
# shell (issue 26; before, `cd /a b/.system/...` split at the space).
. "$(dirname "$0")/lib.sh"

next_step() { # SHOW-OUTPUT N
	sed -n 's/^next: //p' "$1" | tr ';' '\n' | sed -e 's/^ *//' -e 's/^then: //' -e 's/, or .*//' |
		grep -E '^(cd |git |sluice )' | sed -n "${2}p"
}

test_expect_success "a conflict left for a person in a repository named \"it's a repo\"" '
	meeting_builders C1 C2 "sed -i \"5s/.*/five by %s/\" lines.txt" &&
	d="it'"'"'s a repo" &&
	sluice_repo "$d" "queue:" "  jobs: 2" "merge:" "  resolve_attempts: 1" &&
	seq 1 10 >"$d/lines.txt" && git -C "$d" add lines.txt && git -C "$d" commit -q -m lines &&
	cat >>"$d/.system/config.yaml" <<-EOF &&
	builder:
	  command: [sh, -c, '"'"'if [ "\$SLUICE_MODE" = resolve ]; then exit 0; fi; exec sh "$BUILDERS/\$SLUICE_WORK_ORDER_ID.sh"'"'"']
	EOF
	approve_reviewer_config >>"$d/.system/config.yaml" &&
	wo "$d" C1 && wo "$d" C2 &&
	settle "$d" &&
	run=$(sluice -C "$d" runs --state merge_conflict | awk "NR == 1 { print \$1 }") &&
	test -n "$run" &&
	echo "$run" >run
'

test_expect_success 'the steps of sluice show, run by sh as printed, land the run' '
	d="it'"'"'s a repo" && run=$(cat run) &&
	mkdir -p bin && ln -sf "$SLUICE" bin/sluice &&
	sluice -C "$d" show $run >show &&
	step1=$(next_step show 1) && step2=$(next_step show 2) && step3=$(next_step show 3) &&
	case "$step1" in "cd '"'"'"*) ;; *) false ;; esac &&
	(
		cd "$d" &&
		{ sh -c "$step1" >merge.out 2>&1; test $? = 1; } &&
		test_grep "CONFLICT (content): Merge conflict in lines.txt" merge.out &&
		wt=.system/runs/$run/worktree &&
		sed -i -e "/^<<<<<<< /d" -e "/^=======\$/d" -e "/^>>>>>>> /d" $wt/lines.txt &&
		sh -c "cd $wt && $step2" &&
		PATH="$TRASH/bin:$PATH" sh -c "$step3"
	) &&
	settle "$d" &&
	test "$(state_of "$d" $run)" = merged
'

test_done
