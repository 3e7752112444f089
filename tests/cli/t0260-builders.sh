#!/bin/sh
# Builders that misbehave (fixtures/builders/): each ends the way a careful
# user expects, with the reason on the run, and nothing else is touched.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool python3

B="$FIXTURES/builders"

# Alive and not a zombie (a zombie is dead; whether PID 1 reaps it is not ours).
alive() { proc_alive "$1"; }

test_expect_success 'setup' '
	sluice_repo repo &&
	git -C repo commit -q --allow-empty -m "a second commit, so the base has a parent" &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	python3 - repo/.system/config.yaml <<-\EOF &&
	import sys, re
	p = sys.argv[1]
	s = open(p).read()
	s = s.replace("\nbuilder:\n", "\nbuilder:\n  timeout: 20s\n  log_max: 1MiB\n  env:\n    FLOOD_BYTES: \"20000000\"\n", 1)
	open(p, "w").write(s)
	EOF
	sluice -C repo check &&
	for f in commit fail hang flood checkout_other reset_below_base delete_git; do
		echo "exec sh $B/$f.sh" >"$BUILDERS/X-$f.sh" || return 1
	done &&
	checkout_digest repo >before
'

test_expect_success 'a builder that commits itself: merged' '
	wo repo X-commit && sluice -C repo tick >/dev/null &&
	test "$(state_of repo $(run_of repo X-commit))" = merged &&
	git -C repo log -1 --format=%s main^2 >subject &&
	test_grep -v "sluice snapshot" subject
'

test_expect_success 'a builder that exits non-zero: failed with its exit code' '
	wo repo X-fail && sluice -C repo tick >/dev/null &&
	run=$(run_of repo X-fail) &&
	test "$(state_of repo $run)" = failed &&
	sluice -C repo status --json $run >st && test_grep "exit 3" st &&
	test_grep "fail.sh" repo/.system/runs/$run/builder.log
'

test_expect_success 'a builder that hangs: the timeout kills its whole process group' '
	wo repo X-hang && sluice -C repo tick >/dev/null &&
	run=$(run_of repo X-hang) &&
	test "$(state_of repo $run)" = failed &&
	sluice -C repo status --json $run >st && test_grep "timed out" st &&
	read pid child <repo/.system/runs/$run/pids &&
	! alive $pid && ! alive $child
'

test_expect_success 'a builder that floods its output: the log is bounded, the run goes on' '
	wo repo X-flood && sluice -C repo tick >/dev/null &&
	run=$(run_of repo X-flood) &&
	test "$(state_of repo $run)" = merged &&
	size=$(wc -c <repo/.system/runs/$run/builder.log) &&
	test $size -lt 1200000 &&
	test_grep "log truncated" repo/.system/runs/$run/builder.log
'

test_expect_success 'a builder that checks out another branch: failed with that reason' '
	wo repo X-checkout_other && sluice -C repo tick >/dev/null &&
	run=$(run_of repo X-checkout_other) &&
	test "$(state_of repo $run)" = failed &&
	sluice -C repo status --json $run >st && test_grep "other" st
'

test_expect_success 'a builder that resets the branch below its base: failed with that reason' '
	wo repo X-reset_below_base && sluice -C repo tick >/dev/null &&
	run=$(run_of repo X-reset_below_base) &&
	test "$(state_of repo $run)" = failed &&
	sluice -C repo status --json $run >st && test_grep "base" st
'

test_expect_success 'a builder that deletes the worktree .git file: failed with that reason' '
	wo repo X-delete_git && sluice -C repo tick >/dev/null &&
	run=$(run_of repo X-delete_git) &&
	test "$(state_of repo $run)" = failed &&
	sluice -C repo status --json $run >st && test_grep "\\.git" st
'

test_expect_success 'the main checkout was never touched by the failures' '
	git -C repo log --merges --oneline main >merges &&
	test "$(wc -l <merges)" = 2 &&
	git -C repo status --porcelain >st && test_cmp st - <<-\EOF
	?? work_orders/
	EOF
'

test_done
