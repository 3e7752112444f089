#!/bin/sh
# The neighbouring server (issue 25), in Debian's chromium driven by
# tests/browser/neighbour.js through puppeteer-core (as t1077): a person signs
# in to the desk, then opens a page of another server on 127.0.0.1 (another
# port: a dev server of a worktree), which records every credential the
# browser sends it (cookies, Authorization). Replayed with curl against the
# desk, with the desk's Host, Origin and Sec-Fetch-Site forged as a plain
# client can, each reads nothing (401, no form token) and approves nothing,
# even with the desk's real form token. Before, the browser handed the
# neighbour the token's cookie and the replay approved. Without node,
# chromium or puppeteer-core the test skips (exit 77).
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool node git curl

CHROMIUM=${SLUICE_CHROMIUM:-$(command -v chromium || echo /usr/bin/chromium)}
[ -x "$CHROMIUM" ] ||
	test_skip_all "chromium is not installed (scripts/deps.sh installs Debian's chromium)"
BROWSER_MODULES=${SLUICE_BROWSER_PREFIX:-${SLUICE_SOURCE_DIR:?}/build/browser}/node_modules
[ -f "$BROWSER_MODULES/puppeteer-core/package.json" ] ||
	test_skip_all "puppeteer-core is not installed in $BROWSER_MODULES (scripts/browser.sh installs it; it needs node and npm)"

TOKEN=00112233445566778899aabbccddeeff

test_expect_success 'setup: X awaiting review, sluice serve on the repository' '
	sluice_repo desk &&
	wo desk X && echo "echo x >x.txt" >"$BUILDERS/X.sh" &&
	sluice -C desk tick >/dev/null &&
	test "$(state_of desk $(run_of desk X))" = awaiting_review &&
	(SLUICE_SERVE_TOKEN=$TOKEN "$SLUICE" -C desk serve >serve.out 2>serve.err & echo $! >serve.pid) &&
	i=0 &&
	while ! grep -q "token=" serve.out && [ $i -lt 6000 ]; do sleep 0.1; i=$((i + 1)); done &&
	grep -o "127\.0\.0\.1:[0-9]*" serve.out >addr && test -s addr &&
	sed -n "s/.*?token=\([0-9a-f]*\).*/\1/p" serve.out >token && test -s token
'
test_when_finished "kill \$(cat '$TRASH/serve.pid') 2>/dev/null"

test_expect_success 'in Chromium: signed in to the desk, then a page of the neighbour' '
	url=$(grep -o "http://[^ ]*" serve.out) &&
	if ! DESK_URL=$url DESK_OUT="$TRASH" DESK_PROFILE="$TRASH/profile" CHROMIUM="$CHROMIUM" \
		NODE_PATH="$BROWSER_MODULES" node "$SLUICE_SOURCE_DIR/tests/browser/neighbour.js" >neighbour.out 2>&1
	then
		cat neighbour.out && return 1
	fi &&
	cat neighbour.out && test_grep -v "^not ok" neighbour.out &&
	test "$(cat seen)" -ge 4 &&
	echo "# the neighbour caught: $(wc -l <caught) credential header(s)" &&
	test_grep -v "$(cat token)" caught
'

test_expect_success 'what the neighbour caught, replayed with curl: no read, no form token, no approve' '
	a=$(cat addr) && x=$(run_of desk X) &&
	curl -s -u "sluice:$TOKEN" "http://$a/runs/$x" >page &&
	csrf=$(sed -n "s/.*name=\"csrf\" value=\"\([0-9a-f]*\)\".*/\1/p" page | head -n 1) &&
	test -n "$csrf" &&
	echo "x-none: nothing caught" >>caught &&
	while read -r h; do
		for p in / "/runs/$x" /audit; do
			curl -s -m 5 -o body -w "%{http_code}" -H "$h" -H "Host: $a" \
				-H "Sec-Fetch-Site: same-origin" "http://$a$p" >st &&
			test "$(cat st)" = 401 && test_grep -v "$csrf" body || return 1
		done &&
		curl -s -m 5 -o body -w "%{http_code}" -H "$h" -H "Host: $a" -H "Origin: http://$a" \
			-H "Sec-Fetch-Site: same-origin" --data "csrf=$csrf&comment=by+the+neighbour" \
			"http://$a/runs/$x/approve" >st &&
		test "$(cat st)" = 401 || return 1
	done <caught &&
	test "$(state_of desk $x)" = awaiting_review &&
	sluice -C desk show $x >show && test_grep -v "by the neighbour" show
'

test_done
