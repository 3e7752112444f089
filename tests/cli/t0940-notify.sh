#!/bin/sh
# Notifications (docs/config.md, "Notifications"): notify.command and
# notify.url hear of every move of a run into merged, merge_conflict,
# rejected and failed, with the JSON of schema/notify-event.schema.json; a
# notifier that fails, hangs or does not answer never holds the queue up nor
# changes a tick's exit status, is tried again when its wait is over (the
# clock moved with SLUICE_TEST_CLOCK_AHEAD, t1121 has the waits) notify.tries
# times and then given up; an event survives a tick killed before delivering
# it; the reviewer's token never reaches a notifier. Real processes, a real
# HTTP server on loopback (written here, in Python).
. "$(dirname "$0")/lib.sh"

PY=""
for p in python3 /usr/bin/python3; do
	if command -v $p >/dev/null 2>&1 && $p -c "import jsonschema" 2>/dev/null; then
		PY=$p
		break
	fi
done
[ -n "$PY" ] || test_skip_all "no python3 with jsonschema (scripts/deps.sh installs python3-jsonschema)"
test_skip_unless_tool setsid

TOKEN="notify-sekrit-$$-do-not-leak"
export REVIEW_TOKEN="$TOKEN"
SCHEMA="$SLUICE_SOURCE_DIR/schema/notify-event.schema.json"

# The loopback server: records each POST as REQ/NNNN.body and NNNN.headers,
# then answers as the file MODE says: a status code (default 200), or
# "hang" (never answers).
cat >"$TRASH/server.py" <<'EOF'
import http.server, os, sys, threading, time
port_file, req_dir, mode_file = sys.argv[1:4]
lock = threading.Lock()
count = [0]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('Content-Length', '0')))
        with lock:
            count[0] += 1
            name = os.path.join(req_dir, '%04d' % count[0])
        with open(name + '.headers', 'w') as f:
            f.write('POST %s\n' % self.path)
            for k, v in self.headers.items():
                f.write('%s: %s\n' % (k, v))
        with open(name + '.body', 'wb') as f:
            f.write(body)
        try:
            mode = open(mode_file).read().strip() or '200'
        except OSError:
            mode = '200'
        if mode == 'hang':
            time.sleep(600)
            return
        self.send_response(int(mode))
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', '2')
        self.end_headers()
        self.wfile.write(b'{}')
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
srv.daemon_threads = True
threading.Timer(600, lambda: os._exit(0)).start()
with open(port_file + '.tmp', 'w') as f:
    f.write(str(srv.server_address[1]))
os.rename(port_file + '.tmp', port_file)
srv.serve_forever()
EOF

# Validate every event file given against the schema and print one line per
# event, "EVENT RUN WORK-ORDER COMMIT", sorted.
cat >"$TRASH/events.py" <<'EOF'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
out = []
for path in sys.argv[2:]:
    ev = json.load(open(path))
    jsonschema.validate(ev, schema)
    assert ev['state'] == ev['event'], path
    out.append('%s %s %s %s' % (ev['event'], ev['run'], ev['work_order'], ev['commit']))
print('\n'.join(sorted(out)))
EOF

# The command notifier: notifier.sh DIR records the event on its stdin as
# DIR/ev.*.json and its environment as the .env beside it; then it does
# what DIR/mode says: "fail" exits 1, "hang" waits for a child sleeping
# 1000 s (their pids in DIR/hang.pids).
cat >"$TRASH/notifier.sh" <<'EOF'
d=$1
f=$(mktemp "$d/ev.XXXXXX")
cat >"$f.json"
env >"$f.env"
rm -f "$f"
case "$(cat "$d/mode" 2>/dev/null)" in
fail) echo "the notifier failed on purpose" >&2; exit 1 ;;
hang) sleep 1000 & echo "$$ $!" >>"$d/hang.pids"; wait ;;
esac
exit 0
EOF

mkdir -p "$TRASH/http/req"
$PY "$TRASH/server.py" "$TRASH/http/port" "$TRASH/http/req" "$TRASH/http/mode" \
	>"$TRASH/http/log" 2>&1 &
SERVER_PID=$!
test_when_finished "kill $SERVER_PID 2>/dev/null"
# hanging notifiers a failed test left behind (each leads its process group)
test_when_finished 'cat "$TRASH"/c*/hang.pids 2>/dev/null | while read -r g c; do kill -9 -$g $c 2>/dev/null; done'
# its port, once it listens (or it died)
wait_until '[ -s "$TRASH/http/port" ] || ! kill -0 $SERVER_PID 2>/dev/null' || :
URL="http://127.0.0.1:$(cat "$TRASH/http/port" 2>/dev/null)/hook"

# events DIR-OR-FILES...: the event lines of the files (see events.py).
events() {
	$PY "$TRASH/events.py" "$SCHEMA" "$@"
}

