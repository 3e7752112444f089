#!/bin/sh
# The run pipeline with the manual reviewer: tick, approve, merge, artifacts.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a repository with one work order' '
	sluice_repo repo &&
	cat >"$BUILDERS/WO-1.sh" <<-\EOS &&
	echo "line from the builder" >>notes.txt
	printf "binary\0data" >blob.bin
	echo "added notes and a blob" >"$SLUICE_RUN_DIR/summary.md"
	EOS
	wo repo WO-1 "acceptance_criteria:" "  - notes.txt has a line"
'

test_expect_success 'a tick builds the run and waits for a person' '
	sluice -C repo tick >out &&
	test_grep "awaiting_review" out &&
	run=$(run_of repo WO-1) &&
	test "$(state_of repo $run)" = awaiting_review &&
	test -d repo/.system/runs/$run/worktree &&
	git -C repo rev-parse --verify -q "refs/heads/run/WO-1-$(echo $run | cut -c17-)"
'

test_expect_success 'the artifacts are written as the run goes' '
	run=$(run_of repo WO-1) && d=repo/.system/runs/$run &&
	test_cmp repo/work_orders/WO-1.md $d/work_order.md &&
	test -s $d/attempts/1/prompt.md && test_grep "Do the work of WO-1" $d/attempts/1/prompt.md &&
	test -f $d/builder.log && test -f $d/gates.json &&
	test_grep "added notes" $d/summary.md &&
	test_grep "notes.txt" $d/files_changed.json &&
	test_grep "\"tree\"" $d/review-request.json &&
	test_grep "notes.txt has a line" $d/review-request.json
'

test_expect_success 'diff.patch is what git diff --binary --full-index -M prints' '
	run=$(run_of repo WO-1) && d=repo/.system/runs/$run &&
	base=$(sluice -C repo status --json $run | sed -n "s/.*\"base_commit\": \"\\(.*\\)\".*/\\1/p") &&
	head=$(sluice -C repo status --json $run | sed -n "s/.*\"head_commit\": \"\\(.*\\)\".*/\\1/p") &&
	git -C repo diff --binary --full-index -M $base $head >expect &&
	test_cmp expect $d/diff.patch
'

test_expect_success 'approve needs a run awaiting review and a known run' '
	test_expect_failure_code 1 sluice -C repo approve no-such-run 2>err &&
	test_grep "no run" err &&
	test_expect_failure_code 2 sluice -C repo approve 2>err &&
	test_grep "name one run" err
'

test_expect_success 'approve, then the next tick merges with a merge commit and trailers' '
	run=$(run_of repo WO-1) &&
	sluice -C repo approve ${run%????????} -m "looks right" &&
	sluice -C repo tick >out &&
	test "$(state_of repo $run)" = merged &&
	test "$(git -C repo rev-list --parents -1 main | wc -w)" = 3 &&
	git -C repo log -1 --format=%B main >msg &&
	test_grep "^Merge WO-1: Work order WO-1" msg &&
	test_grep "^Work-Order: WO-1" msg &&
	test_grep "^Sluice-Run: $run" msg &&
	test_grep "^Reviewed-by: " msg &&
	test "$(git -C repo rev-parse main^2)" = "$(sluice -C repo status --json $run | sed -n "s/.*\"head_commit\": \"\\(.*\\)\".*/\\1/p")"
'

