#!/bin/sh
# sluice serve (issue 16): the review desk over real HTTP on loopback, with
# curl: the token, the Host check, CSRF and Origin on actions, --read-only,
# escaping, the artifacts it will and will not serve, the actions through
# the runner (approve, reject, retry, abandon) recorded with who did it,
# paging, the event stream. The browser tests are t1075.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool curl

# Test bodies run in subshells: a server's port, token and pid live in files.
# serve_up NAME DIR [serve args...]
serve_up() {
	_n=$1 _d=$2
	shift 2
	"$SLUICE" -C "$_d" serve "$@" >"$TRASH/$_n.out" 2>&1 &
	echo $! >"$TRASH/$_n.pid"
	_i=0
	while ! grep -q "http://" "$TRASH/$_n.out" && [ $_i -lt 3000 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	_u=$(grep -o "http://[^ ]*" "$TRASH/$_n.out" | head -n 1)
	[ -n "$_u" ] || { cat "$TRASH/$_n.out"; return 1; }
	echo "$_u" | sed 's|http://127.0.0.1:\([0-9]*\)/.*|\1|' >"$TRASH/$_n.port"
	echo "${_u##*=}" >"$TRASH/$_n.token"
}
port_of() { cat "$TRASH/$1.port"; }
token_of() { cat "$TRASH/$1.token"; }

# get NAME PATH [curl args...]: the page with the token (the password of HTTP
# Basic authentication), status in $TRASH/status.
get() {
	_n=$1 _p=$2
	shift 2
	curl -s -o "$TRASH/body" -w "%{http_code}" -u "sluice:$(token_of $_n)" "$@" \
		"http://127.0.0.1:$(port_of $_n)$_p" >"$TRASH/status"
	cat "$TRASH/body"
}

# post NAME PATH FORM [curl args...]
post() {
	_n=$1 _p=$2 _f=$3
	shift 3
	get "$_n" "$_p" --data "$_f" "$@"
}

# The event stream of server NAME after SEQ while a tick runs, into FILE.
# The stream is open when its first "retry:" came; it is read until PATTERN is in
# FILE (bounded in minutes: a guard against a hang, not a deadline).
sse_during_tick() { # NAME SEQ FILE DIR PATTERN
	curl -s -N -m 900 -u "sluice:$(token_of $1)" \
		"http://127.0.0.1:$(port_of $1)/events?since=$2" >"$3" &
	_c=$!
	wait_until "grep -q '^retry:' '$3'" 300 || { kill $_c; return 1; }
	"$SLUICE" -C "$4" tick >/dev/null
	wait_until "grep -q '$5' '$3'" 600
	kill $_c 2>/dev/null
	wait $_c
	return 0
}

status() { cat "$TRASH/status"; }
csrf_of() { sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$1" | head -n 1; }
# seen_of PAGE: what the page's forms say it showed of the run (head, attempt, state; t1130)
seen_of() {
	for _f in head attempt state; do
		printf "&%s=%s" $_f "$(sed -n "s/.*name=\"$_f\" value=\"\([^\"]*\)\".*/\1/p" "$1" | head -n 1)"
	done
}

test_expect_success 'setup: a run awaiting review, one built on the same base' '
	printf "%s\n" "echo a >a.txt" "echo built a >\"\$SLUICE_RUN_DIR/summary.md\"" >"$BUILDERS/A.sh" &&
	printf "%s\n" "echo b >b.txt" >"$BUILDERS/B.sh" &&
	printf "%s\n" "echo c >c.txt" >"$BUILDERS/X.sh" &&
	sluice_repo repo &&
	wo repo A && wo repo B "depends_on: [A]" &&
	printf "%s\n" "---" "id: X" "title: \"<script>window.pwned=1</script> & <b>bold</b>\"" "---" "Do X." >repo/work_orders/X.md &&
	sluice -C repo tick --jobs 2 >/dev/null &&
	ra=$(run_of repo A) && rx=$(run_of repo X) &&
	test "$(state_of repo $ra)" = awaiting_review &&
	echo $ra >ra && echo $rx >rx
'

test_expect_success '--help answers; bad options are usage errors' '
	sluice serve --help >help &&
	test_grep "review desk" help && test_grep "read-only" help && test_grep "listen ADDR:PORT" help &&
	test_expect_failure_code 2 sluice -C repo serve --listen nonsense 2>err &&
	test_grep "ADDR:PORT" err &&
	test_expect_failure_code 2 sluice -C repo serve --listen 127.0.0.1:99999 2>err &&
	test_expect_failure_code 2 sluice -C repo serve extra 2>err &&
	test_expect_failure_code 1 sluice -C repo serve --listen example.com:0 2>err &&
	test_grep "IPv4 address" err &&
	test_expect_failure_code 1 sluice -C repo serve --listen 0.0.0.0:0 2>err &&
	test_grep "not 0.0.0.0" err &&
	test_expect_failure_code 1 timeout 20 env SLUICE_SERVE_TOKEN=xyz "$SLUICE" -C repo serve 2>err &&
	test_grep "hexadecimal" err &&
	mkdir notrepo &&
	test_expect_failure_code 1 sluice -C notrepo serve 2>err
'

test_expect_success 'it listens on loopback and prints the address with a token' '
	serve_up s repo &&
	test_grep "http://127.0.0.1:[0-9]*/?token=[0-9a-f]\{64\}" "$TRASH/s.out"
'

test_expect_success 'no token, a wrong token or password: 401 and nothing of the repository' '
	curl -s -o body -w "%{http_code}" "http://127.0.0.1:$(port_of s)/runs" >st &&
	test "$(cat st)" = 401 && test_grep -v "$(cat ra)" body &&
	curl -s -o body -w "%{http_code}" "http://127.0.0.1:$(port_of s)/runs?token=00$(token_of s)" >st &&
	test "$(cat st)" = 401 &&
	curl -s -o body -w "%{http_code}" -u "sluice:0123456789abcdef" "http://127.0.0.1:$(port_of s)/" >st &&
	test "$(cat st)" = 401 &&
	curl -s -o body -w "%{http_code}" "http://127.0.0.1:$(port_of s)/events" >st &&
	test "$(cat st)" = 401
'

test_expect_success 'the token in the address signs in with it as the password, and redirects without it' '
	curl -s -D hdr -o /dev/null "http://127.0.0.1:$(port_of s)/runs?token=$(token_of s)" &&
	test_grep "^HTTP/1.1 303" hdr &&
	test_grep "^Location: http://sluice:$(token_of s)@127.0.0.1:$(port_of s)/signin?to=/runs" hdr &&
	curl -s -D hdr -o /dev/null -u "sluice:$(token_of s)" "http://127.0.0.1:$(port_of s)/signin?to=/runs" &&
	test_grep "^Location: http://127.0.0.1:$(port_of s)/runs" hdr && test_grep -v "Location:.*token" hdr &&
	get s /runs >page && test "$(status)" = 200 &&
	test_grep "$(cat ra)" page
'

test_expect_success 'the Host header must name this server (DNS rebinding)' '
	get s / -H "Host: evil.example:$(port_of s)" >page && test "$(status)" = 403 &&
	test_grep -v "Queue" page &&
	get s / -H "Host: 127.0.0.1:1" >page && test "$(status)" = 403 &&
	get s / -H "Host: localhost:$(port_of s)" >page && test "$(status)" = 200
'

test_expect_success 'every page carries the security headers' '
	curl -s -D hdr -o /dev/null -u "sluice:$(token_of s)" "http://127.0.0.1:$(port_of s)/" &&
	test_grep "^Content-Security-Policy: default-src .none.; script-src .self." hdr &&
	test_grep "^X-Frame-Options: DENY" hdr && test_grep "^Referrer-Policy: same-origin" hdr &&
	test_grep "^X-Content-Type-Options: nosniff" hdr
'

test_expect_success 'a title with markup shows as text, everywhere' '
	get s / >page &&
	test_grep "&lt;script&gt;window.pwned=1&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" page &&
	test_grep -v "<script>window" page && test_grep -v "<b>bold" page &&
	get s "/runs/$(cat rx)" >page &&
	test_grep "&lt;script&gt;window.pwned" page && test_grep -v "<script>window" page
'

test_expect_success 'the queue: the reasons of --explain, the waiting runs, the graph' '
	get s / >page &&
	test_grep "id=\"queue\"" page && test_grep "id=\"waiting\"" page &&
	sluice -C repo queue --explain >q &&
	b_why=$(sed -n "/ B /{n;p;}" q | sed "s/^ *//") &&
	test -n "$b_why" && test_grep "$b_why" page &&
	test_grep "<svg" page
'

test_expect_success 'the runs: filter by state and work order; a bad state is a 400' '
	get s "/runs?state=awaiting_review" >page && test "$(status)" = 200 &&
	test_grep "$(cat ra)" page &&
	get s "/runs?state=merged" >page && test_grep -v "$(cat ra)" page &&
	get s "/runs?wo=X" >page && test_grep "$(cat rx)" page && test_grep -v "$(cat ra)" page &&
	get s "/runs?state=bogus" >page && test "$(status)" = 400 &&
	test_grep "no run state is called" page
'

test_expect_success 'a run page, its diff from git, its artifacts; unknown runs are 404' '
	ra=$(cat ra) &&
	get s "/runs/$ra" >page && test "$(status)" = 200 &&
	test_grep "awaiting_review" page && test_grep "built a" page &&
	test_grep "id=\"approve-$ra\"" page && test_grep "id=\"reject-$ra\"" page &&
	get s "/runs/$ra/diff" >page && test "$(status)" = 200 &&
	test_grep "a.txt" page &&
	test_grep "<tr class=\"a\"><td class=\"ln\"></td><td class=\"ln\">1</td><td class=\"s\">+</td><td class=\"code\">a</td></tr>" page &&
	get s "/runs/$ra/artifacts/diff.patch" >page && test "$(status)" = 200 &&
	test_grep "^+a$" page &&
	get s "/runs/nosuchrun" >page && test "$(status)" = 404 &&
	get s "/runs/$ra/conflict" >page && test "$(status)" = 404 &&
	get s "/runs/..%2F..%2Fetc" >page && test "$(status)" = 404
'

test_expect_success 'artifacts: nothing outside the run folder, never through a link' '
	ra=$(cat ra) &&
	get s "/runs/$ra/artifacts/../../config.yaml" --path-as-is >page && test "$(status)" = 404 &&
	get s "/runs/$ra/artifacts/%2E%2E/%2E%2E/config.yaml" --path-as-is >page &&
	test "$(status)" = 404 && test_grep -v "builder:" page &&
	echo secret >"$TRASH/secret" &&
	ln -s "$TRASH/secret" repo/.system/runs/$ra/planted.txt &&
	rm repo/.system/runs/$ra/summary.md && ln -s "$TRASH/secret" repo/.system/runs/$ra/summary.md &&
	get s "/runs/$ra/artifacts/planted.txt" >page && test "$(status)" = 404 &&
	get s "/runs/$ra/artifacts/summary.md" >page && test "$(status)" = 404 &&
	test_grep -v "^secret" page &&
	rm repo/.system/runs/$ra/planted.txt repo/.system/runs/$ra/summary.md &&
	echo "built a" >repo/.system/runs/$ra/summary.md
'

test_expect_success 'an action needs POST, the CSRF token and no foreign Origin' '
	ra=$(cat ra) &&
	get s "/runs/$ra" >page && csrf=$(csrf_of page) && test -n "$csrf" &&
	get s "/runs/$ra/approve" >out && test "$(status)" = 404 &&
	post s "/runs/$ra/approve" "csrf=0000" >out && test "$(status)" = 403 &&
	post s "/runs/$ra/approve" "comment=x" >out && test "$(status)" = 403 &&
	post s "/runs/$ra/approve" "csrf=$csrf" -H "Origin: http://evil.example" >out &&
	test "$(status)" = 403 &&
	post s "/runs/$ra/approve" "csrf=$csrf" -H "Sec-Fetch-Site: cross-site" >out &&
	test "$(status)" = 403 &&
	curl -s -o out -w "%{http_code}" --data "csrf=$csrf" "http://127.0.0.1:$(port_of s)/runs/$ra/approve" >st &&
	test "$(cat st)" = 401 &&
	test "$(state_of repo $ra)" = awaiting_review
'

test_expect_success 'approve from the desk: the runner approves it, recorded with who, and the tick merges it' '
	ra=$(cat ra) &&
	get s "/runs/$ra" >page && csrf=$(csrf_of page) &&
	post s "/runs/$ra/approve" "csrf=$csrf$(seen_of page)&comment=looks+good" -H "Origin: http://127.0.0.1:$(port_of s)" >out &&
	test "$(status)" = 303 &&
	test "$(state_of repo $ra)" = approved &&
	sluice -C repo log >log && test_grep "approved by .* via sluice serve (manual)" log &&
	test_grep "looks good" repo/.system/runs/$ra/review.json &&
	sluice -C repo tick >/dev/null &&
	test "$(state_of repo $ra)" = merged &&
	git -C repo log -1 --format=%B main >msg && test_grep "via sluice serve" msg
'

test_expect_success 'reject needs a comment; then the run is rejected; a second action is refused' '
	rx=$(cat rx) &&
	get s "/runs/$rx" >page && csrf=$(csrf_of page) &&
	post s "/runs/$rx/reject" "csrf=$csrf$(seen_of page)" >out && test "$(status)" = 400 &&
	test_grep "needs a comment" out &&
	test "$(state_of repo $rx)" = awaiting_review &&
	post s "/runs/$rx/reject" "csrf=$csrf$(seen_of page)&comment=%3Cb%3Eno%3C%2Fb%3E" >out && test "$(status)" = 303 &&
	test "$(state_of repo $rx)" = rejected &&
	get s "/runs/$rx" >page &&
	post s "/runs/$rx/approve" "csrf=$csrf$(seen_of page)" >out && test "$(status)" = 409 &&
	test_grep "only a run waiting for a person" out &&
	get s "/runs/$rx" >page && test_grep "&lt;b&gt;no&lt;/b&gt;" page
'

test_expect_success 'retry and abandon from the desk' '
	rx=$(cat rx) &&
	get s "/runs/$rx" >page && csrf=$(csrf_of page) &&
	test_grep "id=\"retry-$rx\"" page &&
	post s "/runs/$rx/retry" "csrf=$csrf$(seen_of page)" >out && test "$(status)" = 303 &&
	sluice -C repo log >log && test_grep "retried by .* via sluice serve" log &&
	get s "/runs/$rx/abandon" >page &&
	post s "/runs/$rx/abandon" "csrf=$csrf$(seen_of page)" >out && test "$(status)" = 303 &&
	test "$(state_of repo $rx)" = abandoned &&
	sluice -C repo log >log && test_grep "abandoned by .* via sluice serve" log &&
	post s "/runs/$rx/explode" "csrf=$csrf" >out && test "$(status)" = 404
'

test_expect_success 'the event stream sends what a tick did' '
	printf "%s\n" "echo s >s.txt" >"$BUILDERS/S.sh" && wo repo S &&
	seq=$(sqlite3 repo/.system/sluice.db "SELECT max(seq) FROM events") &&
	sse_during_tick s $seq sse repo "work_order\":\"S\"" &&
	test_grep "^event: run$" sse && test_grep "^data: {.*\"work_order\":\"S\"" sse &&
	test_grep "^id: [0-9]*$" sse
'

test_expect_success 'the audit page' '
	get s /audit >page && test "$(status)" = 200 &&
	test_grep "id=\"audit-verdict\" class=\"ok\">OK" page
'

test_expect_success 'paging: 120 runs, 50 a page' '
	n=0 && while [ $n -lt 117 ]; do
		echo "INSERT INTO runs (id, work_order_id, wo_content_hash, state, target, created_ms, updated_ms) VALUES (\"20260101-000000-p$n\", \"P\", \"h\", \"failed\", \"refs/heads/main\", $n, $n);" || return 1
		n=$((n + 1))
	done >ins.sql &&
	sqlite3 repo/.system/sluice.db <ins.sql &&
	get s "/runs?state=failed" >page &&
	test_grep "117 runs, page 1 of 3" page &&
	test "$(grep -c "<tr><td><a href=\"/runs/2026" page)" = 50 &&
	get s "/runs?state=failed&page=3" >page &&
	test "$(grep -c "<tr><td><a href=\"/runs/2026" page)" = 17 &&
	test_grep "20260101-000000-p0<" page
