#!/bin/sh
# A gate that moves the run's worktree off its branch (git checkout
# --detach, a switch to another branch) fails the run in that tick, saying
# it happened after the gates. Before, the snapshot of what the gates left
# refused with "the builder detached HEAD", the run stayed in gating
# "retried next tick", and every tick requeued it, built a new attempt and
# set another worktree.broken-* aside: without end, and filling the disk.
. "$(dirname "$0")/lib.sh"

printf '%s\n' 'echo a >a.txt' >"$BUILDERS/A.sh"

for how in "checkout -q --detach" "checkout -q -b elsewhere"; do
	test_expect_success "a gate that runs git $how: the run fails once, saying so" "
		rm -rf r && sluice_repo r \"\$(approve_reviewer_config)\" \"gates:\" \
			'  move: [sh, -c, \"git $how\"]' &&
		wo r A &&
		m=\$(git -C r rev-parse main) &&
		sluice -C r tick >tick.out 2>&1 &&
		a=\$(run_of r A) &&
		test \"\$(state_of r \"\$a\")\" = failed &&
		sluice -C r status \"\$a\" >status.out &&
		test_grep 'after the gates: ' status.out &&
		! grep -q 'the builder' status.out &&
		sluice -C r tick >tick2.out 2>&1 &&
		test \"\$(state_of r \"\$a\")\" = failed &&
		test \"\$(sluice -C r runs --wo A | grep -c '^[0-9]')\" = 1 &&
		test -z \"\$(ls -d r/.system/runs/\$a/worktree.broken-* 2>/dev/null)\" &&
		test \"\$(git -C r rev-parse main)\" = \"\$m\"
	"
done

test_done
