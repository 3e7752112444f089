#!/bin/sh
# What a browser holds for sluice serve is worthless to another server on
# 127.0.0.1 (issue 25). Cookies are not bound to a port (RFC 6265, 8.5): a
# browser sends a cookie of 127.0.0.1:A to 127.0.0.1:B as well, so a token
# kept as a cookie let a neighbouring server (a dev server of a worktree)
# replay it with curl, read a run page with its form token and approve. The
# token is now the password of HTTP Basic authentication, which a browser
# keeps per origin, port included: the cookie the desk used to set, replayed
# with the right Host, reads nothing and approves nothing. The browser's side
# (what it sends the neighbour) is t1141.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool curl

T=00112233445566778899aabbccddeeff
test_when_finished "kill \$(cat '$TRASH/serve.pid') 2>/dev/null"

test_expect_success 'setup: a run awaiting review, sluice serve on the repository' '
	sluice_repo repo &&
	wo repo X && echo "echo x >x.txt" >"$BUILDERS/X.sh" &&
	sluice -C repo tick >/dev/null &&
	test "$(state_of repo $(run_of repo X))" = awaiting_review &&
	{ SLUICE_SERVE_TOKEN=$T "$SLUICE" -C repo serve >serve.out 2>&1 & } && echo $! >serve.pid &&
	i=0 &&
	while ! grep -q "token=" serve.out && [ $i -lt 6000 ]; do sleep 0.1; i=$((i + 1)); done &&
	grep -o "127.0.0.1:[0-9]*" serve.out >addr && test -s addr
'

test_expect_success 'the printed address signs in as the password of the address, never as a cookie' '
	a=$(cat addr) &&
	curl -s -D hdr -o /dev/null "http://$a/runs?token=$T" &&
	test_grep "^HTTP/1.1 303" hdr &&
	test_grep "^Location: http://sluice:$T@$a/signin?to=/runs" hdr &&
	test_grep -v -i "^Set-Cookie" hdr &&
	curl -s -D hdr -o /dev/null -u "sluice:$T" "http://$a/signin?to=/runs" &&
	test_grep "^HTTP/1.1 303" hdr &&
	test_grep "^Location: http://$a/runs" hdr && test_grep -v "Location:.*$T" hdr &&
	test_grep -v -i "^Set-Cookie" hdr &&
	curl -s -D hdr -o /dev/null -u "sluice:$T" "http://$a/signin?to=//evil.example/x" &&
	test_grep "^Location: http://$a//evil.example/x" hdr &&
	test "$(curl -s -o /dev/null -w "%{http_code}" -u "anyone:$T" "http://$a/runs")" = 200
'

test_expect_success 'without the token, or with a wrong one: 401 asking for it, for this port' '
	a=$(cat addr) &&
	curl -s -D hdr -o body "http://$a/" &&
	test_grep "^HTTP/1.1 401" hdr &&
	test_grep "^WWW-Authenticate: Basic realm=\"sluice serve $a\"" hdr &&
	test_grep "give the token as the password" body &&
	test "$(curl -s -o /dev/null -w "%{http_code}" -u "sluice:${T}00" "http://$a/")" = 401 &&
	test "$(curl -s -o /dev/null -w "%{http_code}" -u "sluice:" "http://$a/")" = 401 &&
	test "$(curl -s -o /dev/null -w "%{http_code}" -H "Authorization: Basic !!!" "http://$a/")" = 401 &&
	test "$(curl -s -o /dev/null -w "%{http_code}" -H "Authorization: Bearer $T" "http://$a/")" = 401
'

test_expect_success 'the cookie a browser would hand a neighbour, replayed: no read, no form token, no approve' '
	a=$(cat addr) && x=$(run_of repo X) && port=${a#*:} &&
	curl -s -u "sluice:$T" "http://$a/runs/$x" >page &&
	csrf=$(sed -n "s/.*name=\"csrf\" value=\"\([0-9a-f]*\)\".*/\1/p" page | head -n 1) &&
	test -n "$csrf" &&
	for p in / "/runs/$x" /events /audit; do
		curl -s -m 5 -o body -w "%{http_code}" -b "sluice_token_$port=$T" -H "Host: $a" \
			-H "Sec-Fetch-Site: same-origin" "http://$a$p" >st &&
		test "$(cat st)" = 401 && test_grep -v "$csrf" body || return 1
	done &&
	curl -s -o body -w "%{http_code}" -b "sluice_token_$port=$T" -H "Host: $a" \
		-H "Origin: http://$a" -H "Sec-Fetch-Site: same-origin" \
		--data "csrf=$csrf&comment=by+the+neighbour" "http://$a/runs/$x/approve" >st &&
	test "$(cat st)" = 401 &&
	test "$(state_of repo $x)" = awaiting_review
'

test_expect_success 'the person, with the token, still approves' '
	a=$(cat addr) && x=$(run_of repo X) &&
	curl -s -u "sluice:$T" "http://$a/runs/$x" >page &&
	csrf=$(sed -n "s/.*name=\"csrf\" value=\"\([0-9a-f]*\)\".*/\1/p" page | head -n 1) &&
	for f in head attempt state; do
		sed -n "s/.*<input type=\"hidden\" name=\"$f\" value=\"\([^\"]*\)\".*/\1/p" page |
			head -n 1 >$f.seen || return 1
	done &&
	seen="head=$(cat head.seen)&attempt=$(cat attempt.seen)&state=$(cat state.seen)" &&
	test "$(curl -s -o /dev/null -w "%{http_code}" -u "sluice:$T" -H "Origin: http://$a" \
		--data "csrf=$csrf&$seen&comment=ok" "http://$a/runs/$x/approve")" = 303 &&
	test "$(state_of repo $x)" = approved
'

test_done
