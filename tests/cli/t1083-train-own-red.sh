#!/bin/sh
# A car red on its own merge while the target has nothing new (a flaky
# merge gate, or one that looks at the merge commit): there is no rival and
# no person's commit to resolve against, and a merge of the target into the
# run is "already up to date". It used to be taken for a semantic conflict:
# the resolution found no merge in progress and the run failed. Now it is a
# failed attempt under the retry rules, its failed gate named. With
# merge.rerun_failed: 0 (its default, 1, runs the red gate again on the same
# tree first and lands the car: t1310).
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a gate that fails the first time it runs on a merge commit' '
	sluice_repo repo "retry:" "  - not: gate.check" "  - exit: 3" &&
	cat >>repo/.system/config.yaml <<-EOF &&
	gates:
	  check: [sh, -c, "if git rev-parse -q --verify HEAD^2 >/dev/null && [ ! -e $TRASH/flaked ]; then : >$TRASH/flaked; exit 1; fi"]
	merge:
	  rerun_failed: 0
	$(approve_reviewer_config)
	EOF
	echo "echo one >one.txt" >"$BUILDERS/O.sh" &&
	sluice -C repo check >/dev/null
'

test_expect_success 'red on its own merge, nothing new on main: retried, then lands' '
	wo repo O &&
	sluice -C repo tick >out 2>&1 &&
	sluice -C repo tick >>out 2>&1 &&
	ro=$(run_of repo O) &&
	test -e "$TRASH/flaked" &&
	test "$(state_of repo $ro)" = merged &&
	sluice -C repo log $ro >log &&
	test_grep "the merge gates failed on its own merge on top of [0-9a-f]*, with nothing new there to resolve against: gate .check." log &&
	test_grep "attempt 2" log &&
	! grep -q "no merge is in progress" log &&
	! grep -q "semantic conflict" log &&
	git -C repo show main:one.txt | grep -q one &&
	test "$(git -C repo log --merges --oneline main | wc -l)" = 1 &&
	sluice -C repo audit
'

test_expect_success 'without a retry rule for it the run fails, saying why' '
	rm -f "$TRASH/flaked" &&
	sluice_repo two &&
	cat >>two/.system/config.yaml <<-EOF &&
	gates:
	  check: [sh, -c, "if git rev-parse -q --verify HEAD^2 >/dev/null && [ ! -e $TRASH/flaked ]; then : >$TRASH/flaked; exit 1; fi"]
	merge:
	  rerun_failed: 0
	$(approve_reviewer_config)
	EOF
	echo "echo two >two.txt" >"$BUILDERS/T.sh" &&
	wo two T &&
	sluice -C two tick >out 2>&1 &&
	rt=$(run_of two T) &&
	test "$(state_of two $rt)" = failed &&
	sluice -C two status --json $rt >st &&
	test_grep "merge gates failed on its own merge" st
'

test_done
