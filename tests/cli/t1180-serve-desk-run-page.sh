#!/bin/sh
# The desk as the place to decide (issue 26), over real HTTP with curl: a
# run's page shows, above the actions, the work order's goal and acceptance
# criteria, the gates with the failing gate's output inline (escaped, its
# tail), the reviewer's verdict per criterion and the diff itself (a table,
# line numbers, intra-line changes marked, small diffs open, unified or side
# by side); attempt N against attempt N-1; the builder's log; the merge row
# and manifest.json's size right; no terminal command next to a button;
# Abandon asks first (a page, no script needed); "Request changes" has a
# comment box and a route; the queue is a board grouped by state. The
# browser half (spacing measured in Chromium, the request-changes form) is
# t1181.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool curl

serve_up() { # NAME DIR
	"$SLUICE" -C "$2" serve >"$TRASH/$1.out" 2>&1 &
	echo $! >"$TRASH/$1.pid"
	wait_until "grep -q http:// '$TRASH/$1.out'" 300 || { cat "$TRASH/$1.out"; return 1; }
	_u=$(grep -o "http://[^ ]*" "$TRASH/$1.out" | head -n 1)
	echo "$_u" | sed 's|http://127.0.0.1:\([0-9]*\)/.*|\1|' >"$TRASH/$1.port"
	echo "${_u##*=}" >"$TRASH/$1.token"
}
get() { # NAME PATH [curl args...]
	_n=$1 _p=$2
	shift 2
	curl -s -o "$TRASH/body" -w "%{http_code}" -u "sluice:$(cat "$TRASH/$_n.token")" "$@" \
		"http://127.0.0.1:$(cat "$TRASH/$_n.port")$_p" >"$TRASH/status"
	cat "$TRASH/body"
}
post() { # NAME PATH FORM
	get "$1" "$2" --data "$3" -H "Origin: http://127.0.0.1:$(cat "$TRASH/$1.port")"
}
status() { cat "$TRASH/status"; }
field() { sed -n "s/.*<input type=\"hidden\" name=\"$2\" value=\"\([^\"]*\)\".*/\1/p" "$1" | head -n 1; }
form() {
	echo "csrf=$(field "$1" csrf)&head=$(field "$1" head)&attempt=$(field "$1" attempt)&state=$(field "$1" state)"
}

test_expect_success 'setup: D reviewed twice (changes asked, then approved), F failing a gate' '
	cat >"$BUILDERS/review.sh" <<-\EOS &&
	if grep -q "\"attempt\": *1[,}]" ; then
	echo "{\"verdict\": \"request_changes\", \"comments\": \"five is still a digit\", \"reviewer\": \"bot\", \"criteria\": [{\"criterion\": \"five is <spelled> out\", \"met\": false, \"note\": \"still 5\"}]}"
	else
	echo "{\"verdict\": \"approve\", \"reviewer\": \"bot\", \"criteria\": [{\"criterion\": \"five is <spelled> out\", \"met\": true}]}"
	fi
	EOS
	sluice_repo desk "reviewer:" "  mode: command" "  command: [sh, $BUILDERS/review.sh]" \
		"gates:" "  check: [sh, -c, '\''if [ -f fail.txt ]; then echo \"<b>boom</b> at line 1\"; exit 3; fi'\'']" \
		"retry:" "  - exit: 2" &&
	seq -f "the number %g here" 1 10 >desk/lines.txt && sed -i "7s/.*/the café here/" desk/lines.txt &&
	git -C desk add lines.txt && git -C desk commit -q -m lines &&
	cat >"$BUILDERS/D.sh" <<-\EOS &&
	echo "building D, attempt $SLUICE_ATTEMPT"
	if [ "$SLUICE_ATTEMPT" = 1 ]; then sed -i "5s/.*/the number V here/" lines.txt
	else sed -i "5s/.*/the number five here/" lines.txt; fi
	sed -i "7s/.*/the cafè here/" lines.txt
	echo "D rewrote line five" >"$SLUICE_RUN_DIR/summary.md"
	EOS
	cat >"$BUILDERS/F.sh" <<-\EOS &&
	echo "building F"
	echo fail >fail.txt
	EOS
	wo desk D "goal: Spell out five & <keep> the rest" "acceptance_criteria:" \
		"  - five is <spelled> out" "  - no other line changes" &&
	wo desk F "goal: Fail the gate" &&
	sluice -C desk tick --jobs 2 >/dev/null &&
	rd=$(run_of desk D) && rf=$(run_of desk F) &&
	test "$(state_of desk $rd)" = merged &&
	test "$(state_of desk $rf)" = failed &&
	echo $rd >rd && echo $rf >rf &&
	serve_up s desk
