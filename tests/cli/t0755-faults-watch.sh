#!/bin/sh
# Named fault points of `sluice watch` (src/core/fault.h; docs/watch.md):
# a watch killed with SIGKILL anywhere between naming a landing and writing
# its revert and fix-up into the inbox resumes at its next start, and the
# landing is reverted exactly once: one row, one revert run, one landing of
# it, the fix-up after it. A tick killed while it builds the revert too.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool jq sqlite3

for w in A B C; do
	echo "echo $w >$w.txt" >"$BUILDERS/$w.sh"
done
echo "echo broken >>B.txt" >>"$BUILDERS/B.sh"
echo "echo B >B.txt" >"$BUILDERS/B-fix.sh"
cat >"$TRASH/e2e.sh" <<'EOS'
! grep -l broken *.txt 2>/dev/null
EOS

# r: A, B and C landed, the watch green before them; B breaks e2e.
landed_three() {
	rm -rf r &&
	sluice_repo r "queue:" "  jobs: 1" "watch:" "  gates:" "    e2e: [sh, $TRASH/e2e.sh]" \
		"  revert_review: auto" "$(approve_reviewer_config)" &&
	sluice -C r watch >/dev/null &&
	for w in A B C; do
		wo r $w && settle r || return 1
	done
}

# After the killed watch: the next one leaves exactly one revert; the
# revert and the fix-up land once each; the watch is green.
reverted_once() {
	test "$(sqlite3 r/.system/sluice.db "SELECT count(*) FROM watch_reverts")" = 1 &&
	test -f r/work_orders/B-revert.md && test -f r/work_orders/B-fix.md &&
	test "$(ls -A r/work_orders | grep -c "sluice-tmp")" = 0 &&
	settle r &&
	test "$(sluice -C r runs --wo B-revert | grep -cE "^[0-9]{8}-")" = 1 &&
	test "$(state_of r "$(run_of r B-revert)")" = merged &&
	test "$(state_of r "$(run_of r B-fix)")" = merged &&
	test "$(git -C r log --first-parent --format=%B main | grep -c "^Sluice-Run: $(run_of r B-revert)$")" = 1 &&
	sluice -C r watch >green.out &&
	test_grep "^watch e2e: green on " green.out &&
	test "$(sqlite3 r/.system/sluice.db "SELECT count(*) FROM watch_reverts")" = 1 &&
	sluice -C r audit >/dev/null
}

test_expect_success 'killed at watch.after_culprit: the next watch bisects again and reverts once' '
	landed_three &&
	fault_fire watch.after_culprit out -C r watch &&
	test $FAULT_RC = 137 &&
	test ! -e r/work_orders/B-revert.md &&
	test_expect_failure_code 1 sluice -C r watch >out &&
	test_grep "revert: work order B-revert is in the inbox" out &&
	reverted_once
'

test_expect_success 'killed at watch.after_stage: staged, not recorded; the next watch makes it once' '
	landed_three &&
	fault_fire watch.after_stage out -C r watch &&
	test $FAULT_RC = 137 &&
	ls r/.system/watch/reverts/ | grep -q -- "-revert.md$" &&
	test "$(sqlite3 r/.system/sluice.db "SELECT count(*) FROM watch_reverts")" = 0 &&
	test ! -e r/work_orders/B-revert.md &&
	test_expect_failure_code 1 sluice -C r watch >out &&
	test_grep "revert: work order B-revert is in the inbox" out &&
	reverted_once
'

test_expect_success 'killed at watch.after_record: the next watch writes the work orders first, reverts nothing twice' '
	landed_three &&
	fault_fire watch.after_record out -C r watch &&
	test $FAULT_RC = 137 &&
	test "$(sqlite3 r/.system/sluice.db "SELECT count(*) FROM watch_reverts")" = 1 &&
	test ! -e r/work_orders/B-revert.md &&
	test_expect_failure_code 1 sluice -C r watch >out &&
	test_grep "revert: made before, work order B-revert; a landing is never reverted twice" out &&
	reverted_once
'

test_expect_success 'killed at watch.after_record in a tick (watch.every): the next tick writes the work orders' '
	landed_three &&
	sed -i "s/^  revert_review: auto$/&\n  every: 1/" r/.system/config.yaml &&
	FAULT_GROUP=1 fault_fire watch.after_record out -C r tick &&
	test $FAULT_RC = 137 &&
	test ! -e r/work_orders/B-revert.md &&
	sluice -C r tick >tick.out &&
	test -f r/work_orders/B-revert.md &&
	reverted_once
'

test_expect_success 'a tick killed while it builds the revert: the next ones land it once' '
	landed_three &&
	test_expect_failure_code 1 sluice -C r watch >out &&
	FAULT_GROUP=1 fault_fire build.after_snapshot tick.out -C r tick &&
	test $FAULT_RC = 137 &&
	reverted_once
'

test_done
