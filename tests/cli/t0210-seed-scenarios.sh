#!/bin/sh
# The four integration scenarios of the seed work order WO-2026-020:
# different files merge cleanly; same file, different lines auto-merge;
# same lines conflict and the rival's context is loaded; the builder
# resolves, the reviewer reviews the resolution, the merge succeeds.
. "$(dirname "$0")/lib.sh"

# Two work orders built from the same base (one tick, manual review), then
# approved and merged one after the other.
build_pair() { # DIR A B
	sluice -C $1 tick --jobs 2 >/dev/null &&
	ra=$(run_of $1 $2) && rb=$(run_of $1 $3) &&
	test "$(state_of $1 $ra)" = awaiting_review &&
	test "$(state_of $1 $rb)" = awaiting_review &&
	sluice -C $1 approve $ra >/dev/null && sluice -C $1 approve $rb >/dev/null
}

test_expect_success 'setup' '
	cat >"$BUILDERS/A1.sh" <<-\EOS &&
	echo "from A1" >a.txt
	echo "A1 wrote a.txt" >"$SLUICE_RUN_DIR/summary.md"
	EOS
	cat >"$BUILDERS/B1.sh" <<-\EOS &&
	echo "from B1" >b.txt
	EOS
	cat >"$BUILDERS/A2.sh" <<-\EOS &&
	sed -i "1s/.*/one by A2/" lines.txt
	EOS
	cat >"$BUILDERS/B2.sh" <<-\EOS &&
	sed -i "9s/.*/nine by B2/" lines.txt
	EOS
	cat >"$BUILDERS/A3.sh" <<-\EOS &&
	sed -i "5s/.*/five by A3/" lines.txt
	echo "A3 rewrote line five for the A goal" >"$SLUICE_RUN_DIR/summary.md"
	EOS
	cat >"$BUILDERS/B3.sh" <<-\EOS
	sed -i "5s/.*/five by B3/" lines.txt
	echo "B3 rewrote line five for the B goal" >"$SLUICE_RUN_DIR/summary.md"
	EOS
'

test_expect_success 'scenario 1: two runs on different files both merge cleanly' '
	sluice_repo one &&
	wo one A1 && wo one B1 &&
	build_pair one A1 B1 &&
	sluice -C one tick --jobs 1 >out &&
	test "$(state_of one $(run_of one A1))" = merged &&
	test "$(state_of one $(run_of one B1))" = merged &&
	git -C one show main:a.txt | grep -q "from A1" &&
	git -C one show main:b.txt | grep -q "from B1" &&
	test "$(git -C one log --merges --oneline main | wc -l)" = 2
'

test_expect_success 'scenario 2: same file, different lines: auto-merge' '
	sluice_repo two &&
	seq 1 10 >two/lines.txt && git -C two add lines.txt && git -C two commit -q -m lines &&
	wo two A2 && wo two B2 &&
	build_pair two A2 B2 &&
	sluice -C two tick --jobs 1 &&
	test "$(state_of two $(run_of two A2))" = merged &&
	test "$(state_of two $(run_of two B2))" = merged &&
	git -C two show main:lines.txt >lines &&
	test_grep "^one by A2$" lines && test_grep "^nine by B2$" lines
'

test_expect_success 'scenario 3: same lines: conflict detected, the rival context loaded' '
	sluice_repo three "merge:" "  resolver: none" &&
	seq 1 10 >three/lines.txt && git -C three add lines.txt && git -C three commit -q -m lines &&
	wo three A3 && wo three B3 &&
	build_pair three A3 B3 &&
	sluice -C three tick --jobs 1 &&
	ra=$(run_of three A3) && rb=$(run_of three B3) &&
	test "$(state_of three $ra)" = merged &&
	test "$(state_of three $rb)" = merge_conflict &&
	sluice -C three status --json $rb >st &&
	test_grep "\"conflict_with_run_id\": \"$ra\"" st &&
	test_grep "\"merge_status\": \"conflict\"" st &&
	c=three/.system/runs/$rb/conflict.json &&
	test_grep "lines.txt" $c &&
	test_grep "<<<<<<< " $c && test_grep ">>>>>>> " $c &&
	test_grep "A3 rewrote line five" $c &&
	test_grep "B3 rewrote line five" $c &&
	test_grep "\"mergedAt\"" $c &&
	test_grep "\"conflictingRun\"" $c &&
	test -d three/.system/runs/$rb/worktree &&
	git -C three rev-parse --verify -q "refs/heads/run/B3-$(echo $rb | cut -c17-)" &&
	git -C three show main:lines.txt | grep -q "^five by A3$"
