#!/bin/sh
# Named fault points (src/core/fault.h) of gc and of reconciliation, and
# the table itself: every point in fault.h is in the code and has a kill
# test in t0750-t0753.
. "$(dirname "$0")/lib.sh"

printf '%s\n' 'echo a1 >a1.txt' 'echo a2 >a2.txt' 'echo a3 >a3.txt' >"$BUILDERS/A.sh"
printf '%s\n' 'echo b >b.txt' >"$BUILDERS/B.sh"
# F fails: its worktree, branch and folder stay until gc --force, which
# removes it first (the oldest)
printf '%s\n' 'echo f >f.txt' 'exit 1' >"$BUILDERS/F.sh"

test_expect_success 'the points of the table in fault.h are the points in the code' '
	fault_points | sort >table &&
	test "$(wc -l <table)" -ge 30 &&
	grep -rhE "sl_fault(_fail)?\(" "$SLUICE_SOURCE_DIR/src" --include=*.c |
		grep -o "\"[a-z_]*\.[a-z_]*\"" | tr -d "\"" | sort -u >code &&
	test_cmp table code
'

test_expect_success 'every point has a kill test' '
	for p in $(fault_points); do
		cat "$SLUICE_SOURCE_DIR"/tests/cli/t075[0-9]-*.sh \
			"$SLUICE_SOURCE_DIR"/tests/cli/t0850-*.sh \
			"$SLUICE_SOURCE_DIR"/tests/cli/t111[45]-*.sh \
			"$SLUICE_SOURCE_DIR"/tests/cli/t1314-*.sh | grep -q "$p" ||
			{ echo "no kill test for $p"; return 1; }
	done
'

# The starting repositories of the cases, built once (lib.sh, repo_template):
# A and B queued; and F failed, then A and B landed.
test_expect_success 'the starting repositories: A and B queued; F failed, A and B landed' '
	rm -rf r && fault_repo r "$(approve_reviewer_config)" &&
	wo r A && wo r B && repo_template r ab &&
	fault_repo r "$(approve_reviewer_config)" &&
	wo r F && settle r &&
	wo r A && wo r B && settle r && repo_template r landed
'

for p in gc.after_worktree gc.after_branch gc.after_tombstone; do
	test_expect_success "killed at $p: gc again removes everything, audit holds" "
		repo_copy landed r &&
		frun=\$(run_of r F) &&
		test \"\$(state_of r \$frun)\" = failed &&
		test -d r/.system/runs/\$frun/worktree &&
		fault_fire $p out -C r gc --keep-last 0 --force &&
		test \$FAULT_RC = 137 &&
		test ! -d r/.system/runs/\$frun/worktree &&
		sluice -C r gc --keep-last 0 --force >out &&
		test -z \"\$(ls -d r/.system/runs/*/ 2>/dev/null)\" &&
		settle r &&
		fault_check r 'A B' F
	"
done

test_expect_success 'killed at reconcile.after_requeue after a build was killed' '
	repo_copy ab r &&
	fault_fire build.after_builder tick.out -C r tick &&
	fault_fire reconcile.after_requeue tick2.out -C r tick &&
	test $FAULT_RC = 137 &&
	settle r &&
	fault_check r "A B" ""
'

for p in cleanup.after_worktree_remove:0 pool.put_moved:2; do
	test_expect_success "killed at ${p%:*} in reconciling a killed merge (worktree.pool ${p#*:})" "
		repo_copy ab r &&
		sed -i '/^worktree:\$/a\\  pool: ${p#*:}' r/.system/config.yaml &&
		fault_fire merge.after_manifest tick.out -C r tick &&
		ls -d r/.system/runs/*/worktree >/dev/null &&
		fault_fire ${p%:*} tick2.out -C r tick &&
		test \$FAULT_RC = 137 &&
		settle r &&
		fault_check r 'A B' ''
	"
done

test_expect_success 'killed at reconcile.before_recover after a merge was killed mid-checkout' '
	repo_copy ab r &&
	fault_fire merge.mid_checkout tick.out -C r tick &&
	test -f r/.system/merge.journal &&
	fault_fire reconcile.before_recover tick2.out -C r tick &&
	test $FAULT_RC = 137 &&
	settle r &&
	fault_check r "A B" ""
'

test_expect_success 'reconciliation removes the temporary files a killed sluice left, not a live one'"'"'s' '
	rm -rf r && fault_repo r "$(approve_reviewer_config)" &&
	wo r B && settle r &&
	run=$(run_of r B) && test -d r/.system/runs/$run &&
	dead=$(sh -c "echo \$\$") && live=$$ &&
	echo x >r/.system/merge.journal.tmp.$dead &&
	echo x >r/.system/runs/$run/diff.patch.tmp.$dead &&
	echo x >r/.system/config.yaml.tmp.$live &&
	echo x >r/.system/runs/$run/notes.tmp.x$dead &&
	sluice -C r tick >out 2>err &&
	test ! -e r/.system/merge.journal.tmp.$dead &&
	test ! -e r/.system/runs/$run/diff.patch.tmp.$dead &&
	test -f r/.system/config.yaml.tmp.$live &&
	test -f r/.system/runs/$run/notes.tmp.x$dead
'

test_done
