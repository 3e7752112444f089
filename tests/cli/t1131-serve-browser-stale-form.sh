#!/bin/sh
# The desk's forms in a real browser (issue 25, "Approve approves what the
# page showed"): Debian's chromium driven by tests/browser/stale.js through
# puppeteer-core, as t1075. Two tabs on a run awaiting review at attempt 1;
# the CLI rejects, retries and rebuilds it (attempt 2) while a comment is
# typed into one tab's Approve: that Approve is refused (409, what changed,
# nothing approved), the other tab's forms follow the run live, and the page
# the 409 answered with approves attempt 2. Screenshots in
# test-artifacts/serve/stale-*.png. Without node, chromium or puppeteer-core
# it skips (exit 77).
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool node git

CHROMIUM=${SLUICE_CHROMIUM:-$(command -v chromium || echo /usr/bin/chromium)}
[ -x "$CHROMIUM" ] ||
	test_skip_all "chromium is not installed (scripts/deps.sh installs Debian's chromium)"
BROWSER_MODULES=${SLUICE_BROWSER_PREFIX:-${SLUICE_SOURCE_DIR:?}/build/browser}/node_modules
[ -f "$BROWSER_MODULES/puppeteer-core/package.json" ] ||
	test_skip_all "puppeteer-core is not installed in $BROWSER_MODULES (scripts/browser.sh installs it; it needs node and npm)"
ARTIFACTS=${SLUICE_TEST_ARTIFACTS:-$(cd "$(dirname "$SLUICE")" && pwd)/test-artifacts}/serve

test_expect_success 'setup: a run awaiting review (each attempt adds a line), the desk' '
	printf "%s\n" "echo attempt >>a.txt" >"$BUILDERS/A.sh" &&
	sluice_repo desk && wo desk A &&
	sluice -C desk tick >/dev/null &&
	ra=$(run_of desk A) && test "$(state_of desk $ra)" = awaiting_review &&
	("$SLUICE" -C desk serve >serve.out 2>serve.err & echo $! >serve.pid) &&
	i=0 &&
	while ! grep -q "token=" serve.out && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done &&
	test_grep "token=" serve.out
'
test_when_finished "kill \$(cat '$TRASH/serve.pid') 2>/dev/null"

test_expect_success 'in Chromium: the typed-in tab refused (409), the idle tab live, the fresh page approves' '
	mkdir -p "$ARTIFACTS" && rm -f "$ARTIFACTS"/stale-*.png &&
	url=$(grep -o "http://[^ ]*" serve.out) && ra=$(run_of desk A) &&
	if ! DESK_URL=$url DESK_REPO="$TRASH/desk" DESK_RUN=$ra DESK_ARTIFACTS="$ARTIFACTS" \
		DESK_PROFILE="$TRASH/profile" SLUICE="$SLUICE" CHROMIUM="$CHROMIUM" \
		NODE_PATH="$BROWSER_MODULES" node "$SLUICE_SOURCE_DIR/tests/browser/stale.js" >stale.out 2>&1
	then
		cat stale.out && return 1
	fi &&
	cat stale.out &&
	test_grep -v "^not ok" stale.out &&
	test_grep "^ok - its Approve is refused: 409" stale.out &&
	test_grep "^ok - its Approve approves attempt 2" stale.out
'

test_expect_success 'one approval, of attempt 2, as the person via sluice serve' '
	ra=$(run_of desk A) &&
	test "$(state_of desk $ra)" = approved &&
	sluice -C desk log $ra >log &&
	test "$(grep -c "approved by" log)" = 1 &&
	test_grep "approved by .* via sluice serve" log &&
	head=$(sluice -C desk status --json $ra | sed -n "s/^ *\"head_commit\": \"\([0-9a-f]*\)\".*/\1/p") &&
	tree=$(git -C desk rev-parse "$head^{tree}") &&
	sluice -C desk status --json $ra >st && test_grep "\"approved_tree\": \"$tree\"" st &&
	test_grep "\"attempt\": 2" st &&
	test_grep "seen attempt 2" desk/.system/runs/$ra/review.json
'

test_expect_success 'the server stops on SIGTERM, having said nothing on stderr' '
	kill $(cat serve.pid) &&
	i=0 &&
	while kill -0 $(cat serve.pid) 2>/dev/null && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done &&
	! kill -0 $(cat serve.pid) 2>/dev/null &&
	if test -s serve.err; then cat serve.err && return 1; fi
'

test_done