'
test_when_finished "kill \$(cat '$TRASH/s.pid' '$TRASH/m.pid' 2>/dev/null) 2>/dev/null"

test_expect_success 'the run page: the goal and each acceptance criterion, escaped' '
	get s "/runs/$(cat rd)" >page && test "$(status)" = 200 &&
	test_grep "id=\"goal\"" page &&
	test_grep "Spell out five &amp; &lt;keep&gt; the rest" page &&
	test_grep "<li>five is &lt;spelled&gt; out</li>" page &&
	test_grep "<li>no other line changes</li>" page
'

test_expect_success 'the run page: the verdict per criterion, of each attempt' '
	test_grep "class=\"criterion met\"" page &&
	test_grep "id=\"verdict\"" page
'

test_expect_success 'the run page: the diff itself, above the actions, with line numbers and the change marked' '
	test_grep "<table class=\"diff unified\"" page &&
	test_grep "<td class=\"ln\">5</td>" page &&
	test_grep "the number <mark>five</mark> here" page &&
	test_grep "the caf<mark>é</mark> here" page && test_grep "the caf<mark>è</mark> here" page &&
	test_grep "<details class=\"file\" open data-auto" page &&
	diff_at=$(grep -n "<table class=\"diff" page | head -n 1 | cut -d: -f1) &&
	crit_at=$(grep -n "id=\"criteria\"" page | head -n 1 | cut -d: -f1) &&
	test "$crit_at" -lt "$diff_at" &&
	test_grep -v "pre class=\"diff\"" page
'

test_expect_success 'side by side: the old line and the new one on one row' '
	get s "/runs/$(cat rd)?view=split" >page2 && test "$(status)" = 200 &&
	test_grep "<table class=\"diff split\"" page2 &&
	test_grep "the number <mark>five</mark> here</td>" page2 &&
	get s "/runs/$(cat rd)/diff?view=split&expand=all" >page3 && test "$(status)" = 200 &&
	test_grep "<table class=\"diff split\"" page3
'

test_expect_success 'attempt 2 against attempt 1: the two heads compared' '
	get s "/runs/$(cat rd)" >page &&
	test_grep "href=\"/runs/$(cat rd)/diff?attempt=2\"" page &&
	get s "/runs/$(cat rd)/diff?attempt=2" >idiff && test "$(status)" = 200 &&
	test_grep "attempt 2 against attempt 1" idiff &&
	test_grep "the number <mark>V</mark> here" idiff &&
	test_grep "the number <mark>five</mark> here" idiff &&
	get s "/runs/$(cat rd)/diff?attempt=1" >out && test "$(status)" = 404
'

test_expect_success 'the merge row names the merge commit; manifest.json has its size' '
	m=$(git -C desk rev-parse main) &&
	get s "/runs/$(cat rd)" >page &&
	test_grep "<tr><th>merge</th><td><code>$m</code>" page &&
	test_grep "<tr><th>reviewer</th><td>bot" page &&
	bytes=$(wc -c <desk/.system/runs/$(cat rd)/manifest.json | tr -d " ") &&
	test_grep "manifest.json</a> <span class=\"muted\">$bytes bytes" page
'

test_expect_success 'a failed gate: its output inline, escaped, on the run page' '
	get s "/runs/$(cat rf)" >page && test "$(status)" = 200 &&
	test_grep "id=\"gates\"" page &&
	test_grep "class=\"gate failed\"" page &&
	test_grep "&lt;b&gt;boom&lt;/b&gt; at line 1" page &&
	test_grep -v "<b>boom" page
'

