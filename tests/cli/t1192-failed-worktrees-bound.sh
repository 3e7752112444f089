#!/bin/sh
# Failed runs' worktrees are bounded: a tick keeps those of the newest
# gc.keep_failed failed (or rejected) runs, none finished longer ago than
# gc.keep_failed_for, and lets the others go (their work is on their branch
# and in diff.patch); only the worktree goes, never the run's folder or
# branch. They used to stay until `sluice gc --force` (733 MB after 19
# runs of a 104 MB checkout). `sluice status` shows what .system/ takes.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: four work orders whose gate fails' '
	sluice_repo repo "gates:" "  never: [sh, -c, '\''exit 1'\'']" "gc:" "  keep_failed: 2" &&
	for w in F1 F2 F3 F4; do
		echo "echo $w >$w.txt" >"$BUILDERS/$w.sh" &&
		wo repo $w || return 1
	done &&
	wait_until "sluice -C repo tick >>tick.out 2>&1 &&
		test \$(sluice -C repo runs | grep -c \" failed \") = 4" &&
	sluice -C repo tick >tick.out 2>&1 &&
	for w in F1 F2 F3 F4; do
		test "$(state_of repo $(run_of repo $w))" = failed || return 1
	done
'

test_expect_success 'a tick keeps only the newest gc.keep_failed failed worktrees' '
	ls -d repo/.system/runs/*/worktree >kept &&
	test "$(wc -l <kept)" = 2 &&
	for w in F1 F2 F3 F4; do
		r=$(run_of repo $w) &&
		test -f repo/.system/runs/$r/diff.patch &&
		test -f repo/.system/runs/$r/gates/never.log &&
		git -C repo rev-parse -q --verify "refs/heads/$(git -C repo for-each-ref --format="%(refname:short)" "refs/heads/run/*" | grep -i "$w" | head -n 1)" >/dev/null ||
		return 1
	done &&
	test "$(git -C repo for-each-ref "refs/heads/run/*" | wc -l)" = 4
'

test_expect_success 'sluice retry of a run whose worktree went builds again from its branch' '
	r=$(run_of repo F1) &&
	test ! -e repo/.system/runs/$r/worktree &&
	sluice -C repo retry $r >retry.out 2>&1 &&
	sluice -C repo tick >tick.out 2>&1 &&
	r2=$(run_of repo F1) &&
	test "$(state_of repo $r2)" = failed &&
	test_grep "^+F1$" repo/.system/runs/$r2/diff.patch
'

test_expect_success 'gc.keep_failed_for: a worktree older than that goes too' '
	printf "%s\n" "  keep_failed_for: 1h" >>repo/.system/config.yaml &&
	sluice -C repo check &&
	SLUICE_TEST_CLOCK_AHEAD=2h sluice -C repo tick >tick.out 2>&1 &&
	! ls -d repo/.system/runs/*/worktree 2>/dev/null &&
	ls repo/.system/runs/*/diff.patch >patches &&
	test "$(wc -l <patches)" -ge 4
'

test_expect_success 'status shows what .system/ takes' '
	sluice -C repo status >status.out &&
	test_grep "^disk: \.system/ [0-9.]* [KMG]iB\|^disk: \.system/ [0-9]* bytes" status.out &&
	sluice -C repo status --json >status.json &&
	test_grep "\"system_bytes\": [1-9]" status.json
'

test_done
