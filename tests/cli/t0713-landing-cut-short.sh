#!/bin/sh
# A kill -9 between the landing (the target moved) and the store hearing of
# it: the next observation of the target finds a merge commit whose
# Sluice-Run names an approved run with that head and tree. That is sluice's
# own landing cut short, not an unreviewed one: no alarm, the run is
# recorded as merged once, audit holds.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool sqlite3

echo "echo K1 >k1.txt" >"$BUILDERS/K1.sh"

test_expect_success 'setup: a landing, then the store set back to before it' '
	sluice_repo repo "reviewer:" "  mode: command" "  command: [sh, $APPROVE_REVIEWER]" &&
	wo repo K1 && sluice -C repo tick >/dev/null &&
	r=$(run_of repo K1) && test "$(state_of repo $r)" = merged &&
	mc=$(git -C repo rev-parse main) && first=$(git -C repo rev-parse main^1) &&
	sqlite3 repo/.system/sluice.db "UPDATE runs SET state = '\''approved'\'', merge_commit = NULL, merge_status = NULL, finished_ms = NULL WHERE id = '\''$r'\''; UPDATE work_orders SET state = '\''running'\''; UPDATE target_tips SET tip = '\''$first'\''" &&
	rm -f repo/.system/runs/$r/merge.json repo/.system/runs/$r/manifest.json &&
	echo $r >run.id && echo $mc >mc.id
'

test_expect_success 'the next tick records that landing, with no alarm' '
	r=$(cat run.id) && mc=$(cat mc.id) &&
	sluice -C repo status >st && test_grep -v "UNREVIEWED" st &&
	sluice -C repo tick >out 2>err &&
	test_grep -v "did not land" err &&
	test "$(state_of repo $r)" = merged &&
	test "$(git -C repo rev-parse main)" = "$mc" &&
	test "$(git -C repo log --merges --oneline main | wc -l)" = 1 &&
	(cd repo && sluice audit >../out) && test_grep "all hold" out
'

test_done