test_expect_success 'a gates.json rewritten to name another file shows no file' '
	rf=$(cat rf) &&
	echo SECRET-ABC >desk/.system/runs/$rf/secret.txt &&
	for f in desk/.system/runs/$rf/attempts/*/gates.json; do
		sed -i "s|\"log\": *\"[^\"]*\"|\"log\": \"secret.txt\"|" "$f" || return 1
	done &&
	grep -q secret.txt desk/.system/runs/$rf/attempts/2/gates.json &&
	get s "/runs/$rf" >page && test "$(status)" = 200 &&
	test_grep -v SECRET-ABC page &&
	test_grep "its output is not kept" page
'

test_expect_success 'the builder log of an attempt, as text' '
	get s "/runs/$(cat rd)/log" >log && test "$(status)" = 200 &&
	test_grep "building D, attempt 2" log &&
	get s "/runs/$(cat rd)" >page && test_grep "id=\"builder-log\"" page
'

test_expect_success 'no terminal command or absolute path next to the buttons' '
	get s "/runs/$(cat rf)" >page &&
	test_grep "id=\"retry-$(cat rf)\"" page &&
	test_grep -v "sluice retry" page && test_grep -v "sluice abandon" page &&
	test_grep -v "$TRASH/desk/.system" page
'

test_expect_success 'the three actions look different' '
	get s "/static/desk.css" >css &&
	test_grep "button.approve{" css && test_grep "button.reject{" css &&
	test_grep "button.abandon{" css
'

test_expect_success 'setup: a manual desk, a run awaiting review' '
	printf "%s\n" "echo m >m.txt" >"$BUILDERS/M.sh" &&
	sluice_repo man && wo man M &&
	sluice -C man tick >/dev/null &&
	rm_=$(run_of man M) && test "$(state_of man $rm_)" = awaiting_review &&
	echo $rm_ >rm && serve_up m man
'

test_expect_success 'Request changes: a button with a comment box; a comment is required' '
	rm_=$(cat rm) &&
	get m "/runs/$rm_" >page && test "$(status)" = 200 &&
	test_grep "action=\"/runs/$rm_/request-changes\"" page &&
	test_grep "<textarea name=\"comment\"" page &&
	test_grep "id=\"request-changes-$rm_\"" page &&
	test_grep -v "sluice approve" page &&
	test_grep "<p id=\"reason\">waiting for a person: see below</p>" page &&
	post m "/runs/$rm_/request-changes" "$(form page)" >out && test "$(status)" = 400 &&
	test "$(state_of man $rm_)" = awaiting_review
'

# Request changes: the run goes back to be built again, the comment in the
# next attempt's prompt; the work order is not failed.
test_expect_success 'Request changes: the run builds again with the comment' '
	rm_=$(cat rm) &&
	get m "/runs/$rm_" >page &&
	post m "/runs/$rm_/request-changes" "$(form page)&comment=name+it+m2" >out &&
	test "$(status)" = 303 &&
	test "$(state_of man $rm_)" = queued &&
	sluice -C man tick >tick.out 2>&1 &&
	test "$(state_of man $rm_)" = awaiting_review &&
	test_grep "name it m2" man/.system/runs/$rm_/attempts/2/prompt.md &&
	sluice -C man queue >q && ! grep -q "^failed" q
'

test_expect_success 'Abandon asks first: a page with the real button, no script needed' '
	rm_=$(cat rm) &&
	get m "/runs/$rm_" >page &&
	test_grep "<form method=\"get\" class=\"action\" action=\"/runs/$rm_/abandon\"" page &&
	get m "/runs/$rm_/abandon" >confirm && test "$(status)" = 200 &&
	test_grep "Abandon run" confirm &&
	test_grep "<form method=\"post\" class=\"action\" action=\"/runs/$rm_/abandon\"" confirm &&
	test "$(state_of man $rm_)" != abandoned &&
	post m "/runs/$rm_/abandon" "$(form confirm)" >out && test "$(status)" = 303 &&
	test "$(state_of man $rm_)" = abandoned
'

test_expect_success 'a finished run offers no Abandon (the runner refuses it)' '
	get s "/runs/$(cat rf)" >page &&
	test_grep -v "action=\"/runs/$(cat rf)/abandon\"" page
'

test_expect_success 'the queue is a board grouped by state, with titles and relative times' '
	get s / >page && test "$(status)" = 200 &&
	test_grep "id=\"queue\"" page &&
	test_grep "class=\"board\"" page &&
	test_grep "<h3>done" page &&
	test_grep "Work order D" page &&
	test_grep "ago</span>" page
'

test_expect_success 'the servers stop on SIGTERM, with no sanitizer report' '
	kill $(cat s.pid m.pid) &&
	wait_until "! kill -0 $(cat s.pid) 2>/dev/null && ! kill -0 $(cat m.pid) 2>/dev/null" 300 &&
	test_grep -v "runtime error\|Sanitizer" s.out && test_grep -v "runtime error\|Sanitizer" m.out
'

test_done
