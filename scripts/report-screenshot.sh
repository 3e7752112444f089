#!/bin/sh
# Screenshot of a `sluice report --html` page with headless Chromium.
#
#   scripts/report-screenshot.sh PAGE.html SHOT.png [WIDTHxHEIGHT]
#
# Installs Chromium with apt-get when it is missing (as root; otherwise it
# says what to run). The page is loaded from file:// with networking,
# extensions, sync and component updates off: a report page needs none of
# them (it is self-contained), and a screenshot that shows everything proves
# it. Exit 0 when SHOT.png was written and is a PNG.
set -eu

page=${1:?usage: report-screenshot.sh PAGE.html SHOT.png [WIDTHxHEIGHT]}
shot=${2:?usage: report-screenshot.sh PAGE.html SHOT.png [WIDTHxHEIGHT]}
size=${3:-1280x2000}

find_chromium() {
	for c in chromium chromium-browser google-chrome; do
		if command -v "$c" >/dev/null 2>&1; then
			command -v "$c"
			return 0
		fi
	done
	return 1
}

if ! chromium=$(find_chromium); then
	if [ "$(id -u)" -ne 0 ]; then
		echo "report-screenshot: chromium is not installed; run: sudo apt-get install -y chromium" >&2
		exit 1
	fi
	echo "report-screenshot: installing chromium (apt-get install -y chromium)" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null ||
		{ apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; }
	chromium=$(find_chromium)
fi

case $page in /*) ;; *) page=$(pwd)/$page ;; esac
case $shot in /*) ;; *) shot=$(pwd)/$shot ;; esac
test -f "$page" || { echo "report-screenshot: no such page '$page'" >&2; exit 1; }

profile=$(mktemp -d "${TMPDIR:-/tmp}/report-shot.XXXXXX")
trap 'rm -rf "$profile"' EXIT INT TERM
rm -f "$shot"
"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--disable-extensions --disable-dev-shm-usage --hide-scrollbars \
	--user-data-dir="$profile" --screenshot="$shot" --window-size="$(echo "$size" | tr x ,)" \
	"file://$page" >"$profile/chromium.log" 2>&1 || {
	echo "report-screenshot: chromium failed:" >&2
	tail -n 20 "$profile/chromium.log" >&2
	exit 1
}
# a PNG starts with \x89 P N G
if [ "$(head -c 4 "$shot" 2>/dev/null | od -An -c | tr -d ' ')" != '211PNG' ]; then
	echo "report-screenshot: '$shot' is not a PNG" >&2
	exit 1
fi
echo "$shot"
