#!/bin/sh
# The defences of sluice serve as a real browser meets them (issue 16),
# in Debian's chromium driven by tests/browser/attack.js through
# puppeteer-core (as t1075): a page of another origin (another port of
# 127.0.0.1, to which the browser sends the desk's password with a form) posting
# Approve, with a guessed and with the real CSRF token, is refused and
# approves nothing; it cannot read a desk page; the desk opened under a DNS
# name of the attacker's that points at 127.0.0.1 answers 403; a comment
# being typed survives the events of a tick; Reject needs a comment.
# Without node, chromium or puppeteer-core the test skips (exit 77).
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool node git

CHROMIUM=${SLUICE_CHROMIUM:-$(command -v chromium || echo /usr/bin/chromium)}
[ -x "$CHROMIUM" ] ||
	test_skip_all "chromium is not installed (scripts/deps.sh installs Debian's chromium)"
BROWSER_MODULES=${SLUICE_BROWSER_PREFIX:-${SLUICE_SOURCE_DIR:?}/build/browser}/node_modules
[ -f "$BROWSER_MODULES/puppeteer-core/package.json" ] ||
	test_skip_all "puppeteer-core is not installed in $BROWSER_MODULES (scripts/browser.sh installs it; it needs node and npm)"

test_expect_success 'setup: X, Y and Z awaiting review, sluice serve on the repository' '
	sluice_repo desk &&
	for w in X Y Z; do
		wo desk $w &&
		echo "echo $w >$w.txt" >"$BUILDERS/$w.sh" || return 1
	done &&
	sluice -C desk tick --jobs 3 >/dev/null &&
	for w in X Y Z; do
		test "$(state_of desk $(run_of desk $w))" = awaiting_review || return 1
	done &&
	("$SLUICE" -C desk serve >serve.out 2>serve.err & echo $! >serve.pid) &&
	i=0 &&
	while ! grep -q "token=" serve.out && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done &&
	test_grep "token=" serve.out
'
test_when_finished "kill \$(cat '$TRASH/serve.pid') 2>/dev/null"

test_expect_success 'in Chromium: another origin, a rebinding name, typing during events, Reject' '
	url=$(grep -o "http://[^ ]*" serve.out) &&
	if ! DESK_URL=$url DESK_REPO="$TRASH/desk" DESK_X=$(run_of desk X) \
		DESK_Y=$(run_of desk Y) DESK_Z=$(run_of desk Z) DESK_PROFILE="$TRASH/profile" \
		SLUICE="$SLUICE" CHROMIUM="$CHROMIUM" NODE_PATH="$BROWSER_MODULES" \
		node "$SLUICE_SOURCE_DIR/tests/browser/attack.js" >attack.out 2>&1
	then
		cat attack.out && return 1
	fi &&
	cat attack.out &&
	test_grep -v "^not ok" attack.out &&
	test_grep "^ok - Reject with a comment rejects the run" attack.out
'

test_expect_success 'nothing the other origin sent approved X; Y rejected by the person, Z approved' '
	test "$(state_of desk $(run_of desk X))" = awaiting_review &&
	test "$(state_of desk $(run_of desk Y))" = rejected &&
	test "$(state_of desk $(run_of desk Z))" = approved &&
	sluice -C desk show $(run_of desk Y) >show &&
	test_grep "the tests are missing" show &&
	test_grep "via sluice serve" show &&
	sluice -C desk show $(run_of desk X) >showx &&
	test_grep -v "by the attacker" showx
'

test_done
