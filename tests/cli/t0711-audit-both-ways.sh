#!/bin/sh
# sluice audit checks both ways: every landing in the store against git, and
# every sluice merge on the target (a commit carrying Sluice-Run:) against
# the store and the manifest chain. A merged run's row set to rejected or
# deleted, or its manifest taken out of the chain, is found and the merge
# commit named.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool sqlite3

for g in B1 B2 B3; do echo "echo $g >$g.txt" >"$BUILDERS/$g.sh"; done

test_expect_success 'setup: three merged runs' '
	sluice_repo repo "reviewer:" "  mode: command" "  command: [sh, $APPROVE_REVIEWER]" &&
	for g in B1 B2 B3; do wo repo $g && sluice -C repo tick >/dev/null || return 1; done &&
	for g in B1 B2 B3; do test "$(state_of repo $(run_of repo $g))" = merged || return 1; done &&
	(cd repo && sluice audit >../out) && test_grep "all hold" out
'

mc_of() { # REPO RUN: the merge commit carrying Sluice-Run: RUN
	git -C "$1" log --first-parent --format=%H --grep="^Sluice-Run: $2\$" main
}

test_expect_success 'a merged run set to rejected in the store is found' '
	rm -rf t1 && cp -a repo t1 && r=$(run_of t1 B2) && mc=$(mc_of t1 $r) && test -n "$mc" &&
	sqlite3 t1/.system/sluice.db "UPDATE runs SET state = '\''rejected'\'' WHERE id = '\''$r'\''" &&
	(cd t1 && test_expect_failure_code 1 sluice audit >../out 2>../err) &&
	test_grep "$mc" out &&
	test_grep "Sluice-Run: $r" out &&
	test_grep "rejected" out
'

test_expect_success 'a merged run deleted from the store is found' '
	rm -rf t2 && cp -a repo t2 && r=$(run_of t2 B3) && mc=$(mc_of t2 $r) && test -n "$mc" &&
	sqlite3 t2/.system/sluice.db "DELETE FROM files_changed WHERE run_id = '\''$r'\''; DELETE FROM attempts WHERE run_id = '\''$r'\''; DELETE FROM runs WHERE id = '\''$r'\''" &&
	(cd t2 && test_expect_failure_code 1 sluice audit >../out 2>../err) &&
	test_grep "$mc" out &&
	test_grep "no run $r\|no run .$r." out
'

test_expect_success 'a merged run taken out of the store and the chain is found' '
	rm -rf t3 && cp -a repo t3 && r=$(run_of t3 B3) && mc=$(mc_of t3 $r) &&
	sqlite3 t3/.system/sluice.db "DELETE FROM files_changed WHERE run_id = '\''$r'\''; DELETE FROM attempts WHERE run_id = '\''$r'\''; DELETE FROM runs WHERE id = '\''$r'\''" &&
	rm -rf t3/.system/runs/$r &&
	(cd t3 && test_expect_failure_code 1 sluice audit >../out 2>../err) &&
	test_grep "$mc" out &&
	test_grep "not in the manifest chain" out
'

test_expect_success 'a landing recorded as another commit is found from both sides' '
	rm -rf t4 && cp -a repo t4 && r=$(run_of t4 B1) && mc=$(mc_of t4 $r) &&
	sqlite3 t4/.system/sluice.db "UPDATE runs SET merge_commit = '\''0123456789012345678901234567890123456789'\'' WHERE id = '\''$r'\''" &&
	(cd t4 && test_expect_failure_code 1 sluice audit >../out 2>../err) &&
	test_grep "$mc" out
'

test_expect_success 'the oldest landing deleted from the store is found too' '
	rm -rf t5 && cp -a repo t5 && r=$(run_of t5 B1) && mc=$(mc_of t5 $r) && test -n "$mc" &&
	sqlite3 t5/.system/sluice.db "DELETE FROM files_changed WHERE run_id = '\''$r'\''; DELETE FROM attempts WHERE run_id = '\''$r'\''; DELETE FROM runs WHERE id = '\''$r'\''" &&
	(cd t5 && test_expect_failure_code 1 sluice audit >../out 2>../err) &&
	test_grep "$mc" out
'

test_expect_success 'the untouched repository still audits clean' '
	(cd repo && sluice audit >../out) && test_grep "all hold" out
'

test_done