# 1 when process PID is gone: no such process, or a zombie not reaped yet.
gone() { ! proc_alive "$1"; }

# The HTTP requests received so far.
requests() {
	ls "$TRASH/http/req" | grep -c "\.body$"
}

# The notify section for a command notifier writing into DIR, and the URL.
notify_config() { # DIR [more lines...]
	_d=$1
	shift
	mkdir -p "$_d"
	printf '%s\n' "notify:" "  command: [sh, $TRASH/notifier.sh, $_d]" "$@"
}

test_expect_success 'setup: the loopback server answers' '
	test -s "$TRASH/http/port" &&
	printf "%s\n" "echo A >>lines.txt" >"$BUILDERS/dummy.sh"
'

cat >"$BUILDERS/A.sh" <<'EOF'
sed -i 5s/.*/five-by-A/ lines.txt
EOF
cat >"$BUILDERS/B.sh" <<'EOF'
sed -i 5s/.*/five-by-B/ lines.txt
EOF
printf '%s\n' 'echo f >f.txt' 'exit 1' >"$BUILDERS/F.sh"
printf '%s\n' 'echo r >r.txt' >"$BUILDERS/R.sh"

test_expect_success 'four events reach the command and the URL, as the schema says' '
	sluice_repo r "merge:" "  resolver: none" "reviewer:" "  token_env: REVIEW_TOKEN" \
		"$(notify_config "$TRASH/c1" "  url: $URL")" &&
	sluice -C r check &&
	seq 1 10 >r/lines.txt && git -C r add lines.txt && git -C r commit -q -m lines &&
	wo r A && wo r B && wo r F && wo r R &&
	sluice -C r tick --jobs 4 >out &&
	ra=$(run_of r A) && rb=$(run_of r B) && rf=$(run_of r F) && rr=$(run_of r R) &&
	test "$(state_of r $ra)" = awaiting_review &&
	test "$(state_of r $rb)" = awaiting_review &&
	test "$(state_of r $rr)" = awaiting_review &&
	test "$(state_of r $rf)" = failed &&
	sluice -C r approve $ra >/dev/null && sluice -C r approve $rb >/dev/null &&
	sluice -C r reject $rr -m "not wanted" >/dev/null &&
	settle r &&
	test "$(state_of r $rr)" = rejected &&
	# the train lands one of A and B (either), the other conflicts
	if test "$(state_of r $ra)" = merged; then
		won="$ra A" lost="$rb B"
	else
		won="$rb B" lost="$ra A"
	fi &&
	test "$(state_of r ${lost% *})" = merge_conflict &&
	m=$(git -C r rev-parse main) &&
	{
		echo "failed $rf F None" &&
		echo "merge_conflict $lost None" &&
		echo "merged $won $m" &&
		echo "rejected $rr R None"
	} | sort >expect &&
	events "$TRASH"/c1/*.json >cmd.events &&
	test_cmp expect cmd.events &&
	events "$TRASH"/http/req/*.body >url.events &&
	test_cmp expect url.events
'

test_expect_success 'the event says what happened' '
	ra=$(run_of r A) && rr=$(run_of r R) &&
	f=$(grep -l "\"rejected\"" "$TRASH"/c1/*.json) &&
	test_grep "not wanted" $f &&
	test_grep "\"title\":\"Work order R\"" $f &&
	test_grep "\"from\":\"awaiting_review\"" $f &&
	test_grep "\"target\":\"refs/heads/main\"" $f &&
	test_grep "\"repo\":\"$(cd r && pwd -P)\"" $f &&
	env=${f%.json}.env &&
	test_grep "^SLUICE_EVENT=rejected$" $env &&
	test_grep "^SLUICE_RUN_ID=$rr$" $env &&
	test_grep "^SLUICE_WORK_ORDER_ID=R$" $env &&
	test_grep "Content-Type: application/json" "$TRASH"/http/req/0001.headers &&
	test_grep "^POST /hook$" "$TRASH"/http/req/0001.headers
'

test_expect_success 'the reviewer token is in no notifier environment' '
	env | grep -q "^REVIEW_TOKEN=$TOKEN$" &&
	ls "$TRASH"/c1/*.env >envs && test "$(wc -l <envs)" = 4 &&
	! grep -l "$TOKEN" "$TRASH"/c1/*.env &&
	! grep -l "^REVIEW_TOKEN=" "$TRASH"/c1/*.env &&
	! grep -l "$TOKEN" "$TRASH"/http/req/*
'

test_expect_success 'delivered events are never sent again' '
	n=$(requests) &&
	sluice -C r tick >out && sluice -C r tick >out &&
	test "$(requests)" = "$n" &&
	ls "$TRASH"/c1/*.json >list && test "$(wc -l <list)" = 4
'

test_expect_success 'a failing command and a URL answering 500: the queue goes on, then given up' '
	rm -f "$TRASH"/http/req/* && echo 500 >"$TRASH/http/mode" &&
	sluice_repo f "$(approve_reviewer_config)" \
		"$(notify_config "$TRASH/c2" "  url: $URL" "  tries: 2")" &&
	echo fail >"$TRASH/c2/mode" &&
	printf "%s\n" "echo m1 >m1.txt" >"$BUILDERS/M1.sh" &&
	printf "%s\n" "echo m2 >m2.txt" >"$BUILDERS/M2.sh" &&
	wo f M1 && sluice -C f tick >out 2>err &&
	test "$(state_of f $(run_of f M1))" = merged &&
	test_grep "notification .merged. of run $(run_of f M1) failed (try 1 of 2)" err &&
	test_grep "the notifier failed on purpose" err &&
	test_grep "HTTP 500" err &&
	wo f M2 && SLUICE_TEST_CLOCK_AHEAD=1m sluice -C f tick >out 2>err &&
	test "$(state_of f $(run_of f M2))" = merged &&
	test_grep "notification .merged. of run $(run_of f M1) given up after 2 tries" err &&
	SLUICE_TEST_CLOCK_AHEAD=2m sluice -C f tick >out 2>err &&
	test_grep "notification .merged. of run $(run_of f M2) failed (try 1 of 2)" err &&
	SLUICE_TEST_CLOCK_AHEAD=3m sluice -C f tick >out 2>err &&
	test_grep "notification .merged. of run $(run_of f M2) given up after 2 tries" err &&
	test "$(requests)" = 4 &&
	ls "$TRASH"/c2/*.json >list && test "$(wc -l <list)" = 4 &&
	SLUICE_TEST_CLOCK_AHEAD=4m sluice -C f tick >out 2>err && test_grep -v "notification" err &&
	test "$(requests)" = 4
'

test_expect_success 'a failing notifier leaves the tick its own exit status' '
	printf "%s\n" "exit 1" >"$BUILDERS/X.sh" &&
	wo f X && SLUICE_TEST_CLOCK_AHEAD=5m sluice -C f tick >out 2>err &&
	test "$(state_of f $(run_of f X))" = failed &&
	test_grep "notification .failed. of run $(run_of f X) failed (try 1 of 2)" err
'

test_expect_success 'a hanging command and a URL that never answers: killed, retried, given up' '
	rm -f "$TRASH"/http/req/* && echo hang >"$TRASH/http/mode" &&
	sluice_repo h "$(approve_reviewer_config)" \
		"$(notify_config "$TRASH/c3" "  url: $URL" "  tries: 2" "  timeout: 5s")" &&
	echo hang >"$TRASH/c3/mode" &&
	printf "%s\n" "echo h1 >h1.txt" >"$BUILDERS/H1.sh" &&
	printf "%s\n" "echo h2 >h2.txt" >"$BUILDERS/H2.sh" &&
	wo h H1 && sluice -C h tick >out 2>err &&
	h1=$(run_of h H1) &&
	test "$(state_of h $h1)" = merged &&
	test_grep "notification .merged. of run $h1 failed (try 1 of 2)" err &&
	test_grep "timed out" err &&
	read -r sh child <"$TRASH/c3/hang.pids" &&
	gone $sh && gone $child &&
	wo h H2 && SLUICE_TEST_CLOCK_AHEAD=1m sluice -C h tick >out 2>err &&
	h2=$(run_of h H2) &&
	test "$(state_of h $h2)" = merged &&
	test_grep "notification .merged. of run $h1 given up after 2 tries" err &&
	test_grep -v "of run $h2" err &&
	test "$(requests)" = 2 &&
	while read -r sh child; do
		gone $sh && gone $child || return 1
	done <"$TRASH/c3/hang.pids" &&
	: >"$TRASH/c3/mode" && echo 200 >"$TRASH/http/mode" &&
	SLUICE_TEST_CLOCK_AHEAD=2m sluice -C h tick >out 2>err &&
	test_grep -v notification err &&
	events "$(grep -l "$h2" "$TRASH"/http/req/*.body)" >ev &&
	test_grep "^merged $h2 H2 " ev
'

test_expect_success 'the command works, the URL hangs: the command hears each event once, the URL later' '
	rm -f "$TRASH"/http/req/* && echo hang >"$TRASH/http/mode" &&
	sluice_repo p "$(approve_reviewer_config)" \
		"$(notify_config "$TRASH/c7" "  url: $URL" "  tries: 3" "  timeout: 5s")" &&
	printf "%s\n" "echo p1 >p1.txt" >"$BUILDERS/P1.sh" &&
	printf "%s\n" "echo p2 >p2.txt" >"$BUILDERS/P2.sh" &&
	wo p P1 && sluice -C p tick >out 2>err &&
	p1=$(run_of p P1) &&
	test_grep "notification .merged. of run $p1 failed (try 1 of 3): notify.url" err &&
	wo p P2 && SLUICE_TEST_CLOCK_AHEAD=1m sluice -C p tick >out 2>err &&
	p2=$(run_of p P2) &&
	test "$(state_of p $p2)" = merged &&
	test_grep "notification .merged. of run $p1 failed (try 2 of 3): notify.url" err &&
	test_grep -v "of run $p2" err &&
	ls "$TRASH"/c7/*.json >list && test "$(wc -l <list)" = 2 &&
	test "$(requests)" = 2 &&
	echo 200 >"$TRASH/http/mode" &&
	SLUICE_TEST_CLOCK_AHEAD=3m sluice -C p tick >out 2>err && test_grep -v notification err &&
	SLUICE_TEST_CLOCK_AHEAD=4m sluice -C p tick >out 2>err &&
	test "$(requests)" = 4 &&
	ls "$TRASH"/c7/*.json >list && test "$(wc -l <list)" = 2 &&
	events "$TRASH"/c7/*.json >cmd.ev &&
	events $(grep -l "\"seq\"" "$TRASH"/http/req/*.body | tail -n 2) >url.ev &&
	test_cmp cmd.ev url.ev
'

test_expect_success 'a URL where nobody listens: the queue goes on' '
	rm -f "$TRASH"/http/req/* &&
	$PY -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])" >port &&
	sluice_repo u "$(approve_reviewer_config)" "notify:" \
		"  url: http://127.0.0.1:$(cat port)/hook" "  tries: 1" &&
	printf "%s\n" "echo u >u.txt" >"$BUILDERS/U.sh" &&
	wo u U && sluice -C u tick >out 2>err &&
	test "$(state_of u $(run_of u U))" = merged &&
	test_grep "notification .merged. of run $(run_of u U) given up after 1 try" err
'

test_expect_success 'a tick killed after a landing, before delivering: the next tick delivers it once' '
	rm -f "$TRASH"/http/req/* && echo 200 >"$TRASH/http/mode" &&
	sluice_repo k "$(approve_reviewer_config)" "$(notify_config "$TRASH/c4" "  url: $URL")" &&
	printf "%s\n" "echo k >k.txt" >"$BUILDERS/K.sh" &&
	wo k K &&
	FAULT_GROUP=1 fault_fire merge.after_store out -C k tick &&
	rk=$(run_of k K) &&
	test "$(state_of k $rk)" = merged &&
	! ls "$TRASH"/c4/*.json 2>/dev/null &&
	test "$(requests)" = 0 &&
	sluice -C k tick >out 2>err &&
	sluice -C k tick >out 2>err &&
	events "$TRASH"/c4/*.json >ev &&
	echo "merged $rk K $(git -C k rev-parse main)" >expect &&
	test_cmp expect ev &&
	events "$TRASH"/http/req/*.body >ev &&
	test_cmp expect ev
'

test_expect_success 'a tick killed while its notifier hangs: the next tick ends that notifier, delivers again' '
	sluice_repo d "$(approve_reviewer_config)" \
		"$(notify_config "$TRASH/c5" "  timeout: 10m" "  tries: 3")" &&
	echo hang >"$TRASH/c5/mode" &&
	printf "%s\n" "echo d >d.txt" >"$BUILDERS/D.sh" &&
	wo d D &&
	{ "$SLUICE" -C d tick >out 2>err & } &&
	tick=$! &&
	test_when_finished "kill -9 $tick 2>/dev/null" &&
	i=0 && while [ ! -s "$TRASH/c5/hang.pids" ] && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done &&
	kill -9 $tick && { wait $tick; test $? = 137; } &&
	read -r sh child <"$TRASH/c5/hang.pids" &&
	! gone $sh && ! gone $child &&
	: >"$TRASH/c5/mode" &&
	sluice -C d tick >out 2>err &&
	gone $sh && gone $child &&
	sluice -C d tick >out 2>err &&
	rd=$(run_of d D) &&
	events "$TRASH"/c5/*.json >ev &&
	m=$(git -C d rev-parse main) &&
	printf "merged $rd D $m\nmerged $rd D $m\n" >expect &&
	test_cmp expect ev
'

test_expect_success 'events from before a notifier was configured are not replayed' '
	sluice_repo n "$(approve_reviewer_config)" &&
	printf "%s\n" "echo n >n.txt" >"$BUILDERS/N.sh" &&
	wo n N && sluice -C n tick >out 2>err &&
	test "$(state_of n $(run_of n N))" = merged &&
	notify_config "$TRASH/c6" >>n/.system/config.yaml &&
	sluice -C n check &&
	sluice -C n tick >out 2>err &&
	! ls "$TRASH"/c6/*.json 2>/dev/null
'

test_done
