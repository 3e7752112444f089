#!/bin/sh
# sluice request-changes RUN -m TEXT (the manual reviewer): a run awaiting
# review builds again with the comment in the next prompt, as after an HTTP
# reviewer's request_changes, under the same retry rules; the work order is
# not failed and no `rejected` notification is queued. Refused (nothing
# done) without a message, for a run in another state, with a --head the run
# no longer has, and when the retry rules allow no other attempt (without
# any rule, a person's request is always granted: the person decides each time).
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a manual reviewer, retry rules up to attempt 3' '
	sluice_repo repo "retry:" "  - exit: 3" &&
	cat >"$BUILDERS/W1.sh" <<-\EOS &&
	echo "attempt $SLUICE_ATTEMPT" >>notes.txt
	EOS
	wo repo W1 &&
	sluice -C repo tick >out &&
	run=$(run_of repo W1) &&
	test "$(state_of repo $run)" = awaiting_review
'

test_expect_success 'status names request-changes beside approve and reject' '
	run=$(run_of repo W1) &&
	sluice -C repo status >st &&
	test_grep "sluice request-changes $run -m TEXT" st &&
	test_grep "sluice diff $run" st
'

test_expect_success 'request-changes needs a message' '
	run=$(run_of repo W1) &&
	test_expect_failure_code 2 sluice -C repo request-changes $run 2>err &&
	test_grep "needs a reason: -m TEXT" err &&
	test "$(state_of repo $run)" = awaiting_review
'

test_expect_success 'request-changes with a head the run no longer has does nothing' '
	run=$(run_of repo W1) &&
	test_expect_failure_code 1 sluice -C repo request-changes $run -m "x" \
		--head 0123456789012345678901234567890123456789 2>err &&
	test_grep "nothing was done" err &&
	test "$(state_of repo $run)" = awaiting_review
'

test_expect_success 'request-changes builds again with the comment in the prompt' '
	run=$(run_of repo W1) &&
	head=$(sluice -C repo status --json $run | sed -n "s/.*\"head_commit\": \"\\(.*\\)\".*/\\1/p") &&
	sluice -C repo request-changes $run --head $head -m "please also say why in notes.txt" >out &&
	test_grep "asked for changes" out &&
	test_grep "$run" out &&
	sluice -C repo log $run >log &&
	test_grep "awaiting_review -> queued" log &&
	test_grep "asked for changes: please also say why" log &&
	test_grep "request_changes" repo/.system/runs/$run/review.json &&
	test_grep "please also say why" repo/.system/runs/$run/attempts/1/review.json &&
	sluice -C repo tick >out &&
	test "$(state_of repo $run)" = awaiting_review &&
	test_grep "please also say why in notes.txt" repo/.system/runs/$run/attempts/2/prompt.md &&
	test_grep "attempt 2" repo/.system/runs/$run/worktree/notes.txt
'

test_expect_success 'the work order is running, not failed; nothing rejected is notified' '
	sluice -C repo queue --json >q &&
	test_grep "\"running\"" q &&
	! test_grep "\"failed\"" q &&
	sluice -C repo notify >n &&
	! grep rejected n &&
	! grep failed n
'

test_expect_success 'on the last attempt the retry rules allow, it is refused' '
	run=$(run_of repo W1) &&
	sluice -C repo request-changes $run -m "one more" &&
	sluice -C repo tick &&
	test "$(state_of repo $run)" = awaiting_review &&
	test_expect_failure_code 1 sluice -C repo request-changes $run -m "and again" 2>err &&
	test_grep "last attempt" err &&
	test "$(state_of repo $run)" = awaiting_review &&
	sluice -C repo approve $run &&
	sluice -C repo tick &&
	test "$(state_of repo $run)" = merged
'

test_expect_success 'without any retry rule, each request of a person gets its attempt' '
	sluice_repo norules &&
	cp "$BUILDERS/W1.sh" "$BUILDERS/W2.sh" &&
	wo norules W2 &&
	sluice -C norules tick >out &&
	run=$(run_of norules W2) &&
	sluice -C norules request-changes $run -m "first ask" &&
	sluice -C norules tick &&
	test "$(state_of norules $run)" = awaiting_review &&
	sluice -C norules request-changes $run -m "second ask" &&
	sluice -C norules tick &&
	test "$(state_of norules $run)" = awaiting_review &&
	test_grep "second ask" norules/.system/runs/$run/attempts/3/prompt.md &&
	test "$(grep -c "^attempt" norules/.system/runs/$run/worktree/notes.txt)" = 3
'

test_expect_success 'request-changes of a run not awaiting review is refused' '
	run=$(run_of repo W1) &&
	test_expect_failure_code 1 sluice -C repo request-changes $run -m "late" 2>err &&
	test_grep "is merged, not awaiting_review" err
'

test_expect_success 'a report run (worktree read-only) writes its report again' '
	cat >"$BUILDERS/R1.sh" <<-\EOS &&
	echo "report of attempt $SLUICE_ATTEMPT" >"$SLUICE_SUMMARY_FILE"
	EOS
	wo repo R1 "worktree: read-only" &&
	sluice -C repo tick >out &&
	run=$(run_of repo R1) &&
	test "$(state_of repo $run)" = awaiting_review &&
	sluice -C repo request-changes R1 -m "say more" >out &&
	test_grep "^$run: asked for changes" out &&
	sluice -C repo tick >out &&
	test "$(state_of repo $run)" = awaiting_review &&
	test_grep "say more" repo/.system/runs/$run/attempts/2/prompt.md &&
	sluice -C repo approve R1 &&
	test "$(state_of repo $run)" = reported &&
	test_grep "report of attempt 2" repo/.system/runs/$run/report.md
'

test_done
