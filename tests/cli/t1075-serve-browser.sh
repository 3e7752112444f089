#!/bin/sh
# sluice serve in a real browser (issue 16): Debian's chromium, headless,
# driven by tests/browser/desk.js through puppeteer-core (scripts/browser.sh
# installs it into build/browser; scripts/deps.sh installs chromium). A
# repository with a manual reviewer and three runs: A merged, B in
# merge_conflict with A (merge.resolver: none, as t0210 scenario 3), C
# awaiting review, its work order titled <script>window.pwned=1</script>.
# In Chromium: the printed address, the queue, the runs, Approve on C's page,
# `sluice tick` and the open page showing C merged from the event stream (no
# reload), the conflict page with both work orders side by side; the title
# stays text and never runs.
#
# A screenshot of each page is kept, outside the trash directory, in
# test-artifacts/serve/ next to the sluice binary under test (build/t/
# test-artifacts/serve/*.png for build/t), or in $SLUICE_TEST_ARTIFACTS.
# Without node, chromium or puppeteer-core the test skips (exit 77).
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool node git curl

CHROMIUM=${SLUICE_CHROMIUM:-$(command -v chromium || echo /usr/bin/chromium)}
[ -x "$CHROMIUM" ] ||
	test_skip_all "chromium is not installed (scripts/deps.sh installs Debian's chromium)"
BROWSER_MODULES=${SLUICE_BROWSER_PREFIX:-${SLUICE_SOURCE_DIR:?}/build/browser}/node_modules
[ -f "$BROWSER_MODULES/puppeteer-core/package.json" ] ||
	test_skip_all "puppeteer-core is not installed in $BROWSER_MODULES (scripts/browser.sh installs it; it needs node and npm)"
ARTIFACTS=${SLUICE_TEST_ARTIFACTS:-$(cd "$(dirname "$SLUICE")" && pwd)/test-artifacts}/serve

test_expect_success 'setup: A merged, B in merge_conflict with A, C awaiting review' '
	sluice_repo desk "merge:" "  resolver: none" &&
	seq 1 10 >desk/lines.txt && git -C desk add lines.txt && git -C desk commit -q -m lines &&
	cat >"$BUILDERS/A.sh" <<-\EOS &&
	sed -i "5s/.*/five by A/" lines.txt
	echo "A rewrote line five for the A goal" >"$SLUICE_RUN_DIR/summary.md"
	EOS
	cat >"$BUILDERS/B.sh" <<-\EOS &&
	sed -i "5s/.*/five by B/" lines.txt
	echo "B rewrote line five for the B goal" >"$SLUICE_RUN_DIR/summary.md"
	EOS
	cat >"$BUILDERS/C.sh" <<-\EOS &&
	echo "from C" >c.txt
	echo "C wrote c.txt" >"$SLUICE_RUN_DIR/summary.md"
	EOS
	wo desk A && wo desk B &&
	printf "%s\n" "---" "id: C" "title: \"<script>window.pwned=1</script>\"" "---" \
		"Do the work of C." >desk/work_orders/C.md &&
	sluice -C desk tick --jobs 3 >/dev/null &&
	ra=$(run_of desk A) && rb=$(run_of desk B) && rc=$(run_of desk C) &&
	test "$(state_of desk $ra)" = awaiting_review &&
	test "$(state_of desk $rb)" = awaiting_review &&
	test "$(state_of desk $rc)" = awaiting_review &&
	sluice -C desk approve $ra >/dev/null && sluice -C desk approve $rb >/dev/null &&
	sluice -C desk tick --jobs 1 >/dev/null &&
	test "$(state_of desk $ra)" = merged &&
	test "$(state_of desk $rb)" = merge_conflict &&
	test "$(state_of desk $rc)" = awaiting_review
'

test_expect_success 'sluice serve starts on a free port of 127.0.0.1 and prints its address' '
	("$SLUICE" -C desk serve --listen 127.0.0.1:0 >serve.out 2>serve.err & echo $! >serve.pid) &&
	i=0 &&
	while ! grep -q "token=" serve.out && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done &&
	test_grep "^  http://127\.0\.0\.1:[0-9]*/?token=[0-9a-f]\{64\}$" serve.out
'
test_when_finished "kill \$(cat '$TRASH/serve.pid') 2>/dev/null"

test_expect_success 'in Chromium: queue, runs, approve, a tick followed live, the conflict page' '
	rm -rf "$ARTIFACTS" && mkdir -p "$ARTIFACTS" &&
	url=$(grep -o "http://[^ ]*" serve.out) &&
	ra=$(run_of desk A) && rb=$(run_of desk B) && rc=$(run_of desk C) &&
	if ! DESK_URL=$url DESK_REPO="$TRASH/desk" DESK_AWAIT=$rc DESK_CONFLICT=$rb \
		DESK_RIVAL=$ra DESK_ARTIFACTS="$ARTIFACTS" DESK_PROFILE="$TRASH/profile" \
		DESK_OUT="$TRASH" \
		SLUICE="$SLUICE" CHROMIUM="$CHROMIUM" NODE_PATH="$BROWSER_MODULES" \
		node "$SLUICE_SOURCE_DIR/tests/browser/desk.js" >desk.out 2>&1
	then
		cat desk.out && return 1
	fi &&
	cat desk.out &&
	test_grep -v "^not ok" desk.out &&
	test_grep "^ok - the two work orders are side by side" desk.out &&
	test_grep "^ok - window.pwned is still undefined" desk.out
'

test_expect_success 'C merged, its approval recorded as the person via sluice serve' '
	rc=$(run_of desk C) &&
	test "$(state_of desk $rc)" = merged &&
	sluice -C desk show $rc >show &&
	test_grep "via sluice serve" show &&
	git -C desk show main:c.txt >c && test_grep "from C" c
'

# artifact_put_esc writes a newline as the two characters \n (the report's
# one-line cells): a <pre> of the pages (work order, summary, hunks, gate
# output, what to do next) shows as one line with \n in it.
test_expect_success 'the conflict page shows the work order on its lines' '
	test_grep "^id: B$" conflict-side.txt &&
	test_grep -v "\\\\n" conflict-side.txt
'

test_expect_success 'a screenshot of each page is kept' '
	for p in queue runs run run-merged diff conflict audit; do
		test -s "$ARTIFACTS/$p.png" &&
		test "$(head -c 8 "$ARTIFACTS/$p.png" | od -An -c | tr -d " ")" = "211PNG\r\n032\n" ||
		return 1
	done
'

test_expect_success 'the server stops on SIGTERM, having said nothing on stderr (no sanitizer report)' '
	kill $(cat serve.pid) &&
	i=0 &&
	while kill -0 $(cat serve.pid) 2>/dev/null && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done &&
	! kill -0 $(cat serve.pid) 2>/dev/null &&
	if test -s serve.err; then cat serve.err && return 1; fi
'

test_done