'

test_expect_success '--read-only: no buttons, and no action is served' '
	serve_up ro repo --read-only &&
	test_grep "read-only" "$TRASH/ro.out" &&
	rb=$(run_of repo B) &&
	get ro "/runs/$rb" >page && test "$(status)" = 200 &&
	test_grep -v "<form method=\"post\"" page &&
	post ro "/runs/$rb/abandon" "csrf=x" >out && test "$(status)" = 403 &&
	test_grep "read-only" out &&
	test "$(state_of repo $rb)" != abandoned
'

test_expect_success 'the server stops on SIGTERM, and says nothing more' '
	kill $(cat "$TRASH/ro.pid") &&
	i=0 && while kill -0 $(cat "$TRASH/ro.pid") 2>/dev/null && [ $i -lt 3000 ]; do
		sleep 0.1 && i=$((i + 1)) || return 1
	done &&
	test_expect_failure_code 1 kill -0 $(cat "$TRASH/ro.pid") 2>/dev/null &&
	test_expect_failure_code 7 curl -s -o /dev/null -m 2 "http://127.0.0.1:$(port_of ro)/" &&
	test_grep -v "Sanitizer\|runtime error" "$TRASH/ro.out"
'

kill $(cat "$TRASH/s.pid" "$TRASH/ro.pid" 2>/dev/null) 2>/dev/null

test_done
