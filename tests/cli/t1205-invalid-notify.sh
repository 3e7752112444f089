#!/bin/sh
# An invalid work order is told to the notifiers (issue 26): once per
# revision of its file (not every tick), as event invalid_work_order with
# the file, the problem, no run (schema/notify-event.schema.json); a new
# revision that is still wrong is told again, a fixed one is not; `sluice
# notify` lists it. A database from before migration 13 keeps its rows.
. "$(dirname "$0")/lib.sh"

PY=$(command -v python3 || :)

test_expect_success 'setup: a command notifier that keeps each event it reads' '
	sluice_repo repo &&
	mkdir events &&
	printf "%s\n" "cat >\"$TRASH/events/\$SLUICE_EVENT-\$(date +%s%N).json\"" \
		"echo \"\$SLUICE_RUN_ID\" >\"$TRASH/events/run-id\"" >notifier.sh &&
	printf "%s\n" "notify:" "  command: [sh, $TRASH/notifier.sh]" >>repo/.system/config.yaml &&
	mkdir -p repo/work_orders &&
	printf -- "---\nid: BAD\ntitle: Fix: the parser\n---\nx\n" >repo/work_orders/bad.md
'

test_expect_success 'the first tick tells it: file, problem, no run' '
	sluice -C repo tick >out &&
	ls events/invalid_work_order-*.json >told &&
	test "$(wc -l <told)" = 1 &&
	ev=$(cat told) &&
	test_grep "\"event\": *\"invalid_work_order\"" $ev &&
	test_grep "\"path\": *\"work_orders/bad.md\"" $ev &&
	test_grep "\"work_order\": *\"BAD\"" $ev &&
	test_grep "\"run\": *null" $ev &&
	test_grep "\"state\": *\"invalid\"" $ev &&
	test_grep "work_orders/bad.md:3:1: YAML syntax error" $ev &&
	test_grep "put the whole value in quotes" $ev &&
	test -z "$(cat events/run-id)"
'

test_expect_success 'the event is valid against schema/notify-event.schema.json' '
	test_skip_unless_tool python3 &&
	$PY - "$SLUICE_SOURCE_DIR/schema/notify-event.schema.json" $(cat told) <<-\EOF
	import json, sys
	import jsonschema
	jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
	EOF
'

test_expect_success 'more ticks, the same bytes: nothing more' '
	sluice -C repo tick >out &&
	sluice -C repo tick >out &&
	sluice -C repo status >out &&
	sluice -C repo tick >out &&
	test "$(ls events/invalid_work_order-*.json | wc -l)" = 1 &&
	sluice -C repo notify >list &&
	test_grep "invalid_work_order .* BAD" list &&
	test "$(grep -c invalid_work_order list)" = 1
'

test_expect_success 'a new revision still wrong: told once more; fixed: not told' '
	printf -- "---\nid: BAD\ntitle: Fix: the parser, again\n---\nx\n" >repo/work_orders/bad.md &&
	sluice -C repo tick >out &&
	sluice -C repo tick >out &&
	test "$(ls events/invalid_work_order-*.json | wc -l)" = 2 &&
	printf -- "---\nid: BAD\ntitle: \"Fix: the parser\"\nstatus: draft\n---\nx\n" >repo/work_orders/bad.md &&
	sluice -C repo tick >out &&
	test "$(ls events/invalid_work_order-*.json | wc -l)" = 2
'

test_expect_success 'an owner that is invalid (a field, not YAML) is told too, once' '
	wo repo DEP "depends_on: [NOWHERE]" &&
	sluice -C repo tick >out &&
	sluice -C repo tick >out &&
	test "$(ls events/invalid_work_order-*.json | wc -l)" = 3 &&
	grep -l "depends on unknown .NOWHERE." events/invalid_work_order-*.json >dep &&
	test "$(wc -l <dep)" = 1
'

# (what migrations 014 and 015 add is dropped too: they run again after 013)
test_expect_success 'a database from before migration 13 keeps its outbox rows' '
	test_skip_unless_tool sqlite3 &&
	db=repo/.system/sluice.db &&
	sqlite3 $db "SELECT seq, event, work_order_id, reason FROM notify_outbox ORDER BY seq" >before &&
	sqlite3 $db <<-\EOF &&
	BEGIN;
	CREATE TABLE old AS SELECT seq, event, run_id, work_order_id, title, from_state, reason,
		target, commit_id, at_ms, sent, tries, last_error, done_ms, outcome, next_ms
		FROM notify_outbox;
	DROP TABLE notify_outbox;
	ALTER TABLE old RENAME TO notify_outbox;
	DROP TABLE IF EXISTS freezes;
	DROP TABLE IF EXISTS gate_runs;
	DROP TABLE IF EXISTS usage;
	DROP TABLE IF EXISTS watch_results;
	DROP TABLE IF EXISTS watch_reverts;
	ALTER TABLE train_cars DROP COLUMN lanes;
	ALTER TABLE train_cars DROP COLUMN lane_commit;
	ALTER TABLE train_cars DROP COLUMN covered_by;
	ALTER TABLE train_cars DROP COLUMN covered_commit;
	PRAGMA user_version = 12;
	COMMIT;
	EOF
	sluice -C repo notify >list &&
	test "$(sqlite3 $db "PRAGMA user_version")" -ge 13 &&
	sqlite3 $db "SELECT seq, event, work_order_id, reason FROM notify_outbox ORDER BY seq" >after &&
	test_cmp before after &&
	sqlite3 $db "PRAGMA foreign_key_check" >fk &&
	test_cmp /dev/null fk
'

test_done
