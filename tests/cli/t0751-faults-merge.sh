#!/bin/sh
# Named fault points (src/core/fault.h), review and merge: a tick killed
# at each point, then ticks until the queue settles; each work order lands
# once, the user's uncommitted edit of the checked-out target stays byte for
# byte and nothing else differs from HEAD, `sluice audit` holds, nothing is
# left behind. See t0750 for the building half.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool setsid

# A brings three new files (so that a checkout of its merge has files
# before and after the first one) and a line; B one file.
printf '%s\n' 'echo a1 >a1.txt' 'echo a2 >a2.txt' 'echo a3 >a3.txt' \
	'sed -i 5s/.*/five-by-A/ lines.txt' 'echo "A done" >"$SLUICE_RUN_DIR/summary.md"' >"$BUILDERS/A.sh"
printf '%s\n' 'echo b >b.txt' >"$BUILDERS/B.sh"

test_expect_success 'the starting repository, built once (lib.sh, repo_template): A and B queued' '
	rm -rf r && fault_repo r "$(approve_reviewer_config)" &&
	wo r A && wo r B && repo_template r ab
'

# Twice: the worker at the point alone (the tick goes on), then the tick
# with all its workers (FAULT_GROUP).
fault_case() { # POINT [POOL]
	fault_case_1 "$1" 0 "the process at the point" "${2:-2}"
	fault_case_1 "$1" 1 "the whole tick" "${2:-2}"
}

fault_case_1() { # POINT GROUP WHAT POOL
	test_expect_success "$3 killed at $1 (worktree.pool $4): the queue settles with nothing lost or doubled" "
		repo_copy ab r &&
		sed -i '/^worktree:\$/a\\  pool: $4' r/.system/config.yaml &&
		grep -qx '  pool: $4' r/.system/config.yaml &&
		FAULT_GROUP=$2 fault_fire $1 tick.out -C r tick &&
		{ [ $2 = 0 ] || [ \"\$FAULT_RC\" = 137 ]; } &&
		settle r &&
		fault_check r 'A B' '' &&
		git -C r show main:lines.txt | grep -qx five-by-A &&
		test \"\$(git -C r show main:a3.txt)\" = a3 &&
		test \"\$(cat r/a1.txt r/a2.txt r/a3.txt r/b.txt)\" = \"\$(printf 'a1\na2\na3\nb')\"
	"
}

for p in review.before_request review.after_verdict review.after_record \
	train.after_car train.after_gates train.after_result train.before_land merge.before_merge \
	merge.after_commit merge.mid_checkout merge.after_checkout_files merge.index_in_lock merge.after_checkout merge.after_ref_move \
	merge.before_store merge.after_merge_json merge.after_store merge.after_manifest \
	pool.put_intent pool.put_moved; do
	fault_case $p
done
# without the pool, a merged run's worktree is removed
fault_case cleanup.after_worktree_remove 0

# The same with a person's approval: the merge comes from a later tick.
test_expect_success 'killed in the merge after a manual approval' '
	rm -rf r && fault_repo r &&
	wo r A &&
	sluice -C r tick >/dev/null &&
	run=$(run_of r A) &&
	test "$(state_of r $run)" = awaiting_review &&
	sluice -C r approve $run >/dev/null &&
	fault_fire merge.mid_checkout tick.out -C r tick &&
	settle r &&
	fault_check r A ""
'

test_done
