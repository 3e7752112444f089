#!/bin/sh
# Migration 008 (schema/db/008_reported.sql) rebuilds the runs table for
# the state `reported`: a database made by the migrations before it, with
# runs and the rows that name them (attempts, events, retry state, train
# cars, notifications), keeps every row, every reference and every index.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool sqlite3

DB=repo/.system/sluice.db

test_expect_success 'setup: a repository with merged, failed and open runs' '
	sluice_repo repo "$(approve_reviewer_config)" &&
	echo "echo a >a.txt" >"$BUILDERS/A.sh" &&
	echo "exit 3" >"$BUILDERS/F.sh" &&
	wo repo A && wo repo F &&
	sluice -C repo tick &&
	test "$(state_of repo $(run_of repo A))" = merged &&
	test "$(state_of repo $(run_of repo F))" = failed &&
	test "$(sqlite3 $DB "PRAGMA user_version")" -ge 8
'

# The database as the migrations before 008 leave it: the runs table with
# the old CHECK (no reported), user_version 7 (after migration 007), the same rows,
# and none of what later migrations add (009's jobs, 010's next_ms, 011's landing, 012's rules_from,
# 014's freezes, 015's gate_runs).
test_expect_success 'the database taken back to before migration 008' '
	sqlite3 $DB "SELECT sql FROM sqlite_master WHERE name = '"'"'runs'"'"'" >new.sql &&
	test_grep "reported" new.sql &&
	sqlite3 $DB ".dump" >dump.before &&
	sqlite3 $DB "SELECT id, state, work_order_id, head_commit, merge_commit FROM runs ORDER BY id" >runs.before &&
	sqlite3 $DB "SELECT count(*) FROM events" >events.before &&
	sqlite3 $DB "SELECT count(*) FROM attempts" >attempts.before &&
	old=$(sed -n "/^CREATE TABLE runs (/,/^);/p" "$SLUICE_SOURCE_DIR/schema/db/001_init.sql") &&
	test -n "$old" &&
	sqlite3 $DB <<-EOF &&
	PRAGMA foreign_keys = OFF;
	BEGIN;
	CREATE TEMP TABLE keep AS SELECT * FROM runs;
	DROP TABLE runs;
	$old
	INSERT INTO runs SELECT * FROM keep;
	CREATE INDEX runs_state ON runs(state);
	CREATE INDEX runs_work_order ON runs(work_order_id);
	CREATE INDEX runs_merge_commit ON runs(merge_commit);
	CREATE INDEX runs_state_finished ON runs(state, finished_ms);
	DROP TABLE IF EXISTS jobs;
	ALTER TABLE notify_outbox DROP COLUMN next_ms;
	ALTER TABLE train_cars DROP COLUMN landing;
	ALTER TABLE run_retry DROP COLUMN rules_from;
	DROP TABLE IF EXISTS freezes;
	DROP TABLE IF EXISTS gate_runs;
	DROP TABLE IF EXISTS usage;
	DROP TABLE IF EXISTS watch_results;
	DROP TABLE IF EXISTS watch_reverts;
	ALTER TABLE train_cars DROP COLUMN lanes;
	ALTER TABLE train_cars DROP COLUMN lane_commit;
	ALTER TABLE train_cars DROP COLUMN covered_by;
	ALTER TABLE train_cars DROP COLUMN covered_commit;
	PRAGMA user_version = 7;
	COMMIT;
	EOF
	sqlite3 $DB "SELECT sql FROM sqlite_master WHERE name = '"'"'runs'"'"'" >old.sql &&
	! grep -q "reported" old.sql &&
	! sqlite3 $DB "UPDATE runs SET state = '"'"'reported'"'"' WHERE id = (SELECT min(id) FROM runs)" 2>err &&
	test_grep "CHECK constraint failed" err
'

test_expect_success 'sluice migrates it: every row kept, the new state allowed, references whole' '
	sluice -C repo runs >runs.out &&
	test "$(sqlite3 $DB "PRAGMA user_version")" -ge 8 &&
	sqlite3 $DB "SELECT id, state, work_order_id, head_commit, merge_commit FROM runs ORDER BY id" >runs.after &&
	test_cmp runs.before runs.after &&
	sqlite3 $DB "SELECT count(*) FROM events" >events.after &&
	test_cmp events.before events.after &&
	sqlite3 $DB "SELECT count(*) FROM attempts" >attempts.after &&
	test_cmp attempts.before attempts.after &&
	sqlite3 $DB "PRAGMA foreign_key_check" >fk &&
	! test -s fk &&
	sqlite3 $DB "PRAGMA integrity_check" >ic &&
	test "$(cat ic)" = ok &&
	sqlite3 $DB "SELECT name FROM sqlite_master WHERE type = '"'"'index'"'"' AND tbl_name = '"'"'runs'"'"' ORDER BY name" >idx &&
	test_grep "runs_state_finished" idx && test_grep "runs_merge_commit" idx &&
	test_grep "runs_work_order" idx &&
	sqlite3 $DB "SELECT sql FROM sqlite_master WHERE name = '"'"'runs'"'"'" >migrated.sql &&
	test_grep "reported" migrated.sql &&
	test_grep "$(run_of repo A)" runs.out
'

test_expect_success 'the migrated database runs on: a read-only run ends reported' '
	echo "echo looked >\"\$SLUICE_SUMMARY_FILE\"" >"$BUILDERS/R.sh" &&
	wo repo R "worktree: read-only" &&
	sluice -C repo tick &&
	test "$(state_of repo $(run_of repo R))" = reported &&
	sluice -C repo show $(run_of repo A) >show && test_grep "merged" show
'

test_done
