#!/bin/sh
# The desk's forms bind to what the page showed (issue 25, "Approve approves
# what the page showed"): every action form carries the run's head commit,
# attempt and state as rendered; a run that moved on since (rejected,
# retried and rebuilt from the CLI or another tab) refuses the old form
# with 409 and says what changed, and nothing changes; a form without them
# is refused; the fresh page's form acts. `sluice approve RUN --head SHA`
# binds the CLI the same way.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool curl

# serve_up NAME DIR: a server, its port and token in files (as t1070).
serve_up() {
	"$SLUICE" -C "$2" serve >"$TRASH/$1.out" 2>&1 &
	echo $! >"$TRASH/$1.pid"
	_i=0
	while ! grep -q "http://" "$TRASH/$1.out" && [ $_i -lt 3000 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	_u=$(grep -o "http://[^ ]*" "$TRASH/$1.out" | head -n 1)
	[ -n "$_u" ] || { cat "$TRASH/$1.out"; return 1; }
	echo "$_u" | sed 's|http://127.0.0.1:\([0-9]*\)/.*|\1|' >"$TRASH/$1.port"
	echo "${_u##*=}" >"$TRASH/$1.token"
}
port() { cat "$TRASH/s.port"; }

# get PATH [curl args...]: the page with the token as the password, the status in $TRASH/status.
get() {
	_p=$1
	shift
	curl -s -o "$TRASH/body" -w "%{http_code}" -u "sluice:$(cat "$TRASH/s.token")" \
		"$@" "http://127.0.0.1:$(port)$_p" >"$TRASH/status"
	cat "$TRASH/body"
}
# post PATH FORM: from the desk's own origin.
post() { get "$1" --data "$2" -H "Origin: http://127.0.0.1:$(port)"; }
status() { cat "$TRASH/status"; }
# field PAGE NAME: the value of the first hidden field NAME of the page's forms.
field() { sed -n "s/.*<input type=\"hidden\" name=\"$2\" value=\"\([^\"]*\)\".*/\1/p" "$1" | head -n 1; }
# form PAGE: what the page's action forms carry, as a browser would post it.
form() {
	echo "csrf=$(field "$1" csrf)&head=$(field "$1" head)&attempt=$(field "$1" attempt)&state=$(field "$1" state)"
}
head_of() { # DIR RUN
	"$SLUICE" -C "$1" status --json "$2" | sed -n 's/^ *"head_commit": "\([0-9a-f]*\)",\{0,1\}$/\1/p' | head -n 1
}
attempt_of() { # DIR RUN
	"$SLUICE" -C "$1" status --json "$2" | sed -n 's/^ *"attempt": \([0-9]*\),\{0,1\}$/\1/p' | head -n 1
}

test_expect_success 'setup: a run awaiting review (each attempt adds a line), a desk' '
	printf "%s\n" "echo attempt >>a.txt" >"$BUILDERS/A.sh" &&
	printf "%s\n" "echo b >b.txt" >"$BUILDERS/B.sh" &&
	sluice_repo repo &&
	wo repo A && wo repo B &&
	sluice -C repo tick --jobs 2 >/dev/null &&
	ra=$(run_of repo A) && rb=$(run_of repo B) &&
	test "$(state_of repo $ra)" = awaiting_review &&
	test "$(attempt_of repo $ra)" = 1 &&
	echo $ra >ra && echo $rb >rb &&
	serve_up s repo
'

test_expect_success 'every action form carries the head, attempt and state it was rendered for' '
	ra=$(cat ra) &&
	get "/runs/$ra" >page1 && test "$(status)" = 200 &&
	test "$(field page1 head)" = "$(head_of repo $ra)" &&
	test "$(field page1 attempt)" = 1 &&
	test "$(field page1 state)" = awaiting_review &&
	forms=$(grep -o "<form method=\"post\"" page1 | wc -l) && test "$forms" -ge 3 &&
	test "$(grep -o "name=\"head\" value=\"$(head_of repo $ra)\"" page1 | wc -l)" = "$forms" &&
	test "$(grep -o "name=\"attempt\" value=\"1\"" page1 | wc -l)" = "$forms" &&
	test "$(grep -o "name=\"state\" value=\"awaiting_review\"" page1 | wc -l)" = "$forms"
'

