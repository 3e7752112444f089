#!/bin/sh
# A resolver (the builder in resolve mode) that deletes its worktree's .git
# file: sluice's git commands in that worktree must fail there, never find
# the main checkout above it and reset, stage or commit the user's work
# (a second resolution attempt resets the worktree first).
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: two work orders on the same line, a dirty main checkout' '
	sluice_repo repo "merge:" "  resolve_attempts: 3" &&
	seq 1 10 >repo/lines.txt && git -C repo add lines.txt && git -C repo commit -q -m lines &&
	echo "sed -i 5s/.*/five-A/ lines.txt" >"$BUILDERS/A.sh" &&
	echo "sed -i 5s/.*/five-B/ lines.txt" >"$BUILDERS/B.sh" &&
	echo "rm -f .git" >"$BUILDERS/resolve.sh" &&
	wo repo A && wo repo B &&
	sluice -C repo tick --jobs 2 >/dev/null &&
	for r in $(sluice -C repo runs --state awaiting_review | cut -d" " -f1); do
		sluice -C repo approve $r >/dev/null || return 1
	done &&
	echo "user work in progress" >repo/notes.txt &&
	echo "changed by the user" >>repo/README.md &&
	checkout_digest repo >before &&
	git -C repo rev-parse main >tip0
'

test_expect_success 'the resolution fails in its worktree; the main checkout is untouched' '
	sluice -C repo tick --jobs 1 >out 2>&1 &&
	rb=$(run_of repo B) &&
	checkout_digest repo >after &&
	test_cmp before after &&
	test "$(state_of repo $rb)" != merged &&
	git -C repo log --format=%s main >log &&
	test_grep -v "resolution" log &&
	git -C repo show main:README.md >readme && test_grep -v "changed by the user" readme &&
	! git -C repo ls-files --error-unmatch notes.txt 2>/dev/null &&
	git -C repo diff --cached --quiet &&
	test_grep "changed by the user" repo/README.md &&
	test_grep "user work in progress" repo/notes.txt
'

test_done
