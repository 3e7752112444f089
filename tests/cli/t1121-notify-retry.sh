#!/bin/sh
# Notifications are tried again over time, not over ticks (docs/config.md,
# "Notifications"): a failed event waits 30 s, the wait doubling to 1 h,
# until notify.retry_for after it; a URL down for several ticks, then up,
# gets every event, in order, once each. `sluice notify` lists the outbox,
# `--replay SEQ` sends one again; an unknown SEQ is an error. The clock is
# moved with SLUICE_TEST_CLOCK_AHEAD (core/time.h, tests only), never slept
# on. Real HTTP on loopback: a server started late on a port chosen early.
. "$(dirname "$0")/lib.sh"

PY=""
for p in python3 /usr/bin/python3; do
	if command -v $p >/dev/null 2>&1 && $p -c "import jsonschema" 2>/dev/null; then
		PY=$p
		break
	fi
done
[ -n "$PY" ] || test_skip_all "no python3 with jsonschema (scripts/deps.sh installs python3-jsonschema)"

# The server: on port $2 (address reused), each POST's body as REQ/NNNN.body, answered 200.
cat >"$TRASH/server.py" <<'PY'
import http.server, os, sys, threading
port, req_dir = int(sys.argv[1]), sys.argv[2]
lock = threading.Lock()
count = [len([f for f in os.listdir(req_dir) if f.endswith(".body")])]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('Content-Length', '0')))
        with lock:
            count[0] += 1
            with open(os.path.join(req_dir, '%04d.body' % count[0]), 'wb') as f:
                f.write(body)
        self.send_response(200)
        self.send_header('Content-Length', '0')
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer.allow_reuse_address = True
srv = http.server.ThreadingHTTPServer(('127.0.0.1', port), H)
threading.Timer(600, lambda: os._exit(0)).start()
open(os.path.join(req_dir, '..', 'up'), 'w').close()
srv.serve_forever()
PY

