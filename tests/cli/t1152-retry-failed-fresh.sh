#!/bin/sh
# sluice retry of a failed run starts the retry rules over (as many
# attempts as a new run gets, not one) on the target as it is now; with
# --same-base, or when a person changed its worktree, on the run's old base
# and worktree (issue 26).
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool sqlite3

test_expect_success 'setup: a gate that fails until told; two attempts, both fail' '
	sluice_repo r "$(approve_reviewer_config)" \
		"gates:" "  ok: [sh, -c, \"test -e $TRASH/ok\"]" \
		"retry:" "  - exit: 2" &&
	echo "echo \"attempt \$SLUICE_ATTEMPT\" >>f.txt" >"$BUILDERS/F.sh" &&
	wo r F &&
	settle r &&
	run=$(run_of r F) && echo $run >run.id &&
	test "$(state_of r $run)" = failed &&
	sluice -C r status --json $run >st &&
	test_grep "\"attempt\": 2," st &&
	test_grep "retry exit at 2" st
'

test_expect_success 'the target moves on; retry: two new attempts, on the target as it is now' '
	run=$(cat run.id) &&
	echo other >r/other.txt && git -C r add other.txt && git -C r commit -q -m other &&
	tip=$(git -C r rev-parse main) &&
	sluice -C r retry $run &&
	sluice -C r status --json $run >st &&
	test_grep "\"base_commit\": \"$tip\"" st &&
	settle r &&
	test "$(state_of r $run)" = failed &&
	sqlite3 r/.system/sluice.db "select n from attempts where run_id = '\''$run'\'' order by n" >got &&
	printf "%s\n" 1 2 3 4 >want &&
	test_cmp want got &&
	sluice -C r status --json $run >st &&
	test_grep "\"base_commit\": \"$tip\"" st &&
	test_grep "retry exit at 2" st &&
	test -e r/.system/runs/$run/worktree/other.txt &&
	git -C r/.system/runs/$run/worktree show HEAD:f.txt >f &&
	printf "%s\n" "attempt 3" "attempt 4" >want &&
	test_cmp want f
'

test_expect_success 'retry --same-base: the old base and worktree, the rules over again' '
	run=$(cat run.id) &&
	base=$(git -C r rev-parse main) &&
	echo more >r/more.txt && git -C r add more.txt && git -C r commit -q -m more &&
	sluice -C r retry --same-base $run &&
	sluice -C r status --json $run >st &&
	test_grep "\"base_commit\": \"$base\"" st &&
	settle r &&
	test "$(state_of r $run)" = failed &&
	git -C r/.system/runs/$run/worktree show HEAD:f.txt >f &&
	printf "%s\n" "attempt 3" "attempt 4" "attempt 5" "attempt 6" >want &&
	test_cmp want f
'

test_expect_success 'a person changed the worktree: a plain retry builds on it, never resets it' '
	run=$(cat run.id) &&
	base=$(git -C r rev-parse main~1) &&
	echo "by a person" >>r/.system/runs/$run/worktree/f.txt &&
	sluice -C r retry $run &&
	sluice -C r status --json $run >st &&
	test_grep "\"base_commit\": \"$base\"" st &&
	test_grep "with the changes a person made in its worktree" st &&
	touch "$TRASH/ok" &&
	settle r &&
	test "$(state_of r $run)" = merged &&
	git -C r show main:f.txt >f &&
	printf "%s\n" "attempt 3" "attempt 4" "attempt 5" "attempt 6" "by a person" "attempt 7" >want &&
	test_cmp want f &&
	git -C r cat-file -e main:more.txt &&
	git -C r cat-file -e main:other.txt &&
	sluice -C r audit >/dev/null
'

test_expect_success 'retry --help and the man page say so' '
	sluice retry --help >help &&
	test_grep "same-base" help &&
	test_grep "same\\\\-base" "$SLUICE_SOURCE_DIR/docs/sluice.1"
'

test_done
