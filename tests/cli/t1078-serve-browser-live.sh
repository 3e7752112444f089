#!/bin/sh
# What the open pages of sluice serve show after a tick, without a reload
# (issue 16, "the pages follow the event stream"), in Debian's chromium
# driven by tests/browser/live.js through puppeteer-core (as t1075): the
# runs, the runs filtered by work order and the run's page are open; the
# person approves the run on its page; `sluice tick` merges it; then SIGTERM
# while the three pages still hold their event streams.
# Without node, chromium or puppeteer-core the test skips (exit 77).
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool node git

CHROMIUM=${SLUICE_CHROMIUM:-$(command -v chromium || echo /usr/bin/chromium)}
[ -x "$CHROMIUM" ] ||
	test_skip_all "chromium is not installed (scripts/deps.sh installs Debian's chromium)"
BROWSER_MODULES=${SLUICE_BROWSER_PREFIX:-${SLUICE_SOURCE_DIR:?}/build/browser}/node_modules
[ -f "$BROWSER_MODULES/puppeteer-core/package.json" ] ||
	test_skip_all "puppeteer-core is not installed in $BROWSER_MODULES (scripts/browser.sh installs it; it needs node and npm)"

test_expect_success 'setup: a run awaiting review, sluice serve on the repository' '
	sluice_repo desk &&
	wo desk P &&
	echo "echo P >p.txt" >"$BUILDERS/P.sh" &&
	sluice -C desk tick >/dev/null &&
	test "$(state_of desk $(run_of desk P))" = awaiting_review &&
	("$SLUICE" -C desk serve >serve.out 2>serve.err & echo $! >serve.pid) &&
	i=0 &&
	while ! grep -q "token=" serve.out && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done &&
	test_grep "token=" serve.out
'
test_when_finished "kill \$(cat '$TRASH/serve.pid') 2>/dev/null"

test_expect_success 'in Chromium: three pages open, approve, a tick, SIGTERM' '
	url=$(grep -o "http://[^ ]*" serve.out) &&
	if ! DESK_URL=$url DESK_REPO="$TRASH/desk" DESK_RUN=$(run_of desk P) DESK_WO=P \
		DESK_PID=$(cat serve.pid) DESK_PROFILE="$TRASH/profile" DESK_OUT="$TRASH" \
		SLUICE="$SLUICE" CHROMIUM="$CHROMIUM" NODE_PATH="$BROWSER_MODULES" \
		node "$SLUICE_SOURCE_DIR/tests/browser/live.js" >live.out 2>&1
	then
		cat live.out && return 1
	fi &&
	cat live.out live.json
'

# a fact of live.json: fact KEY VALUE (the JSON text of the value)
fact() { test_grep "\"$1\": $2" "$TRASH/live.json"; }

test_expect_success 'the runs page and the run page show the run merged, the run merged' '
	fact all "\"merged\"" &&
	fact run_state "\"merged\"" &&
	test "$(state_of desk $(run_of desk P))" = merged
'

# busy() in serve/assets.c counts any text field with a value as the
# person typing: the filter's own work-order field, filled in from the
# query, keeps a filtered runs page from ever following the events.
test_expect_success 'the runs page filtered by work order follows the tick too' '
	fact filtered "\"merged\"" && fact filtered_refreshed true
'

# The run page was reached through ?done=approve, and every live refresh
# fetches that address again: the notice of the approval stays over a
# merged run.
test_expect_success 'the merged run s page no longer says the next tick merges it' '
	test_grep -v "the next tick merges it" live.json
'

test_expect_success 'SIGTERM ends the server while pages hold their event streams' '
	fact server_ended_with_pages_open true &&
	! kill -0 $(cat serve.pid) 2>/dev/null
'

test_done
