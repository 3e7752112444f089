#!/bin/sh
# notify.url's secrets (user, password, path, query) are shown nowhere: not
# in a failed notification's warning (stderr, the cron line's tick.log), the
# outbox and the rest of .system/, `sluice log`, `show`, `status`, `check`,
# `notify`, nor their --json. A URL is shown as scheme://host[:port]/... only
# (docs/RELIABILITY.md, "Trust, round 3: notifications"). Real HTTP on
# loopback: a port where nobody listens, and a server answering 500.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool python3

# A server answering every POST with 500; its port in the file given.
cat >"$TRASH/server500.py" <<'PY'
import http.server, os, sys, threading
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get('Content-Length', '0')))
        self.send_response(500)
        self.send_header('Content-Length', '0')
        self.end_headers()
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
threading.Timer(600, lambda: os._exit(0)).start()
with open(sys.argv[1] + '.tmp', 'w') as f:
    f.write(str(srv.server_address[1]))
os.rename(sys.argv[1] + '.tmp', sys.argv[1])
srv.serve_forever()
PY

# no_secret FILE...: none of the URL's secrets in the files (its password
# "pass" as the URL has it: a reason may say "gates passed").
no_secret() {
	! grep -a -l -e :pass -e pass@ -e secret-path -e SECRET "$@"
}

# Every output of every command that could show the URL, into DIR/out.*.
all_outputs() { # REPO
	_r=$1 &&
	_run=$(run_of $_r S) &&
	for _c in "log" "log --json" "show $_run" "show --json $_run" "status" "status --json" \
		"runs --json" "check" "check --json" "queue --json" "notify" "notify --json"; do
		_f=$(echo "$_c" | tr " -" "__") &&
		{ sluice -C $_r $_c >"out.$_r.$_f" 2>&1 || :; } || return 1
	done
}

test_expect_success 'setup: a closed port and a server answering 500' '
	python3 -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])" >closed &&
	{ python3 "$TRASH/server500.py" "$TRASH/port500" >/dev/null 2>&1 & } &&
	echo $! >server.pid &&
	i=0 && while [ ! -s "$TRASH/port500" ] && [ $i -lt 6000 ]; do sleep 0.05; i=$((i + 1)); done &&
	test -s "$TRASH/port500" &&
	printf "%s\n" "echo s >s.txt" >"$BUILDERS/S.sh"
'
test_when_finished 'kill $(cat "$TRASH/server.pid") 2>/dev/null'

for case in closed 500; do
	test_expect_success "notify.url with secrets, $case: no warning, log, file or output shows them" '
		if [ '$case' = closed ]; then port=$(cat closed); else port=$(cat port500); fi &&
		sluice_repo r'$case' "$(approve_reviewer_config)" "notify:" \
			"  url: http://user:pass@127.0.0.1:$port/secret-path?key=SECRET" &&
		wo r'$case' S &&
		sluice -C r'$case' tick >>r'$case'/.system/tick.log 2>&1 &&
		test "$(state_of r'$case' $(run_of r'$case' S))" = merged &&
		SLUICE_TEST_CLOCK_AHEAD=2h sluice -C r'$case' tick --json >out.tick.json 2>err.tick &&
		SLUICE_TEST_CLOCK_AHEAD=30h sluice -C r'$case' tick >>r'$case'/.system/tick.log 2>&1 &&
		test_grep "notification .merged. of run .* failed" r'$case'/.system/tick.log &&
		test_grep "given up" r'$case'/.system/tick.log &&
		test_grep "http://127.0.0.1:$port/…" r'$case'/.system/tick.log &&
		no_secret r'$case'/.system/tick.log out.tick.json err.tick &&
		find r'$case'/.system -type f ! -name config.yaml >files &&
		no_secret $(cat files) &&
		all_outputs r'$case' &&
		no_secret out.r'$case'.*
	'
done

# A database of sluice before migration 010: a failure's message with the URL whole
# (and without what later migrations add: 011's landing intent, 012's retry round,
# 014's freezes, 015's gate runs).
cat >"$TRASH/old.sql" <<'SQL'
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
PRAGMA user_version = 9;
UPDATE notify_outbox SET last_error =
	'notify.url: POST to ''http://user:pass@127.0.0.1:1/secret-path?key=SECRET'': HTTP 500';
SQL

test_expect_success 'a database from before: its stored messages that held the URL are dropped' '
	test_skip_unless_tool sqlite3 &&
	db=rclosed/.system/sluice.db &&
	sqlite3 $db <"$TRASH/old.sql" &&
	grep -a -q SECRET $db &&
	sluice -C rclosed notify >out 2>err &&
	test "$(sqlite3 $db "PRAGMA user_version")" -ge 10 &&
	test_grep "an older message, dropped" out &&
	sqlite3 $db "VACUUM" &&
	no_secret out err $db
'

test_expect_success 'a notify.url that is not http(s): the check error hides its secrets too' '
	sluice_repo bad "notify:" "  url: ftp://user:pass@example.com/secret-path?key=SECRET" &&
	test_expect_failure_code 1 sluice -C bad check >out 2>err &&
	test_grep "notify.url .ftp://example.com/…. must start" out &&
	no_secret out err &&
	sed -i "/^notify:/,\$d" bad/.system/config.yaml &&
	printf "%s\n" "reviewer:" "  mode: http" "  url: gopher://user:pass@example.com/secret-path?key=SECRET" \
		>>bad/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C bad check >out 2>err &&
	test_grep "reviewer.url .gopher://example.com/…. must start" out &&
	no_secret out err
'

test_done
