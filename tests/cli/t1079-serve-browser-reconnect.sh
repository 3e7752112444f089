#!/bin/sh
# An open page of sluice serve across a restart of the server (issue 16,
# "the pages follow the event stream"), in Debian's chromium driven by
# tests/browser/reconnect.js through puppeteer-core (as t1075): the page
# follows a tick; the server stops; a person approves with the CLI; the
# server starts again on the same address and token; the page reconnects by
# itself and shows what happened while it was away.
# Without node, chromium or puppeteer-core the test skips (exit 77).
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool node git

CHROMIUM=${SLUICE_CHROMIUM:-$(command -v chromium || echo /usr/bin/chromium)}
[ -x "$CHROMIUM" ] ||
	test_skip_all "chromium is not installed (scripts/deps.sh installs Debian's chromium)"
BROWSER_MODULES=${SLUICE_BROWSER_PREFIX:-${SLUICE_SOURCE_DIR:?}/build/browser}/node_modules
[ -f "$BROWSER_MODULES/puppeteer-core/package.json" ] ||
	test_skip_all "puppeteer-core is not installed in $BROWSER_MODULES (scripts/browser.sh installs it; it needs node and npm)"
TOKEN=00112233445566778899aabbccddeeff

test_expect_success 'setup: a work order in the inbox, sluice serve on the repository' '
	sluice_repo desk &&
	wo desk R &&
	echo "echo R >r.txt" >"$BUILDERS/R.sh" &&
	(SLUICE_SERVE_TOKEN=$TOKEN "$SLUICE" -C desk serve >serve.out 2>serve.err & echo $! >serve.pid) &&
	i=0 &&
	while ! grep -q "token=" serve.out && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done &&
	test_grep "token=$TOKEN" serve.out
'
test_when_finished "kill \$(cat '$TRASH/serve.pid') \$(cat '$TRASH/serve2.pid' 2>/dev/null) 2>/dev/null"

test_expect_success 'in Chromium: a tick, the server stopped, an approval, the server again' '
	url=$(grep -o "http://[^ ]*" serve.out) &&
	port=$(echo "$url" | sed "s|^http://127\.0\.0\.1:\([0-9]*\)/.*|\1|") &&
	if ! DESK_URL=$url DESK_REPO="$TRASH/desk" DESK_PID=$(cat serve.pid) DESK_PORT=$port \
		DESK_TOKEN=$TOKEN DESK_PROFILE="$TRASH/profile" DESK_OUT="$TRASH" \
		SLUICE="$SLUICE" CHROMIUM="$CHROMIUM" NODE_PATH="$BROWSER_MODULES" \
		node "$SLUICE_SOURCE_DIR/tests/browser/reconnect.js" >reconnect.out 2>&1
	then
		cat reconnect.out reconnect.json && return 1
	fi &&
	cat reconnect.out reconnect.json
'

test_expect_success 'the approval made while the server was down reaches the open page' '
	test_grep "\"approved_shown\": true" reconnect.json &&
	test_grep "\"row_state\": \"approved\"" reconnect.json &&
	test "$(state_of desk $(run_of desk R))" = approved
'

# The page's EventSource reconnects to its first address, /events?since=
# the sequence number of the page's load, and the server reads that, not
# the Last-Event-ID header a browser sends on a reconnect: every event the
# page had already shown comes again.
test_expect_success 'after the reconnect each event shows once in the live list' '
	test_grep "\"shown_twice\": 0" reconnect.json
'

test_done
