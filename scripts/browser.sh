#!/usr/bin/env bash
# Install what the browser tests of `sluice serve` (tests/cli/t1075-*.sh,
# tests/browser/*.js) drive Chromium with: puppeteer-core, at a pinned
# version, from the npm registry, into a test-only prefix: build/browser (or
# $SLUICE_BROWSER_PREFIX). puppeteer-core downloads no browser: the tests run
# Debian's chromium (/usr/bin/chromium, installed by scripts/deps.sh, or
# $SLUICE_CHROMIUM). Nothing is installed globally and nothing outside the
# prefix changes. Called by scripts/deps.sh; run again, it installs only when
# the pin changed.
#
# Without node and npm it says so and installs nothing: the browser tests
# then skip with that message (they never pass without having run).
set -eu
cd "$(dirname "$0")/.."
prefix=${SLUICE_BROWSER_PREFIX:-$(pwd)/build/browser}

# The pinned version: the newest 24.x, the last line that runs on Debian's
# node 20 (25.x wants node 22).
pins="puppeteer-core@24.43.1"

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	echo "browser: node or npm is not installed: puppeteer-core is not installed and the browser tests will skip" >&2
	exit 0
fi
if [ -f "$prefix/.pins" ] && [ "$(cat "$prefix/.pins")" = "$pins" ]; then
	echo "browser: puppeteer-core is installed in $prefix"
	exit 0
fi
mkdir -p "$prefix"
echo "browser: installing into $prefix: $pins"
# no browser download (puppeteer-core never does; the variable is for safety)
# shellcheck disable=SC2086
PUPPETEER_SKIP_DOWNLOAD=1 npm install --prefix "$prefix" --no-audit --no-fund --no-save \
	--loglevel=error $pins
printf '%s' "$pins" >"$prefix/.pins"