'

test_expect_success 'scenario 3: the person sees the conflict and what to do' '
	rb=$(run_of three B3) &&
	sluice -C three runs --state merge_conflict >list && test_grep "$rb" list &&
	sluice -C three status >st && test_grep "needs a person: 1" st && test_grep "sluice retry $rb" st
'

test_expect_success 'scenario 3: a person resolves in the worktree, retry, review, merge' '
	rb=$(run_of three B3) && ra=$(run_of three A3) &&
	wt=three/.system/runs/$rb/worktree &&
	test_expect_failure_code 1 git -C $wt merge -q main &&
	sed -i -e "/^<<<<<<< /d" -e "/^=======\$/d" -e "/^>>>>>>> /d" $wt/lines.txt &&
	git -C $wt add lines.txt &&
	sluice -C three retry $rb &&
	test "$(state_of three $rb)" = resolving &&
	sluice -C three tick &&
	test "$(state_of three $rb)" = awaiting_review &&
	test_grep "\"kind\": \"resolution\"" three/.system/runs/$rb/review-request.json &&
	sluice -C three approve $rb &&
	sluice -C three tick &&
	test "$(state_of three $rb)" = merged &&
	git -C three log -1 --format=%B main >msg &&
	test_grep "^Resolved-with: $ra" msg &&
	git -C three show main:lines.txt >lines &&
	test_grep "^five by A3$" lines && test_grep "^five by B3$" lines &&
	sluice -C three audit
'

test_expect_success 'scenario 4: the builder resolves, the resolution is re-reviewed and merged' '
	sluice_repo four &&
	seq 1 10 >four/lines.txt && git -C four add lines.txt && git -C four commit -q -m lines &&
	wo four A3 && wo four B3 &&
	build_pair four A3 B3 &&
	sluice -C four tick --jobs 1 &&
	ra=$(run_of four A3) && rb=$(run_of four B3) &&
	test "$(state_of four $ra)" = merged &&
	test "$(state_of four $rb)" = awaiting_review &&
	r=four/.system/runs/$rb &&
	test_grep "\"kind\": \"resolution\"" $r/review-request.json &&
	test_grep "\"rival_run_id\": \"$ra\"" $r/review-request.json &&
	test_grep "resolving a merge conflict" $r/attempts/2/prompt.md &&
	sluice -C four approve $rb &&
	sluice -C four tick &&
	test "$(state_of four $rb)" = merged &&
	git -C four log -1 --format=%B main >msg &&
	test_grep "^Resolved-with: $ra" msg &&
	git -C four show main:lines.txt >lines &&
	test_grep "^five by A3$" lines && test_grep "^five by B3$" lines &&
	! grep -q "^<<<<<<<\\|^>>>>>>>\\|^=======$" lines &&
	sluice -C four audit
'

test_expect_success 'sluice run WO-ID runs one work order in the foreground' '
	echo "echo solo >solo.txt" >"$BUILDERS/S1.sh" &&
	wo four S1 && wo four S2 "depends_on: [S1]" &&
	test_expect_failure_code 1 sluice -C four run S2 2>err &&
	test_grep "S1" err &&
	sluice -C four run S1 >out &&
	test "$(state_of four $(run_of four S1))" = awaiting_review &&
	test -z "$(run_of four S2)" &&
	test_expect_failure_code 2 sluice -C four run 2>err
'

test_done