test_expect_success 'after the merge: worktree and branch gone, artifacts kept, work order done' '
	run=$(run_of repo WO-1) && d=repo/.system/runs/$run &&
	! test -e $d/worktree &&
	test -z "$(git -C repo branch --list "run/*")" &&
	test -f $d/merge.json && test -f $d/review.json && test -f $d/diff.patch &&
	test_grep "looks right" $d/review.json &&
	sluice -C repo queue --json >q && test_grep "\"done\"" q &&
	git -C repo show main:notes.txt >notes && test_grep "line from the builder" notes &&
	test_cmp repo/notes.txt notes
'

test_expect_success 'the event log has every transition with a reason' '
	run=$(run_of repo WO-1) &&
	sluice -C repo log $run >log &&
	for s in queued preparing building gating reviewing awaiting_review approved merging merged; do
		test_grep "> $s" log || return 1
	done
'

test_expect_success 'reject ends the run and fails the work order' '
	cat >"$BUILDERS/WO-2.sh" <<-\EOS &&
	echo two >two.txt
	EOS
	wo repo WO-2 &&
	sluice -C repo tick &&
	run=$(run_of repo WO-2) &&
	test_expect_failure_code 2 sluice -C repo reject $run 2>err &&
	sluice -C repo reject $run -m "not what was asked" &&
	test "$(state_of repo $run)" = rejected &&
	sluice -C repo queue --json >q && test_grep "\"failed\"" q
'

test_expect_success 'retry of a rejected run builds a new attempt' '
	run=$(run_of repo WO-2) &&
	sluice -C repo retry $run &&
	sluice -C repo tick &&
	test "$(state_of repo $run)" = awaiting_review &&
	test -f repo/.system/runs/$run/attempts/2/prompt.md
'

test_expect_success 'abandon saves the work and removes the worktree, keeping the branch' '
	run=$(run_of repo WO-2) &&
	echo "uncommitted" >repo/.system/runs/$run/worktree/extra.txt &&
	sluice -C repo abandon $run &&
	test "$(state_of repo $run)" = abandoned &&
	! test -e repo/.system/runs/$run/worktree &&
	branch=$(git -C repo branch --list "run/WO-2-*" | tr -d " *") &&
	test -n "$branch" &&
	git -C repo show "$branch:extra.txt" >x && test_grep uncommitted x &&
	test_grep "extra.txt" repo/.system/runs/$run/diff.patch
'

test_expect_success 'an approval binds to the tree: work added after it is reviewed again' '
	echo "echo four >four.txt" >"$BUILDERS/WO-4.sh" &&
	wo repo WO-4 &&
	sluice -C repo tick && run=$(run_of repo WO-4) &&
	sluice -C repo approve $run &&
	echo "added after the review" >repo/.system/runs/$run/worktree/late.txt &&
	sluice -C repo tick >out &&
	test "$(state_of repo $run)" = awaiting_review &&
	sluice -C repo log $run >log && test_grep "changed after the review" log &&
	test_grep "late.txt" repo/.system/runs/$run/diff.patch &&
	sluice -C repo approve $run && sluice -C repo tick &&
	test "$(state_of repo $run)" = merged &&
	git -C repo show main:late.txt >late && test_grep "added after the review" late
'

test_expect_success 'retry keeps what a person fixed in a failed run worktree' '
	echo "test -f fix.txt || exit 1; echo five >five.txt" >"$BUILDERS/WO-5.sh" &&
	wo repo WO-5 &&
	sluice -C repo tick && run=$(run_of repo WO-5) &&
	test "$(state_of repo $run)" = failed &&
	echo "the fix" >repo/.system/runs/$run/worktree/fix.txt &&
	sluice -C repo retry $run &&
	sluice -C repo tick &&
	test "$(state_of repo $run)" = awaiting_review &&
	git -C repo show "$(git -C repo for-each-ref --format="%(refname:short)" "refs/heads/run/WO-5-*"):fix.txt" >fix &&
	test_grep "the fix" fix
'

test_expect_success 'retry of a run whose work order changed since is refused' '
	echo "exit 1" >"$BUILDERS/WO-6.sh" &&
	wo repo WO-6 &&
	sluice -C repo tick && run=$(run_of repo WO-6) &&
	test "$(state_of repo $run)" = failed &&
	echo "revised" >>repo/work_orders/WO-6.md &&
	sluice -C repo queue >/dev/null &&
	test_expect_failure_code 1 sluice -C repo retry $run 2>err &&
	test_grep "changed since" err &&
	test "$(state_of repo $run)" = failed
'

test_expect_success 'merge.message sets the subject of the merge commit' '
	printf "%s\n" "merge:" "  message: \"Land {work_order.id} from {run.branch}: {work_order.title}\"" \
		>>repo/.system/config.yaml &&
	sluice -C repo check &&
	echo "echo three >three.txt" >"$BUILDERS/WO-3.sh" &&
	wo repo WO-3 &&
	sluice -C repo tick && run=$(run_of repo WO-3) &&
	sluice -C repo approve $run && sluice -C repo tick &&
	git -C repo log -1 --format=%B main >msg &&
	test_grep "^Land WO-3 from run/WO-3-$(echo $run | cut -c17-): Work order WO-3$" msg &&
	test_grep "^Work-Order: WO-3$" msg
'

test_done
