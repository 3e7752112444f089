#!/usr/bin/env bash
# Install the real agent CLIs that the end-to-end tests of the builder presets
# run (tests/cli/t095x-agent-*.sh), at pinned versions, from the npm registry,
# into a test-only prefix: build/agents (or $SLUICE_AGENTS_PREFIX). Nothing is
# installed globally and nothing outside the prefix changes. Called by
# scripts/deps.sh; run again, it installs only when a pin changed.
#
# Without node and npm it says so and installs nothing: the agent tests then
# skip with that message (they never pass without having run).
set -eu
cd "$(dirname "$0")/.."
prefix=${SLUICE_AGENTS_PREFIX:-$(pwd)/build/agents}

# The pinned versions (the tests keep each CLI's --help as a fixture in
# fixtures/agents/: a new pin needs the fixture made again).
pins="@anthropic-ai/claude-code@2.1.100 @openai/codex@0.169.0 @google/gemini-cli@0.61.0"

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	echo "agents: node or npm is not installed: the real agent CLIs are not installed and their tests will skip" >&2
	exit 0
fi
if [ -f "$prefix/.pins" ] && [ "$(cat "$prefix/.pins")" = "$pins" ]; then
	echo "agents: the agent CLIs are installed in $prefix"
	exit 0
fi
mkdir -p "$prefix"
echo "agents: installing into $prefix: $pins"
# shellcheck disable=SC2086
npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error $pins
printf '%s' "$pins" >"$prefix/.pins"
