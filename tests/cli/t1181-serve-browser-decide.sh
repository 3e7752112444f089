#!/bin/sh
# The desk as the place to decide (issue 26) in a real browser: Debian's
# chromium, headless, driven by tests/browser/decide.js through
# puppeteer-core (scripts/browser.sh installs it), as t1075. Two desks: a
# manual one whose run awaits review with 30 one-line changes in one file,
# and one with a command reviewer (a run asked for changes once, then
# merged; a run failing a gate). In Chromium: the diff on the run page above
# the actions, single-spaced (each line's box measured), with line numbers
# and marks, side by side; the actions drawn differently; Abandon asking
# without a script; the request-changes form posted; the queue as a board
# whose graph fits; the verdict per criterion; attempt 2 against 1; a
# failing gate's output. A screenshot of each page goes to
# test-artifacts/decide/ next to the binary (or $SLUICE_TEST_ARTIFACTS);
# docs/img/ holds the ones docs/serve.md shows. The curl half is t1180.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool node git curl

CHROMIUM=${SLUICE_CHROMIUM:-$(command -v chromium || echo /usr/bin/chromium)}
[ -x "$CHROMIUM" ] ||
	test_skip_all "chromium is not installed (scripts/deps.sh installs Debian's chromium)"
BROWSER_MODULES=${SLUICE_BROWSER_PREFIX:-${SLUICE_SOURCE_DIR:?}/build/browser}/node_modules
[ -f "$BROWSER_MODULES/puppeteer-core/package.json" ] ||
	test_skip_all "puppeteer-core is not installed in $BROWSER_MODULES (scripts/browser.sh installs it; it needs node and npm)"
ARTIFACTS=${SLUICE_TEST_ARTIFACTS:-$(cd "$(dirname "$SLUICE")" && pwd)/test-artifacts}/decide

serve_up() { # NAME DIR
	"$SLUICE" -C "$2" serve >"$TRASH/$1.out" 2>"$TRASH/$1.err" &
	echo $! >"$TRASH/$1.pid"
	wait_until "grep -q token= '$TRASH/$1.out'" 300 || { cat "$TRASH/$1.out"; return 1; }
	grep -o "http://[^ ]*" "$TRASH/$1.out" | head -n 1 >"$TRASH/$1.url"
}

test_expect_success 'setup: a manual desk, its run awaiting review with 30 one-line changes' '
	sluice_repo man &&
	seq -f "line %g of the file" 1 100 >man/file.txt &&
	git -C man add file.txt && git -C man commit -q -m file &&
	cat >"$BUILDERS/M.sh" <<-\EOS &&
	i=3
	while [ $i -le 90 ]; do sed -i "${i}s/of the file/of the changed file/" file.txt; i=$((i + 3)); done
	echo "M changed every third line" >"$SLUICE_RUN_DIR/summary.md"
	EOS
	wo man M "goal: Say which lines changed" "acceptance_criteria:" "  - every third line says so" &&
	sluice -C man tick >/dev/null &&
	rm_=$(run_of man M) && test "$(state_of man $rm_)" = awaiting_review &&
	echo $rm_ >rm && serve_up m man
'
test_when_finished "kill \$(cat '$TRASH/m.pid' '$TRASH/s.pid' 2>/dev/null) 2>/dev/null"

