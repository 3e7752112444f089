#!/bin/sh
# queue.overlap: fatal (Gump's parallel rule: the same file changed by two
# branches is fatal). The later of two runs that change the same file fails,
# naming the file and the rival, instead of a merge attempt; the default
# (resolve) merges or resolves as before; a person's commit is no rival.
. "$(dirname "$0")/lib.sh"

# Both runs built on the same base (one tick, manual review), then approved.
build_pair() { # DIR A B
	sluice -C $1 tick --jobs 2 >/dev/null &&
	ra=$(run_of $1 $2) && rb=$(run_of $1 $3) &&
	test "$(state_of $1 $ra)" = awaiting_review &&
	test "$(state_of $1 $rb)" = awaiting_review &&
	sluice -C $1 approve $ra >/dev/null && sluice -C $1 approve $rb >/dev/null
}

lines_repo() { # DIR [config lines...]
	sluice_repo "$@" &&
	seq 1 10 >$1/lines.txt && git -C $1 add lines.txt && git -C $1 commit -q -m lines
}

test_expect_success 'setup' '
	printf "%s\n" "sed -i \"5s/.*/five by A/\" lines.txt" >"$BUILDERS/A.sh" &&
	printf "%s\n" "sed -i \"5s/.*/five by B/\" lines.txt" >"$BUILDERS/B.sh" &&
	printf "%s\n" "sed -i \"1s/.*/one by C/\" lines.txt" >"$BUILDERS/C.sh" &&
	printf "%s\n" "sed -i \"9s/.*/nine by D/\" lines.txt" >"$BUILDERS/D.sh" &&
	printf "%s\n" "echo e >e.txt" >"$BUILDERS/E.sh"
'

test_expect_success 'fatal: the same lines: the later run fails, nothing of it merged' '
	lines_repo one "queue:" "  overlap: fatal" &&
	wo one A && wo one B &&
	build_pair one A B &&
	sluice -C one tick --jobs 1 >/dev/null &&
	ra=$(run_of one A) && rb=$(run_of one B) &&
	test "$(state_of one $ra)" = merged &&
	test "$(state_of one $rb)" = failed &&
	sluice -C one status --json $rb >st &&
	test_grep "queue.overlap is fatal: .lines.txt. also changed by A (run $ra), which landed first" st &&
	git -C one show main:lines.txt >lines &&
	test_grep "^five by A$" lines && test_grep -v "five by B" lines &&
	test "$(git -C one log --merges --oneline main | wc -l)" = 1 &&
	test_grep -v "merge_conflict" st &&
	test -f one/.system/runs/$rb/diff.patch &&
	git -C one rev-parse --verify -q "refs/heads/$(git -C one for-each-ref --format="%(refname:short)" "refs/heads/run/B-*")" >/dev/null
'

test_expect_success 'fatal: the failed run merged with the target by a person lands after a retry' '
	rb=$(run_of one B) &&
	wt=one/.system/runs/$rb/worktree &&
	test_expect_failure_code 1 git -C $wt merge -q main >/dev/null 2>&1 &&
	sed -i -e "/^<<<<<<< /d" -e "/^=======\$/d" -e "/^>>>>>>> /d" -e "/^five by A\$/d" $wt/lines.txt &&
	git -C $wt commit -q -am "merged main, kept B" &&
	sluice -C one retry $rb >/dev/null &&
	sluice -C one tick >/dev/null &&
	rb2=$(run_of one B) &&
	test "$(state_of one $rb2)" = awaiting_review &&
	sluice -C one approve $rb2 >/dev/null &&
	sluice -C one tick >/dev/null &&
	test "$(state_of one $rb2)" = merged &&
	git -C one show main:lines.txt >lines &&
	test_grep "^five by B$" lines
'

test_expect_success 'fatal: the same file, other lines (git would merge it): still fatal' '
	lines_repo two "queue:" "  overlap: fatal" &&
	wo two C && wo two D &&
	build_pair two C D &&
	sluice -C two tick --jobs 1 >/dev/null &&
	rc=$(run_of two C) && rd=$(run_of two D) &&
	test "$(state_of two $rc)" = merged &&
	test "$(state_of two $rd)" = failed &&
	sluice -C two status --json $rd >st &&
	test_grep "lines.txt. also changed by C" st &&
	git -C two show main:lines.txt >lines && test_grep -v "nine by D" lines
