#!/bin/sh
# Named fault points (src/core/fault.h), the building half of a run: for
# each point a tick is killed there (SIGKILL, by SLUICE_FAULT), then ticks
# run until the queue settles. Nothing is lost or doubled: each work order
# lands once, the user's uncommitted edit stays byte for byte, `sluice
# audit` holds, no worktree or branch is left. The merging half is t0751,
# resolution and the human commands t0752, gc and reconciliation t0753.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool setsid

# A (three new files and a line of lines.txt) and B (one file), built at once.
printf '%s\n' 'echo a1 >a1.txt' 'echo a2 >a2.txt' 'echo a3 >a3.txt' \
	'sed -i 5s/.*/five-by-A/ lines.txt' 'echo "A done" >"$SLUICE_RUN_DIR/summary.md"' >"$BUILDERS/A.sh"
printf '%s\n' 'echo b >b.txt' >"$BUILDERS/B.sh"

# The starting repositories of the cases, built once (lib.sh, repo_template):
# A and B queued; and P landed first, its worktree left in the pool.
printf '%s\n' 'echo p >p.txt' 'mkdir -p junk && echo j >junk/j' >"$BUILDERS/P.sh"
test_expect_success 'the starting repositories: A and B queued; P landed, its worktree pooled' '
	rm -rf r && fault_repo r "$(approve_reviewer_config)" &&
	wo r A && wo r B && repo_template r ab &&
	fault_repo r "$(approve_reviewer_config)" &&
	wo r P && settle r && repo_template r pooled
'

# fault_case POINT [RC]: kill the first tick at POINT (RC: the tick's own
# exit status, when the tick process itself dies), settle, check. Twice:
# the process at the point alone (a worker: the tick goes on), then the
# tick with all its workers (FAULT_GROUP).
fault_case() {
	fault_case_1 "$1" "${2:-}" 0 "the process at the point"
	fault_case_1 "$1" 137 1 "the whole tick"
}

fault_case_1() { # POINT RC GROUP WHAT
	test_expect_success "$4 killed at $1: the queue settles with nothing lost or doubled" "
		repo_copy ab r &&
		FAULT_GROUP=$3 fault_fire $1 tick.out -C r tick &&
		{ [ -z '$2' ] || [ \"\$FAULT_RC\" = '$2' ]; } &&
		settle r &&
		fault_check r 'A B' '' &&
		git -C r show main:lines.txt | grep -qx five-by-A &&
		test \"\$(git -C r show main:a3.txt)\" = a3
	"
}

fault_case claim.after_claim 137
for p in prepare.before_worktree_add prepare.before_populate prepare.after_worktree_add \
	prepare.after_environment prepare.after_setup build.before_builder build.after_builder \
	build.after_snapshot build.after_diff gates.before_gate gates.after_gate gates.after_all; do
	fault_case $p
done

# The pool: P lands first and leaves its worktree in the pool; the tick
# that builds A and B gives it to one of them and is killed on the way.
pool_case() { # POINT GROUP WHAT
	test_expect_success "$3 killed at $1, taking a pooled worktree: nothing lost or doubled" "
		repo_copy pooled r &&
		test \"\$(ls -d r/.system/pool/_pool-* | wc -l)\" = 1 &&
		wo r A && wo r B &&
		FAULT_GROUP=$2 fault_fire $1 tick.out -C r tick &&
		settle r &&
		fault_check r 'P A B' '' &&
		git -C r show main:lines.txt | grep -qx five-by-A &&
		sluice -C r log >log.out &&
		test \"\$(grep -c 'worktree from the pool' log.out)\" -ge 1
	"
}
for p in pool.take_intent pool.take_moved pool.take_half_linked pool.take_relinked pool.take_adopted \
	pool.take_before_reset pool.take_recycled; do
	pool_case $p 0 "the process at the point"
	pool_case $p 1 "the whole tick"
done

# The same half-linked take resumed by `sluice advance-run` by hand, which
# reconciles nothing first: the preparing step itself puts the slot back
# (before, it reset the half-linked worktree and built in it, and the
# snapshot, finding the entry naming the pool's folder, failed the run).
test_expect_success 'a half-linked take resumed by advance-run, no reconciliation between' '
	repo_copy pooled r &&
	wo r A &&
	fault_fire pool.take_half_linked tick.out -C r tick &&
	a=$(run_of r A) &&
	sluice -C r advance-run "$a" >adv.out 2>&1 &&
	test "$(state_of r "$a")" = merged &&
	settle r &&
	fault_check r "P A" ""
'

test_expect_success 'the second gate (gates.before_gate:2)' '
	repo_copy ab r &&
	fault_fire gates.before_gate:2 tick.out -C r tick &&
	ls r/.system/runs/*/gates/g1.log >/dev/null &&
	settle r &&
	fault_check r "A B" ""
'

test_done