test_expect_success 'setup: a desk with a command reviewer: D asked for changes then merged, F failing a gate' '
	cat >"$BUILDERS/review.sh" <<-\EOS &&
	if grep -q "\"attempt\": *1[,}]" ; then
	echo "{\"verdict\": \"request_changes\", \"comments\": \"five is still a digit\", \"reviewer\": \"bot\", \"criteria\": [{\"criterion\": \"five is spelled out\", \"met\": false, \"note\": \"still V\"}]}"
	else
	echo "{\"verdict\": \"approve\", \"reviewer\": \"bot\", \"criteria\": [{\"criterion\": \"five is spelled out\", \"met\": true}]}"
	fi
	EOS
	sluice_repo desk "reviewer:" "  mode: command" "  command: [sh, $BUILDERS/review.sh]" \
		"gates:" "  check: [sh, -c, '\''if [ -f fail.txt ]; then echo \"<b>boom</b> in check\"; exit 3; fi'\'']" \
		"retry:" "  - exit: 2" &&
	seq -f "the number %g here" 1 10 >desk/lines.txt && git -C desk add lines.txt &&
	git -C desk commit -q -m lines &&
	cat >"$BUILDERS/D.sh" <<-\EOS &&
	if [ "$SLUICE_ATTEMPT" = 1 ]; then sed -i "5s/.*/the number V here/" lines.txt
	else sed -i "5s/.*/the number five here/" lines.txt; fi
	echo "D rewrote line five" >"$SLUICE_RUN_DIR/summary.md"
	EOS
	printf "%s\n" "echo fail >fail.txt" >"$BUILDERS/F.sh" &&
	wo desk D "goal: Spell out five" "acceptance_criteria:" "  - five is spelled out" &&
	wo desk F "goal: Fail the gate" "depends_on: [D]" &&
	wo desk G "goal: Wait for F" "depends_on: [F]" &&
	sluice -C desk tick >/dev/null && sluice -C desk tick >/dev/null &&
	rd=$(run_of desk D) && rf=$(run_of desk F) &&
	test "$(state_of desk $rd)" = merged && test "$(state_of desk $rf)" = failed &&
	echo $rd >rd && echo $rf >rf && serve_up s desk
'

test_expect_success 'setup: a run being built, its builder waiting for a file (bounded)' '
	sluice_repo live &&
	cat >"$BUILDERS/L.sh" <<-EOS &&
	echo "step one of L"
	$(wait_until_sh "[ -f \"$TRASH/go\" ]")
	echo "step two of L"
	echo two >l.txt
	EOS
	wo live L &&
	("$SLUICE" -C live tick >live-tick.out 2>&1 & echo $! >live-tick.pid) &&
	wait_until "[ -n \"\$(run_of live L)\" ] && grep -q \"step one of L\" live/.system/runs/\$(run_of live L)/builder.log 2>/dev/null" 300 &&
	run_of live L >rl && serve_up l live
'
test_when_finished "touch '$TRASH/go'; kill \$(cat '$TRASH/l.pid' 2>/dev/null) 2>/dev/null"

test_expect_success 'in Chromium: the run page decides, single-spaced; request changes; the board' '
	rm -rf "$ARTIFACTS" && mkdir -p "$ARTIFACTS" &&
	if ! MAN_URL=$(cat m.url) DESK_URL=$(cat s.url) MAN_RUN=$(cat rm) DESK_RUN=$(cat rd) \
		LIVE_URL=$(cat l.url) LIVE_RUN=$(cat rl) LIVE_GO="$TRASH/go" \
		DESK_FAILED=$(cat rf) DESK_ARTIFACTS="$ARTIFACTS" DESK_PROFILE="$TRASH/profile" \
		CHROMIUM="$CHROMIUM" NODE_PATH="$BROWSER_MODULES" \
		node "$SLUICE_SOURCE_DIR/tests/browser/decide.js" >decide.out 2>&1
	then
		cat decide.out && return 1
	fi &&
	cat decide.out &&
	test_grep -v "^not ok" decide.out &&
	test_grep "^ok - single-spaced" decide.out &&
	test_grep "^ok - the diff is on the run page, above the actions" decide.out &&
	test_grep "^ok - Request changes answers with the run page and says so" decide.out &&
	test_grep "^ok - the builder.s log grew on the open page" decide.out
'

test_expect_success 'the live run was built to the end' '
	wait_until "! kill -0 $(cat live-tick.pid) 2>/dev/null" 600 &&
	test "$(state_of live $(cat rl))" = awaiting_review
'

test_expect_success 'a screenshot of each page is kept' '
	for p in queue runs run run-split diff abandon run-reviewed attempts run-failed audit \
		run-building; do
		test -s "$ARTIFACTS/$p.png" || return 1
	done
'

test_expect_success 'the servers stop on SIGTERM, having said nothing on stderr' '
	kill $(cat m.pid s.pid) &&
	wait_until "! kill -0 $(cat m.pid) 2>/dev/null && ! kill -0 $(cat s.pid) 2>/dev/null" 300 &&
	if test -s m.err || test -s s.err; then cat m.err s.err && return 1; fi
'

test_done
