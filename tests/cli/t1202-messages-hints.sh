#!/bin/sh
# Messages (issue 26): libyaml's raw syntax errors come with a hint for the
# two usual slips (a value that starts with a quote and goes on after it;
# ": " inside a plain value), a mistyped command or config key gets "did
# you mean", a URL whose port is no number is refused, and a failed run's
# reason says what failed on which attempt once.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup' '
	sluice_repo repo &&
	cp repo/.system/config.yaml config.orig
'

test_expect_success 'a value that starts with a quote and goes on: the hint says to quote it whole' '
	mkdir -p repo/work_orders &&
	printf -- "---\nid: Q1\ntitle: \"Fix\" the parser\n---\nx\n" >repo/work_orders/q1.md &&
	test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
	test_grep "^work_orders/q1.md:3:1: YAML syntax error: did not find expected key" out &&
	test_grep "the value of .title. starts with a quote, so it ends at the closing quote" out &&
	test_grep "quote the whole value (title: .\"Fix\" the parser.)" out &&
	test_grep -v "; fix the front matter" out
'

test_expect_success 'a plain value with ": " in it: the hint says to put it in quotes' '
	printf -- "---\nid: Q2\ntitle: Fix: the parser\n---\nx\n" >repo/work_orders/q1.md &&
	test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
	test_grep "^work_orders/q1.md:3:1: YAML syntax error: mapping values are not allowed" out &&
	test_grep "the value of .title. holds .: ., which YAML reads as the start of another key; put the whole value in quotes (title: \"Fix: the parser\")" out
'

test_expect_success 'another YAML slip keeps the plain advice' '
	printf -- "---\nid: Q3\ntitle: [a, b\n---\nx\n" >repo/work_orders/q1.md &&
	test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
	test_grep "YAML syntax error: .*; fix the front matter" out &&
	rm repo/work_orders/q1.md
'

test_expect_success 'a mistyped command: did you mean' '
	test_expect_failure_code 2 sluice tikc >out 2>&1 &&
	test_grep "^sluice: .tikc. is not a sluice command; did you mean .tick.? See .sluice --help.$" out &&
	test_expect_failure_code 2 sluice stauts >out 2>&1 &&
	test_grep "did you mean .status.?" out &&
	test_expect_failure_code 2 sluice merge >out 2>&1 &&
	test_grep "did you mean .merge-preview.?" out &&
	test_expect_failure_code 2 sluice frobnicate >out 2>&1 &&
	test_grep "^sluice: .frobnicate. is not a sluice command; see .sluice --help.$" out
'

test_expect_success 'a mistyped config key: did you mean, with the known keys' '
	cp config.orig repo/.system/config.yaml &&
	printf "%s\n" "notify:" "  comand: [true]" >>repo/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
	test_grep "unknown key .comand. in notify; did you mean .command.? (known keys: command, url" out &&
	cp config.orig repo/.system/config.yaml &&
	printf "%s\n" "taget: main" >>repo/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
	test_grep "unknown key .taget.; did you mean .target.?" out &&
	cp config.orig repo/.system/config.yaml &&
	printf "%s\n" "colour: blue" >>repo/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
	test_grep "unknown key .colour.; known keys: target" out
'

test_expect_success 'a URL whose port is no number is refused' '
	for url in http://127.0.0.1:80a/hook http://127.0.0.1:/hook http://h:99999/ \
		"http://u:p@[::1]:x/"; do
		cp config.orig repo/.system/config.yaml &&
		printf "%s\n" "notify:" "  url: $url" >>repo/.system/config.yaml &&
		test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
		test_grep "notify.url .* has a port that is not a number from 1 to 65535" out ||
			return 1
	done &&
	test_grep -v "u:p" out &&
	for url in http://127.0.0.1:8080/hook https://u:p@example.com/x "http://[::1]:9/"; do
		cp config.orig repo/.system/config.yaml &&
		printf "%s\n" "notify:" "  url: $url" >>repo/.system/config.yaml &&
		sluice -C repo check >out 2>&1 || { cat out; return 1; }
	done &&
	cp config.orig repo/.system/config.yaml &&
	printf "%s\n" "reviewer:" "  mode: http" "  url: http://localhost:port/" >>repo/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
	test_grep "reviewer.url .* has a port that is not a number" out
'

test_expect_success 'serve --listen with a port that is no number is refused' '
	test_expect_failure_code 2 sluice -C repo serve --listen 127.0.0.1:http >out 2>&1 &&
	test_grep "listen wants ADDR:PORT" out
'

test_expect_success 'a failed run says what failed on which attempt once' '
	cp config.orig repo/.system/config.yaml &&
	printf "%s\n" "gates:" "  test: [false]" >>repo/.system/config.yaml &&
	echo "echo x >x.txt" >"$BUILDERS/F1.sh" &&
	wo repo F1 &&
	sluice -C repo tick >out &&
	run=$(run_of repo F1) &&
	test "$(state_of repo $run)" = failed &&
	sluice -C repo status $run >st &&
	test_grep "gate .test. failed on attempt 1; no retry rules" st &&
	test "$(grep -o "failed on attempt 1" st | wc -l)" = 1
'

test_done
