#!/bin/sh
# sluice serve with 10,000 runs in the store, 100 a work order (tests/browser/many_runs.sh:
# one real run, merged, and 9,999 copies of its row inserted with the sqlite3
# CLI into .system/sluice.db): the runs page is paged, 50 rows a page, and
# its links walk to the last page (page=200), filtered or not; the queue
# page answers. No timing is asserted: bench/serve.sh measures the pages
# (bench/RESULTS.md, "Issue 16: sluice serve").
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool sqlite3 curl git

TOKEN=0123456789abcdef0123456789abcdef

# GET PATH into FILE with the token (the password); the status code is checked.
get() { # PATH FILE [STATUS]
	_code=$(curl -s -o "$2" -w "%{http_code}" -u "sluice:$TOKEN" \
		"http://127.0.0.1:$PORT$1") &&
	if [ "$_code" != "${3:-200}" ]; then
		echo "GET $1: $_code, not ${3:-200}" >&2 && cat "$2" >&2 && return 1
	fi
}
# The rows of the runs table of a page.
rows() { grep -c '^<tr><td><a href="/runs/' "$1"; }

test_expect_success 'setup: a store of 10,000 runs, and sluice serve on it' '
	"$SLUICE_SOURCE_DIR/tests/browser/many_runs.sh" "$SLUICE" many 10000 100 >real &&
	test "$(sqlite3 many/.system/sluice.db "SELECT count(*) FROM runs")" = 10000 &&
	(SLUICE_SERVE_TOKEN=$TOKEN "$SLUICE" -C many serve >serve.out 2>serve.err & echo $! >serve.pid) &&
	i=0 &&
	while ! grep -q "token=" serve.out && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done &&
	grep -o "127\.0\.0\.1:[0-9]*" serve.out | cut -d: -f2 >port &&
	test -s port
'
test_when_finished "kill \$(cat '$TRASH/serve.pid') 2>/dev/null"
PORT=$(cat "$TRASH/port" 2>/dev/null || echo 0)

test_expect_success 'page 1 of the runs: 50 rows, the newest first, a link to page 2' '
	get /runs p1 &&
	test "$(rows p1)" = 50 &&
	test_grep "10000 runs, page 1 of 200" p1 &&
	grep "^<tr><td><a href=\"/runs/" p1 | head -n 1 >first &&
	test_grep "$(cat real)" first &&
	test_grep "href=\"/runs?state=&amp;wo=&amp;page=2\"" p1 &&
	test_grep -v "newer" p1
'

test_expect_success 'the pager links walk to page 200, which has 50 rows and no older page' '
	get "/runs?page=199" p199 &&
	test "$(rows p199)" = 50 &&
	link=$(grep -o "href=\"/runs?[^\"]*page=200\"" p199 | sed -e "s/^href=\"//" -e "s/\"\$//" -e "s/&amp;/\\&/g") &&
	test -n "$link" &&
	get "$link" p200 &&
	test "$(rows p200)" = 50 &&
	test_grep "page 200 of 200" p200 &&
	test_grep -v "older" p200 &&
	test_grep "19990101-000000-m0009950\"" p200 &&
	test_grep "19990101-000000-m0009999\"" p200
'

test_expect_success 'a page of the middle holds the runs of that place' '
	get "/runs?page=150" p150 &&
	test "$(rows p150)" = 50 &&
	test_grep "page 150 of 200" p150 &&
	test_grep "19990101-000000-m0007450" p150 &&
	test_grep "19990101-000000-m0007499" p150 &&
	test_grep -v "19990101-000000-m0007449\"" p150 &&
	test_grep -v "19990101-000000-m0007500" p150
'

test_expect_success 'filtered by state and by work order, paged the same way' '
	get "/runs?state=merged&page=200" pm &&
	test "$(rows pm)" = 50 && test_grep "page 200 of 200" pm &&
	get "/runs?wo=MANY-0007" pw &&
	test "$(rows pw)" = 50 && test_grep "100 runs, page 1 of 2" pw &&
	test_grep "href=\"/runs?state=&amp;wo=MANY-0007&amp;page=2\"" pw &&
	get "/runs?state=awaiting_review" pa &&
	test_grep "0 runs, page 1 of 1" pa
'

test_expect_success 'the queue page and a run page answer with 10,000 runs in the store' '
	get / q &&
	test_grep "<h2>Queue</h2>" q &&
	get "/runs/$(cat real)" r &&
	test_grep "merged" r
'

test_done
