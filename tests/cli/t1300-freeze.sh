#!/bin/sh
# sluice freeze / unfreeze (docs/sluice.1; docs/config.md, "merge.freeze"):
# a frozen target keeps testing its cars and lands none, and the reason
# shows in status (text and --json), the run's reason and the queue's;
# unfreeze lands the green car, once, as tested. --until ends the freeze by
# itself (a time already past freezes nothing); TIME is ISO 8601 with its
# zone, anything else is refused with a usage error.
. "$(dirname "$0")/lib.sh"

echo 'echo one >one.txt' >"$BUILDERS/ONE.sh"
DB=r/.system/sluice.db

test_expect_success 'frozen, a tick tests the car and lands nothing; status says why' '
	sluice_repo r "gates:" "  test: [sh, -c, \"echo \$SLUICE_RUN_DIR >>$TRASH/gate-runs\"]" \
		"$(approve_reviewer_config)" &&
	sluice -C r freeze -m "release 2.0" >out &&
	test_grep "froze .main.: release 2.0" out &&
	wo r ONE &&
	tip=$(git -C r rev-parse main) &&
	sluice -C r tick >out 2>&1 &&
	run=$(run_of r ONE) &&
	test "$(state_of r $run)" = approved &&
	test "$(git -C r rev-parse main)" = "$tip" &&
	test "$(sqlite3 $DB "SELECT status FROM train_cars WHERE run_id = '"'"'$run'"'"'")" = green &&
	grep -c "/runs/$run/train\$" gate-runs >count && test "$(cat count)" = 1 &&
	sluice -C r status >st &&
	test_grep "^target main: frozen (release 2.0): lands nothing, tests go on" st &&
	test_grep "wait: frozen (release 2.0)" st &&
	sluice -C r status --json >sj &&
	test "$(jq -r .target.frozen.reason sj)" = "release 2.0" &&
	test "$(jq -r .target.frozen.until sj)" = null &&
	test "$(jq -r .target.frozen.allow_urgent sj)" = false &&
	sluice -C r status --json $run >rj &&
	jq -r .reason rj | grep -q "wait: frozen (release 2.0)\$" &&
	sluice -C r queue --explain >q &&
	test_grep "ONE" q && test_grep "wait: frozen (release 2.0)" q
'

test_expect_success 'another frozen tick tests nothing again and lands nothing' '
	run=$(run_of r ONE) && tip=$(git -C r rev-parse main) &&
	sluice -C r tick >out 2>&1 &&
	test "$(state_of r $run)" = approved &&
	test "$(git -C r rev-parse main)" = "$tip" &&
	test "$(grep -c "/runs/$run/train\$" gate-runs)" = 1
'

test_expect_success 'unfreeze: the next tick lands the tested car, once' '
	run=$(run_of r ONE) &&
	sluice -C r unfreeze >out &&
	test_grep "unfroze .main." out &&
	sluice -C r status --json >sj && test "$(jq -r .target.frozen sj)" = null &&
	sluice -C r status >st && test_grep -v "^target main: frozen" st &&
	sluice -C r tick >out 2>&1 &&
	test "$(state_of r $run)" = merged &&
	test "$(git -C r log --first-parent --merges --format=%s main | grep -c "^Merge ONE")" = 1 &&
	test "$(jq -r .green r/.system/runs/$run/train.json)" = true &&
	test "$(jq -r .commit r/.system/runs/$run/train.json)" = "$(git -C r rev-parse main)" &&
	test "$(grep -c "/runs/$run/train\$" gate-runs)" = 1 &&
	sluice -C r audit &&
	sluice -C r unfreeze >out && test_grep "was not frozen" out
'

test_expect_success '--until in the past freezes nothing; the car lands' '
	echo "echo two >two.txt" >"$BUILDERS/TWO.sh" &&
	sluice -C r freeze --until 2020-01-01T00:00Z -m "long ago" >out &&
	test_grep "is past: nothing frozen" out &&
	sluice -C r status --json >sj && test "$(jq -r .target.frozen sj)" = null &&
	wo r TWO && sluice -C r tick >out 2>&1 &&
	test "$(state_of r $(run_of r TWO))" = merged