# "RUN SEQ" of each request received, in the order received.
received() {
	for _f in "$TRASH"/req/*.body; do
		[ -e "$_f" ] || continue
		$PY -c "import json, sys; e = json.load(open(sys.argv[1])); print(e['run'], e['seq'])" "$_f" || return 1
	done
}

# tick_at AHEAD REPO: one tick with the clock AHEAD ahead; stderr in err.
tick_at() {
	SLUICE_TEST_CLOCK_AHEAD=$1 sluice -C $2 tick >out 2>err
}

for w in E1 E2 E3 E4; do
	printf "%s\n" "echo $w >$w.txt" >"$BUILDERS/$w.sh"
done

test_expect_success 'setup: a port where nobody listens yet' '
	mkdir req &&
	$PY -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])" >port &&
	sluice_repo r "$(approve_reviewer_config)" "notify:" \
		"  url: http://127.0.0.1:$(cat port)/hook" &&
	sluice -C r check
'

test_expect_success 'the URL down: a failed event waits 30s, then 1m, and holds the later ones back' '
	wo r E1 && tick_at 1s r &&
	test "$(state_of r $(run_of r E1))" = merged &&
	test_grep "notification .merged. of run $(run_of r E1) failed (try 1): .*; the first tick after 30.0s tries again" err &&
	wo r E2 && tick_at 10s r &&
	test "$(state_of r $(run_of r E2))" = merged &&
	test_grep -v "notification" err &&
	tick_at 40s r &&
	test_grep "of run $(run_of r E1) failed (try 2): .*after 1m00s" err &&
	test_grep -v "of run $(run_of r E2)" err &&
	wo r E3 && tick_at 60s r &&
	test_grep -v "notification" err &&
	tick_at 110s r &&
	test_grep "of run $(run_of r E1) failed (try 3): .*after 2m00s" err &&
	test_grep -v "of run $(run_of r E2)" err &&
	sluice -C r notify >list &&
	test "$(grep -c " pending " list)" = 3 &&
	test_grep "3 failed tries, next after" list
'

test_expect_success 'the URL up: every event arrives, in order, once each' '
	{ $PY "$TRASH/server.py" $(cat port) "$TRASH/req" >server.log 2>&1 & } &&
	echo $! >server.pid &&
	i=0 && while [ ! -e up ] && [ $i -lt 6000 ]; do sleep 0.05; i=$((i + 1)); done &&
	test -e up &&
	i=0 && while ! $PY -c "import socket; socket.create_connection((\"127.0.0.1\", $(cat port)), 1)" 2>/dev/null && [ $i -lt 6000 ]; do sleep 0.05; i=$((i + 1)); done &&
	tick_at 1h r &&
	test_grep -v "notification" err &&
	received >got &&
	{ for w in E1 E2 E3; do echo "$(run_of r $w)"; done; } >expect &&
	cut -d" " -f1 got >runs && test_cmp expect runs &&
	cut -d" " -f2 got >seqs && sort -n seqs >sorted && test_cmp sorted seqs &&
	tick_at 2h r && tick_at 3h r &&
	received >again && test_cmp got again &&
	sluice -C r notify >list &&
	test "$(grep -c " delivered " list)" = 3
'
test_when_finished 'kill $(cat "$TRASH/server.pid") 2>/dev/null'

test_expect_success 'sluice notify --json: the outbox, as its schema says' '
	sluice -C r notify --json >list.json &&
	$PY -c "
import json, sys, jsonschema
v = json.load(open(\"list.json\"))
jsonschema.validate(v, json.load(open(sys.argv[1])))
assert [e[\"state\"] for e in v] == [\"delivered\"] * 3, v
assert [e[\"sent\"] for e in v] == [[\"url\"]] * 3, v
assert v[0][\"tries\"] == 3 and v[1][\"tries\"] == 0, v
" "$SLUICE_SOURCE_DIR/schema/notify-list.schema.json"
'

test_expect_success 'sluice notify --replay SEQ sends that event again, now' '
	seq2=$(sed -n 2p seqs) &&
	sluice -C r notify --replay $seq2 >out &&
	test_grep "notification $seq2 sent again" out &&
	received >after &&
	test "$(wc -l <after)" = 4 &&
	tail -n 1 after >last &&
	echo "$(run_of r E2) $seq2" >expect && test_cmp expect last &&
	tick_at 4h r && received >again && test_cmp after again
'

test_expect_success 'hostile: --replay of an unknown or malformed SEQ errors clearly' '
	test_expect_failure_code 1 sluice -C r notify --replay 999999 >out 2>err &&
	test_grep "no notification has seq 999999; .sluice notify. lists them" err &&
	test_expect_failure_code 2 sluice -C r notify --replay abc >out 2>err &&
	test_grep "replay takes an event.s seq" err &&
	test_expect_failure_code 2 sluice -C r notify --replay -5 >out 2>err &&
	test_expect_failure_code 2 sluice -C r notify --replay 99999999999999999999 >out 2>err &&
	received >again && test_cmp after again
'

test_expect_success 'an event not delivered within notify.retry_for is given up; replay still sends it' '
	kill $(cat server.pid) && rm -f up &&
	i=0 && while $PY -c "import socket; socket.create_connection((\"127.0.0.1\", $(cat port)), 1)" 2>/dev/null && [ $i -lt 6000 ]; do sleep 0.05; i=$((i + 1)); done &&
	printf "%s\n" "  retry_for: 2h" >>r/.system/config.yaml &&
	wo r E4 && tick_at 5h r &&
	e4=$(run_of r E4) &&
	test_grep "of run $e4 failed (try 1)" err &&
	tick_at 6h r && test_grep "of run $e4 failed (try 2)" err &&
	tick_at 421m r && test_grep "of run $e4 given up after 3 tries" err &&
	tick_at 9h r && test_grep -v notification err &&
	sluice -C r notify --json >list.json &&
	seq4=$($PY -c "import json; print(json.load(open(\"list.json\"))[-1][\"seq\"])") &&
	sluice -C r notify >list && test_grep "^$seq4 .* given_up " list &&
	test_expect_failure_code 1 sluice -C r notify --replay $seq4 >out 2>err &&
	test_grep "notification $seq4 (.merged. of run $e4) not sent: notify.url: POST to .http://127.0.0.1:$(cat port)/…." err &&
	{ $PY "$TRASH/server.py" $(cat port) "$TRASH/req" >server.log 2>&1 & } &&
	echo $! >server.pid &&
	i=0 && while [ ! -e up ] && [ $i -lt 6000 ]; do sleep 0.05; i=$((i + 1)); done &&
	i=0 && while ! $PY -c "import socket; socket.create_connection((\"127.0.0.1\", $(cat port)), 1)" 2>/dev/null && [ $i -lt 6000 ]; do sleep 0.05; i=$((i + 1)); done &&
	sluice -C r notify --replay $seq4 >out &&
	received >final && tail -n 1 final >last &&
	echo "$e4 $seq4" >expect && test_cmp expect last &&
	sluice -C r notify >list && test_grep "^$seq4 .* delivered " list
'

test_done
