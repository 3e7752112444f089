#!/bin/sh
# sluice serve with 10,000 runs (issue 16: "a page with 10,000 runs answers
# in under a second, paged"): a repository made by tests/browser/many_runs.sh
# (one real merged run and 9,999 copies of its row inserted with sqlite3,
# 3 runs a work order), 60 more commits on main; `sluice serve` on it; the
# wall time of `curl` fetching /runs, /runs?page=150,
# /runs?state=merged&page=200, / (the queue, the "Waiting for you" runs and
# the dependency graph) and a run's page, the median of REPS each, next to
# `git log --oneline -n 50` in the same repository (a whole process, as curl
# is) as the ratio. Then / again over a second store of N runs with 100 runs
# a work order (the queue's reading of the runs grows with that number).
#
#   bench/serve.sh [N] [REPS]     SLUICE=path/to/sluice (default build/sluice)
#
# Prints the figures and appends them to bench/RESULTS.md under
# "## Issue 16: sluice serve". Not a test: no timing is asserted anywhere
# (t1076 checks the paging at 10,000 runs).
set -eu

N=${1:-10000}
REPS=${2:-21}
HERE=$(cd "$(dirname "$0")" && pwd)
SLUICE=${SLUICE:-$HERE/../build/sluice}
SLUICE=$(cd "$(dirname "$SLUICE")" && pwd)/$(basename "$SLUICE")
RESULTS=$HERE/RESULTS.md
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-serve.XXXXXX")
PID=""
trap '[ -z "$PID" ] || kill "$PID" 2>/dev/null || :; rm -rf "$WORK"' EXIT INT TERM
TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')

now_ms() { date +%s%N | awk '{ printf "%.3f", $1 / 1000000 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }

# The median wall time, in ms, of REPS runs of a command.
time_cmd() {
	i=0
	while [ $i -lt "$REPS" ]; do
		t0=$(now_ms)
		"$@" >/dev/null
		t1=$(now_ms)
		awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }'
		i=$((i + 1))
	done | median
}

# A store of N runs, PER_WO a work order, in DIR, 60 more commits on main,
# and sluice serve on it ($PID, $PORT); the real run's id in $real.
serve_on() { # DIR PER_WO
	real=$("$HERE/../tests/browser/many_runs.sh" "$SLUICE" "$1" "$N" "$2")
	cd "$1"
	i=0
	while [ $i -lt 60 ]; do git commit -q --allow-empty -m "commit $i"; i=$((i + 1)); done
	SLUICE_SERVE_TOKEN=$TOKEN "$SLUICE" serve >"$1.serve" 2>&1 &
	PID=$!
	i=0
	while ! grep -q "token=" "$1.serve" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	PORT=$(grep -o "127\.0\.0\.1:[0-9]*" "$1.serve" | cut -d: -f2)
	get /runs # warm: the page cache
}
get() { curl -sf -o /dev/null -u "sluice:$TOKEN" "http://127.0.0.1:$PORT$1"; }

serve_on "$WORK/repo" 3

git_log=$(time_cmd git log --oneline -n 50)
row() { # LABEL PATH
	ms=$(time_cmd get "$2")
	echo "| $1 | $ms | $(ratio "$ms" "$git_log")x |"
}
rows=$(
	row '`/runs` (page 1)' /runs
	row '`/runs?page=150`' '/runs?page=150'
	row '`/runs?state=merged&page=200`' '/runs?state=merged&page=200'
	row '`/` (queue, waiting runs, graph)' /
	row "\`/runs/<id>\` (the real run's dossier)" "/runs/$real"
)
count=$(sqlite3 .system/sluice.db "SELECT count(*) FROM runs")
kill "$PID" && wait "$PID" 2>/dev/null || true
serve_on "$WORK/repo100" 100
rows="$rows
$(row '`/` again, 100 runs a work order' /)"
kill "$PID" && wait "$PID" 2>/dev/null || true
PID=""

machine="$(uname -srm), $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
day=$(date -u +%Y-%m-%d)
load=$(cut -d' ' -f1-3 /proc/loadavg)
report=$(cat <<EOT
### bench/serve.sh, $day: $count runs in the store, 3 a work order ($machine, load $load)

Wall time of a whole \`curl\` process fetching the page (the token given), median of $REPS;
\`git log --oneline -n 50\` in the same repository as the unit.

| page | ms | vs git log -n 50 |
|---|---|---|
$rows
| \`git log --oneline -n 50\` | $git_log | 1x |
EOT
)
echo "$report"
if ! grep -q '^## Issue 16: sluice serve' "$RESULTS" 2>/dev/null; then
	printf '\n## Issue 16: sluice serve\n\nbench/serve.sh: the pages of `sluice serve` over a store of 10,000 runs (tests/browser/many_runs.sh), against `git log --oneline -n 50`.\n' >>"$RESULTS"
fi
# Insert at the end of the "## Issue 16: sluice serve" section (before the next "## ").
printf '%s\n' "$report" >"$WORK/report.md"
awk -v rf="$WORK/report.md" '
	function emit() { print ""; while ((getline l < rf) > 0) print l; done = 1 }
	/^## / { if (in_q && !done) emit(); in_q = ($0 ~ /^## Issue 16: sluice serve/) }
	{ print }
	END { if (!done) emit() }
' "$RESULTS" >"$WORK/results.md"
cp "$WORK/results.md" "$RESULTS"
