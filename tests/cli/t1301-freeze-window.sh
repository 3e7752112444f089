#!/bin/sh
# merge.freeze (docs/config.md): windows of days and hours in a time zone in
# which the target lands nothing, built here from the current day (today and
# tomorrow, so that midnight does not end it mid-test): a window that holds
# now freezes the target with its reason (status, the run's reason), one that
# does not lets the car land. A bad window is refused by sluice check and by
# a tick, naming config.yaml and the line.
. "$(dirname "$0")/lib.sh"

echo 'echo one >one.txt' >"$BUILDERS/ONE.sh"
day() { # TZ DAYS-AHEAD: the day's name, lower case (mon .. sun)
	TZ=$1 date -d "+$2 days" +%a | tr 'A-Z' 'a-z'
}

test_expect_success 'a window that holds now (Europe/Berlin): tested, not landed, the reason shown' '
	d0=$(day Europe/Berlin 0) && d1=$(day Europe/Berlin 1) &&
	sluice_repo r "gates:" "  test: [\"true\"]" "$(approve_reviewer_config)" \
		"merge:" "  freeze:" \
		"    - {days: [$d0, $d1], from: \"00:00\", to: \"24:00\", tz: Europe/Berlin, reason: weekend}" &&
	sluice -C r check >out 2>&1 &&
	wo r ONE && tip=$(git -C r rev-parse main) &&
	sluice -C r tick >out 2>&1 &&
	run=$(run_of r ONE) &&
	test "$(state_of r $run)" = approved &&
	test "$(git -C r rev-parse main)" = "$tip" &&
	test "$(sqlite3 r/.system/sluice.db "SELECT status FROM train_cars")" = green &&
	sluice -C r status >st &&
	test_grep "^target main: frozen (weekend): lands nothing, tests go on" st &&
	test_grep "wait: frozen (weekend)" st &&
	sluice -C r status --json >sj &&
	test "$(jq -r .target.frozen.reason sj)" = weekend &&
	test "$(jq -r .target.frozen.until sj)" = null
'

test_expect_success 'sluice unfreeze does not end a window (it says so); the window gone, the car lands' '
	run=$(run_of r ONE) &&
	sluice -C r unfreeze >out &&
	test_grep "merge.freeze in the config may still freeze it" out &&
	sluice -C r tick >out 2>&1 && test "$(state_of r $run)" = approved &&
	sed -i "/freeze:/,\$d" r/.system/config.yaml &&
	sluice -C r tick >out 2>&1 &&
	test "$(state_of r $run)" = merged &&
	test "$(git -C r log --first-parent --merges --format=%s main | grep -c "^Merge ONE")" = 1 &&
	sluice -C r audit
'

test_expect_success 'a window on another day (UTC, the default zone) holds nothing: the car lands' '
	d2=$(day UTC 2) &&
	sluice_repo o "gates:" "  test: [\"true\"]" "$(approve_reviewer_config)" \
		"merge:" "  freeze:" "    - days: [$d2]" "      from: \"00:00\"" "      to: \"24:00\"" &&
	sluice -C o check >out 2>&1 &&
	wo o ONE && sluice -C o tick >out 2>&1 &&
	test "$(state_of o $(run_of o ONE))" = merged
'

test_expect_success 'bad windows: check names config.yaml, the line and what to write' '
	for bad in \
		"days: [sat], from: \"00:00\", to: \"24:00\", tz: Mars/Olympus|line 3: unknown time zone .Mars/Olympus." \
		"days: [sat], from: \"00:00\", to: \"24:00\", tz: ../../etc/passwd|unknown time zone" \
		"days: [saturday], from: \"00:00\", to: \"24:00\"|unknown day .saturday. in .merge.freeze.; use mon, tue" \
		"days: [sat], from: \"25:00\", to: \"24:00\"|from must be a time of day \"HH:MM\"" \
		"days: [sat], from: \"08:00\", to: \"24:30\"|to must be a time of day \"HH:MM\" up to \"24:00\"" \
		"days: [sat], from: \"18:00\", to: \"06:00\"|from must be before to; write a window over midnight as two windows" \
		"days: [sat], from: \"08:00\"|needs days, from and to" \
		"days: [], from: \"08:00\", to: \"09:00\"|days must name at least one day" \
		"days: [sat], from: \"08:00\", to: \"09:00\", reasn: x|unknown key .reasn. in merge.freeze; did you mean .reason." \
		"days: [sat], from: \"08:00\", to: \"09:00\", allow_urgent: maybe|allow_urgent. must be true or false"; do
		win=${bad%%|*} && want=${bad#*|} &&
		rm -rf b && sluice_repo b "merge:" "  freeze:" "    - {$win}" &&
		line=$(grep -n "^    - {" b/.system/config.yaml | cut -d: -f1) &&
		test_expect_failure_code 1 sluice -C b check >out 2>&1 &&
		test_grep "config.yaml:$line:[0-9]*: .*${want#line 3: }" out &&
		test_expect_failure_code 1 sluice -C b tick >out 2>&1 &&
		test_grep "config.yaml:$line:" out || return 1
	done &&
	rm -rf b && sluice_repo b "merge:" "  freeze: weekends" &&
	test_expect_failure_code 1 sluice -C b check >out 2>&1 &&
	test_grep "config.yaml:[0-9]*:[0-9]*: .merge.freeze. must be a list of windows" out
'

test_done