'

test_expect_success '--until in the past leaves a freeze in place and says so' '
	sluice -C r freeze -m "in place" >/dev/null &&
	sluice -C r freeze --until 2020-01-01T00:00Z -m "long ago" >out &&
	test_grep "is past: nothing frozen" out &&
	test_grep "^.main. stays frozen (in place): .sluice unfreeze. ends the freeze in place" out &&
	sluice -C r freeze --until 2020-01-01T00:00Z -m "long ago" --json >pj &&
	test "$(jq -r .frozen pj)" = true && test "$(jq -r .holding.reason pj)" = "in place" &&
	sluice -C r status --json >sj && test "$(jq -r .target.frozen.reason sj)" = "in place" &&
	sluice -C r unfreeze >/dev/null &&
	sluice -C r freeze --until 2020-01-01T00:00Z -m "long ago" >out &&
	test_grep -v "stays frozen" out
'

test_expect_success '--until in the future freezes until then, its end in status; a zone offset is honoured' '
	sluice -C r freeze --until 2099-06-01T12:00:00+02:00 --allow-urgent -m "quarter end" >out &&
	test_grep "until 2099-06-01T10:00:00.000Z" out &&
	sluice -C r status --json >sj &&
	test "$(jq -r .target.frozen.until sj)" = 2099-06-01T10:00:00.000Z &&
	test "$(jq -r .target.frozen.allow_urgent sj)" = true &&
	sluice -C r status >st &&
	test_grep "frozen (quarter end) until 2099-06-01T10:00:00.000Z, urgent work lands" st &&
	sluice -C r freeze -m "replaced" >out &&
	sluice -C r status --json >sj && test "$(jq -r .target.frozen.reason sj)" = replaced &&
	test "$(jq -r .target.frozen.until sj)" = null &&
	sluice -C r unfreeze >/dev/null
'

test_expect_success 'the freeze as a window past a stored --until: a freeze that ended holds nothing' '
	sqlite3 $DB "INSERT INTO freezes (target, reason, until_ms, allow_urgent, at_ms) VALUES (
		'"'"'refs/heads/main'"'"', '"'"'ended'"'"', 1000, 0, 0)" &&
	sluice -C r status --json >sj && test "$(jq -r .target.frozen sj)" = null &&
	sluice -C r unfreeze >/dev/null
'

test_expect_success 'bad inputs: no -m, a TIME without a zone, a date, a duration, extra words' '
	test_expect_failure_code 2 sluice -C r freeze >out 2>&1 &&
	test_grep "say why with -m REASON" out &&
	test_expect_failure_code 2 sluice -C r freeze -m "" >out 2>&1 &&
	test_grep "say why with -m REASON" out &&
	for t in 2026-11-28T18:00 2026-11-28 18:00Z 2h tomorrow 2026-13-01T00:00Z \
		2026-02-30T00:00Z 2026-11-28T25:00Z 2026-11-28T18:00+1 "2026-11-28T18:00 Europe/Berlin"; do
		test_expect_failure_code 2 sluice -C r freeze --until "$t" -m x >out 2>&1 &&
		test_grep "is not an ISO 8601 time with a zone" out &&
		test_grep "a time without a zone, a date alone, a duration or a zone name is refused" out ||
		return 1
	done &&
	test_expect_failure_code 2 sluice -C r freeze -m release now >out 2>&1 &&
	test_grep "quote the reason" out &&
	test_expect_failure_code 2 sluice -C r freeze -m "two
lines" >out 2>&1 &&
	test_grep "one line" out &&
	test_expect_failure_code 2 sluice -C r unfreeze now >out 2>&1 &&
	sluice -C r status --json >sj && test "$(jq -r .target.frozen sj)" = null
'

test_expect_success 'freeze --help and the command list name it' '
	sluice freeze --help >out && test_grep "usage: sluice freeze" out &&
	test_grep "ISO 8601" out &&
	sluice --help >out && test_grep "^  freeze " out && test_grep "^  unfreeze " out
'

test_done
