#!/bin/sh
# sluice queue: schedule order, --explain reasons, --json, ingestion of new
# revisions and deleted files, states driven by runs.
. "$(dirname "$0")/lib.sh"

# The ids of --json output in order, one per line.
ids() { sed -n 's/^      "id": "\(.*\)",$/\1/p' "$1"; }
# The value of one key for one id in --json output.
field() { # FILE ID KEY
	awk -v id="$2" -v key="$3" '
		$0 ~ "^      \"id\": \"" id "\"," { on = 1 }
		on && $0 ~ "^      \"" key "\": " { sub("^      \"" key "\": ", ""); sub(",$", ""); print; exit }
	' "$1"
}

test_expect_success 'setup' '
	test_repo r &&
	sluice -C r init >/dev/null &&
	cp -R "$FIXTURES/work_orders/valid/." r/work_orders/
'

test_expect_success 'queue --json lists work orders in schedule order' '
	sluice -C r queue --json >q.json &&
	ids q.json >actual &&
	cat >expect <<-\EOF &&
	WO-103
	WO-100
	WO-106
	WO-107
	WO-101
	WO-102
	WO-104
	WO-105
	EOF
	test_cmp expect actual &&
	test "$(field q.json WO-103 state)" = "\"ready\"" &&
	test "$(field q.json WO-101 state)" = "\"waiting\"" &&
	test "$(field q.json WO-104 state)" = "\"skipped\"" &&
	test "$(field q.json WO-103 may_start)" = true &&
	test "$(field q.json WO-100 may_start)" = false
'

test_expect_success 'queue --explain says why each one waits' '
	sluice -C r queue --explain >out &&
	test_grep "ready: starts now" out &&
	test_grep "overlaps WO-103 on src/config.c (starting now)" out &&
	test_grep "waits on WO-100 (ready)" out &&
	test_grep "waits on WO-101 (waiting)" out &&
	test_grep "skipped: status draft in the file" out &&
	test_grep "waits for a free job" out
'

test_expect_success 'queue.allow_overlap lets overlapping ones start together' '
	cp r/.system/config.yaml config.saved &&
	sed -i "s/^  # allow_overlap: false$/  allow_overlap: true/; s/^  # jobs: 2$/  jobs: 8/" r/.system/config.yaml &&
	sluice -C r queue --json >q2.json &&
	cp config.saved r/.system/config.yaml &&
	test "$(field q2.json WO-100 may_start)" = true
'

test_expect_success 'a new revision is ingested with an event' '
	sed -i "s/^priority: 4$/priority: 1/" r/work_orders/WO-107.md &&
	sluice -C r queue --json >q3.json &&
	test "$(field q3.json WO-107 priority)" = 1 &&
	ids q3.json | head -n 1 >first &&
	echo WO-103 >expect && test_cmp expect first
'

test_expect_success 'a deleted file keeps its state, marked gone' '
	rm r/work_orders/WO-102.md &&
	sluice -C r queue --json >q4.json &&
	test_grep -v "\"id\": \"WO-102\"" q4.json
'

test_expect_success 'a work order depending on a deleted one is invalid' '
	cat >r/work_orders/WO-108.md <<-\EOF &&
	---
	id: WO-108
	title: Depends on a deleted work order
	depends_on: [WO-102]
	---
	EOF
	sluice -C r queue --explain >out &&
	test_grep "depends on unknown .WO-102." out
'

test_expect_success 'a merged run makes the work order done and its dependents ready' '
	test_skip_unless_tool sqlite3 &&
	hash=$(field q.json WO-100 content_hash | tr -d \") &&
	sqlite3 r/.system/sluice.db "INSERT INTO runs (id, work_order_id, wo_content_hash, state, target, created_ms, updated_ms) VALUES (\"20260101-000000-aaaaaaaa\", \"WO-100\", \"$hash\", \"merged\", \"refs/heads/main\", 1, 1)" &&
	sluice -C r queue --json >q5.json &&
	test "$(field q5.json WO-100 state)" = "\"done\"" &&
	test "$(field q5.json WO-101 state)" = "\"ready\""
'

test_expect_success 'an active run makes it running; overlapping ones wait for it' '
	test_skip_unless_tool sqlite3 &&
	sqlite3 r/.system/sluice.db "INSERT INTO runs (id, work_order_id, wo_content_hash, state, target, created_ms, updated_ms) VALUES (\"20260101-000001-bbbbbbbb\", \"WO-103\", \"x\", \"building\", \"refs/heads/main\", 2, 2)" &&
	sluice -C r queue --explain >out &&
	test_grep "^running .*WO-103" out &&
	test_grep "run 20260101-000001-bbbbbbbb is building" out
'

test_expect_success 'an abandoned run fails the work order and blocks its dependents' '
	test_skip_unless_tool sqlite3 &&
	sqlite3 r/.system/sluice.db "UPDATE runs SET state = \"merged\" WHERE id = \"20260101-000001-bbbbbbbb\"" &&
	hash=$(field q5.json WO-101 content_hash | tr -d \") &&
	sqlite3 r/.system/sluice.db "INSERT INTO runs (id, work_order_id, wo_content_hash, state, target, created_ms, updated_ms) VALUES (\"20260101-000002-cccccccc\", \"WO-101\", \"$hash\", \"abandoned\", \"refs/heads/main\", 3, 3)" &&
	cat >r/work_orders/WO-109.md <<-\EOF &&
	---
	id: WO-109
	title: Depends on an abandoned one
	depends_on: [WO-101]
	---
	EOF
	sluice -C r queue --explain >out &&
	test_grep "^failed .*WO-101" out &&
	test_grep "run 20260101-000002-cccccccc was abandoned" out &&
	test_grep "^blocked .*WO-109" out &&
	test_grep "WO-101 failed; retry or abandon its run" out
'

test_expect_success 'events record the state changes' '
	test_skip_unless_tool sqlite3 &&
	n=$(sqlite3 r/.system/sluice.db "SELECT count(*) FROM events WHERE work_order_id = \"WO-100\" AND to_state = \"done\"") &&
	test "$n" = 1
'

test_expect_success 'queue is quiet about an empty inbox; --help and usage errors' '
	test_repo e && sluice -C e init >/dev/null &&
	sluice -C e queue >out &&
	test_grep "no work orders" out &&
	sluice queue --help >help &&
	test_grep "usage: sluice queue" help &&
	test_expect_failure_code 2 sluice -C e queue --bogus 2>err
'

test_expect_success 'the seed work order parses with every field' '
	test_repo s && sluice -C s init >/dev/null &&
	cp "$FIXTURES/work_orders/seed/WO-2026-020.md" s/work_orders/ &&
	sluice -C s queue --json >s.json &&
	test_grep "\"id\": \"WO-2026-020\"" s.json &&
	test_grep "\"state\": \"skipped\"" s.json &&
	test_grep "status done in the file" s.json &&
	test_grep "\"title\": \"Runner Git Worktree Isolation with Conflict Resolution\"" s.json
'

test_done