test_expect_success 'a form without the fields, or with a bad one, is refused: not "any head"' '
	ra=$(cat ra) && csrf=$(field page1 csrf) && h=$(field page1 head) &&
	post "/runs/$ra/approve" "csrf=$csrf" >out && test "$(status)" = 400 &&
	test_grep "reload" out &&
	post "/runs/$ra/approve" "csrf=$csrf&attempt=1&state=awaiting_review" >out &&
	test "$(status)" = 400 &&
	post "/runs/$ra/approve" "csrf=$csrf&head=$h&state=awaiting_review" >out &&
	test "$(status)" = 400 &&
	post "/runs/$ra/approve" "csrf=$csrf&head=$h&attempt=1" >out && test "$(status)" = 400 &&
	post "/runs/$ra/approve" "csrf=$csrf&head=$h&attempt=1x&state=awaiting_review" >out &&
	test "$(status)" = 400 &&
	post "/runs/$ra/approve" "csrf=$csrf&head=--all&attempt=1&state=awaiting_review" >out &&
	test "$(status)" = 400 &&
	post "/runs/$ra/abandon" "csrf=$csrf" >out && test "$(status)" = 400 &&
	test "$(state_of repo $ra)" = awaiting_review
'

test_expect_success 'the run moves on (CLI): an old form of each action is refused, 409, nothing changes' '
	ra=$(cat ra) && old=$(form page1) && h1=$(field page1 head) &&
	sluice -C repo reject $ra -m "not yet" >/dev/null &&
	get "/runs/$ra" >page2 && test "$(field page2 state)" = rejected &&
	sluice -C repo retry $ra >/dev/null &&
	test "$(state_of repo $ra)" = queued &&
	post "/runs/$ra/abandon" "$(form page2)" >out && test "$(status)" = 409 &&
	test_grep "is now queued on attempt 1" out && test_grep "not rejected" out &&
	test "$(state_of repo $ra)" = queued &&
	sluice -C repo tick >/dev/null &&
	test "$(state_of repo $ra)" = awaiting_review && test "$(attempt_of repo $ra)" = 2 &&
	h2=$(head_of repo $ra) && test "$h2" != "$h1" &&
	h1s=$(echo $h1 | cut -c1-12) && h2s=$(echo $h2 | cut -c1-12) &&
	post "/runs/$ra/approve" "$old&comment=ok" >out && test "$(status)" = 409 &&
	test_grep "run .*$ra.* is now awaiting_review on attempt 2 (head $h2s), not awaiting_review on attempt 1 (head $h1s) that this page showed" out &&
	test_grep "reload" out &&
	test_grep "name=\"head\" value=\"$h2\"" out &&
	test "$(state_of repo $ra)" = awaiting_review &&
	sluice -C repo log >log && test_grep -v "approved by" log &&
	post "/runs/$ra/reject" "$old&comment=no" >out && test "$(status)" = 409 &&
	post "/runs/$ra/retry" "$old" >out && test "$(status)" = 409 &&
	post "/runs/$ra/abandon" "$old" >out && test "$(status)" = 409 &&
	test "$(state_of repo $ra)" = awaiting_review
'

test_expect_success 'the fresh page approves attempt 2, its tree' '
	ra=$(cat ra) &&
	get "/runs/$ra" >page3 && test "$(field page3 attempt)" = 2 &&
	post "/runs/$ra/approve" "$(form page3)&comment=seen" >out && test "$(status)" = 303 &&
	test "$(state_of repo $ra)" = approved &&
	tree=$(git -C repo rev-parse "$(head_of repo $ra)^{tree}") &&
	sluice -C repo status --json $ra >st && test_grep "\"approved_tree\": \"$tree\"" st
'

test_expect_success 'sluice approve --head: refused for another head, approves the one named' '
	rb=$(cat rb) && hb=$(head_of repo $rb) &&
	sluice approve --help >help && test_grep "[-]-head SHA" help &&
	sluice reject --help >help && test_grep "[-]-head SHA" help &&
	test_expect_failure_code 2 sluice -C repo approve $rb --head nothex 2>err &&
	test_grep "head" err &&
	test_expect_failure_code 2 sluice -C repo approve $rb --head $(echo $hb | cut -c1-12) 2>err &&
	test_grep "full" err &&
	test_expect_failure_code 1 sluice -C repo approve $rb --head $(head_of repo $(cat ra)) 2>err &&
	test_grep "is now awaiting_review on attempt 1 (head $(echo $hb | cut -c1-12)), not at head" err &&
	test "$(state_of repo $rb)" = awaiting_review &&
	sluice -C repo approve $rb --head $hb >out &&
	test "$(state_of repo $rb)" = approved
'

kill $(cat "$TRASH/s.pid" 2>/dev/null) 2>/dev/null

test_done