'

test_expect_success 'fatal: runs on different files both merge' '
	lines_repo three "queue:" "  overlap: fatal" &&
	wo three A && wo three E &&
	build_pair three A E &&
	sluice -C three tick --jobs 1 >/dev/null &&
	test "$(state_of three $(run_of three A))" = merged &&
	test "$(state_of three $(run_of three E))" = merged
'

test_expect_success 'fatal: approved together, the later car fails against the car ahead' '
	lines_repo four "queue:" "  overlap: fatal" "  jobs: 2" "$(approve_reviewer_config)" &&
	meeting_builders A B "sed -i \"5s/.*/five by %s/\" lines.txt" &&
	wo four A && wo four B &&
	sluice -C four tick --jobs 2 >/dev/null &&
	sluice -C four tick --jobs 2 >/dev/null &&
	ra=$(run_of four A) && rb=$(run_of four B) &&
	sa=$(state_of four $ra) && sb=$(state_of four $rb) &&
	{ { test $sa = merged && test $sb = failed && loser=$rb; } ||
	  { test $sa = failed && test $sb = merged && loser=$ra; }; } &&
	sluice -C four status --json $loser >st &&
	test_grep "queue.overlap is fatal: .lines.txt. also changed by" st &&
	test "$(git -C four log --merges --oneline main | wc -l)" = 1
'

test_expect_success 'fatal: a person changing the same file is no rival run' '
	lines_repo five "queue:" "  overlap: fatal" &&
	wo five D &&
	sluice -C five tick >/dev/null &&
	rd=$(run_of five D) &&
	sed -i "1s/.*/one by a person/" five/lines.txt &&
	git -C five commit -q -am "a person" &&
	sluice -C five approve $rd >/dev/null &&
	sluice -C five tick >/dev/null &&
	test "$(state_of five $rd)" = merged &&
	git -C five show main:lines.txt >lines &&
	test_grep "^one by a person$" lines && test_grep "^nine by D$" lines
'

test_expect_success 'resolve (the default, and said outright): the later run goes to resolution' '
	printf "%s\n" "git diff --name-only --diff-filter=U | xargs sed -i -e \"/^<<<<<<< /d\" -e \"/^=======\$/d\" -e \"/^>>>>>>> /d\"" >"$BUILDERS/resolve.sh" &&
	lines_repo six "queue:" "  overlap: resolve" "merge:" "  resolver: none" &&
	printf "%s\n" "sed -i \"5s/.*/five by A/\" lines.txt" >"$BUILDERS/A.sh" &&
	printf "%s\n" "sed -i \"5s/.*/five by B/\" lines.txt" >"$BUILDERS/B.sh" &&
	wo six A && wo six B &&
	build_pair six A B &&
	sluice -C six tick --jobs 1 >/dev/null &&
	test "$(state_of six $(run_of six A))" = merged &&
	test "$(state_of six $(run_of six B))" = merge_conflict &&
	lines_repo seven &&
	wo seven C && wo seven D &&
	build_pair seven C D &&
	sluice -C seven tick --jobs 1 >/dev/null &&
	test "$(state_of seven $(run_of seven C))" = merged &&
	test "$(state_of seven $(run_of seven D))" = merged
'

test_expect_success 'a bad value is an error naming the file, line and the values' '
	sluice_repo bad "queue:" "  overlap: maybe" &&
	test_expect_failure_code 1 sluice -C bad check >out 2>&1 &&
	test_grep "config.yaml:[0-9]*:[0-9]*: .queue.overlap. must be .resolve. or .fatal., not .maybe." out &&
	sluice_repo bad2 "queue:" "  overlap: [fatal]" &&
	test_expect_failure_code 1 sluice -C bad2 check >out 2>&1 &&
	test_grep "queue.overlap" out
'

test_done
