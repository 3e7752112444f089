#!/bin/sh
# worktree.keep_failed: a failed run's worktree stays for a person by
# default; with keep_failed off it goes to the worktree pool on the next
# tick once its diff.patch is saved, its branch stays, and `sluice retry`
# builds on that branch in a worktree (from the pool) reset to it.
. "$(dirname "$0")/lib.sh"

# F's gate fails until $TRASH/fixed exists; its builder adds f.txt once.
printf '%s\n' 'test -f f.txt || echo f >f.txt' >"$BUILDERS/F.sh"
gate_config() {
	printf '%s\n' "gates:" "  check: [sh, -c, 'test -f $TRASH/fixed']" \
		"retry:" "  - exit: 1"
}

test_expect_success 'by default a failed run keeps its worktree' '
	sluice_repo keep "$(approve_reviewer_config)" "$(gate_config)" &&
	wo keep F && sluice -C keep tick >out 2>&1 &&
	run=$(run_of keep F) &&
	test "$(state_of keep $run)" = failed &&
	test -f keep/.system/runs/$run/diff.patch &&
	sluice -C keep tick >out 2>&1 &&
	test -d keep/.system/runs/$run/worktree &&
	test -z "$(ls keep/.system/pool 2>/dev/null)"
'

test_expect_success 'keep_failed: off sends it to the pool on the next tick, branch kept' '
	sluice_repo off "$(approve_reviewer_config)" "$(gate_config)" &&
	sed -i "/^worktree:\$/d" off/.system/config.yaml &&
	printf "%s\n" "worktree:" "  keep_failed: off" >>off/.system/config.yaml &&
	sluice -C off check >/dev/null &&
	wo off F && sluice -C off tick >out 2>&1 &&
	run=$(run_of off F) &&
	test "$(state_of off $run)" = failed &&
	sluice -C off tick >out 2>&1 &&
	test ! -e off/.system/runs/$run/worktree &&
	test "$(ls -d off/.system/pool/_pool-* | wc -l)" = 1 &&
	git -C off rev-parse --verify -q "refs/heads/$(git -C off branch --list "run/*" | tr -d " *")" >/dev/null &&
	test -f off/.system/runs/$run/diff.patch
'

test_expect_success 'sluice retry builds on the branch in a worktree from the pool, and it lands' '
	run=$(run_of off F) &&
	touch "$TRASH/fixed" &&
	sluice -C off retry $run >out 2>&1 &&
	sluice -C off tick >out 2>&1 &&
	test "$(state_of off $run)" = merged &&
	sluice -C off log >log &&
	test_grep "worktree from the pool" log &&
	test "$(git -C off show main:f.txt)" = f
'

test_done
