#!/bin/sh
# sluice report: one self-contained HTML page with every run, escaped; the DOT graph;
# a headless Chromium screenshot of the page.
. "$(dirname "$0")/lib.sh"

run_of() { # WO-ID: the newest run of a work order (in the current repository)
	sluice runs --wo "$1" --json | sed -n 's/^    "id": "\(.*\)",$/\1/p' | head -n 1
}

test_expect_success 'setup: merged, failed and waiting runs; dependencies; a hostile title' '
	test_repo repo && (cd repo && sluice init >/dev/null &&
	cat >>.system/config.yaml <<-\EOF &&
	builder:
	  command: [sh, -c, "test \"$SLUICE_WORK_ORDER_ID\" != WO-F || exit 3; echo $SLUICE_WORK_ORDER_ID >$SLUICE_WORK_ORDER_ID.txt"]
	EOF
	printf -- "---\nid: WO-1\ntitle: First & foremost\n---\n" >work_orders/WO-1.md &&
	printf -- "---\nid: WO-F\ntitle: Fails\n---\n" >work_orders/WO-F.md &&
	sluice tick >/dev/null 2>&1 && sluice approve $(run_of WO-1) >/dev/null && sluice tick >/dev/null &&
	printf -- "---\nid: WO-2\ntitle: \"<script>alert(1)</script>\"\ndepends_on: [WO-1]\n---\n" >work_orders/WO-2.md &&
	printf -- "---\nid: WO-3\ntitle: Third\ndepends_on: [WO-2, WO-F]\n---\n" >work_orders/WO-3.md &&
	sluice tick >/dev/null 2>&1 &&
	sluice runs --state merged --json | grep -q "\"WO-1\"" &&
	sluice runs --state failed --json | grep -q "\"WO-F\"" &&
	sluice runs --state awaiting_review --json | grep -q "\"WO-2\"")
'

test_expect_success 'report --html: every run appears; queue, states, graph, timelines' '
	(cd repo && sluice report --html ../page.html --dot ../graph.dot 2>../err &&
	 for r in $(sluice runs --json | sed -n "s/^    \"id\": \"\(.*\)\",$/\1/p"); do
		test_grep "id=\"run-$r\"" ../page.html || exit 1
	 done) &&
	test $(grep -o "id=\"run-[^\"]*\"" page.html | sort -u | wc -l) -eq 3 &&
	test_grep "<h2>Queue</h2>" page.html && test_grep "<h2>Runs by state</h2>" page.html &&
	test_grep "<h2>Dependency graph</h2>" page.html && test_grep "<svg" page.html &&
	test_grep "<th>stage</th><th>time</th>" page.html &&
	test_grep "approved -> merging\|<td>approved</td><td>merging</td>" page.html &&
	test_grep "wrote ../page.html" err
'

test_expect_success 'report --html: everything escaped, nothing external' '
	test_grep -v "<script" page.html &&
	test_grep "&lt;script&gt;alert(1)&lt;/script&gt;" page.html &&
	test_grep "First &amp; foremost" page.html &&
	test_grep -v "src=" page.html && test_grep -v "@import" page.html &&
	test_grep -v "url(http" page.html &&
	test -z "$(grep -o "href=\"[^#][^\"]*\"" page.html)" &&
	test -z "$(grep -o "https\?://[^\"]*" page.html | grep -v "^http://www.w3.org/2000/svg$")"
'

test_expect_success 'report --dot: nodes and dependency edges' '
	test_grep "^digraph work_orders {$" graph.dot &&
	test_grep "\"WO-1\" -> \"WO-2\";" graph.dot &&
	test_grep "\"WO-2\" -> \"WO-3\";" graph.dot && test_grep "\"WO-F\" -> \"WO-3\";" graph.dot &&
	test_grep "label=\"WO-2\\\\n<script>alert(1)</script>\\\\n(running)\"" graph.dot &&
	test_skip_unless_tool dot &&
	dot -Tsvg graph.dot >/dev/null
'

test_expect_success 'report without options writes the page to stdout' '
	(cd repo && sluice report >../stdout.html) && test_grep "</html>" stdout.html
'

test_expect_success 'a headless Chromium screenshot of the page is a PNG' '
	{ command -v chromium || command -v chromium-browser || command -v google-chrome ||
		test_skip "chromium not installed"; } >/dev/null &&
	"$SLUICE_SOURCE_DIR/scripts/report-screenshot.sh" page.html shot.png 1280x2000 >/dev/null &&
	test -s shot.png &&
	test "$(head -c 8 shot.png | od -An -tx1 | tr -d " \n")" = 89504e470d0a1a0a
'

test_done
