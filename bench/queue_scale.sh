#!/bin/sh
# Queue scale (docs/design.md, Benchmarks): ingest and order N work orders (10,000
# by default, a tenth of them depending on an earlier one) with
# `sluice queue --json`, cold (empty store) and warm (nothing changed), and
# after 100 files changed; compare with git doing the same amount of file
# work: `git add -A && git status` over the same files (cold index) and
# `git ls-files | git hash-object --stdin-paths` (hashing every file).
#
#   bench/queue_scale.sh [N]        SLUICE=path/to/sluice (default build/sluice)
#
# Prints the figures and appends them to bench/RESULTS.md under
# "## Queue scale". Not a test: no timing is asserted anywhere.
set -eu

N=${1:-10000}
HERE=$(cd "$(dirname "$0")" && pwd)
SLUICE=${SLUICE:-$HERE/../build/sluice}
RESULTS=$HERE/RESULTS.md
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-queue.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

cd "$WORK"
git init -q repo
cd repo
git config user.name bench && git config user.email bench@example.com
echo "# bench" >README.md && git add README.md && git commit -q -m init
"$SLUICE" init >/dev/null

for d in $(seq 0 49); do mkdir -p "work_orders/$(printf %02d "$d")"; done
awk -v n="$N" 'BEGIN {
	srand(42);
	for (i = 1; i <= n; i++) {
		dir = sprintf("work_orders/%02d", i % 50);
		f = sprintf("%s/WO-%05d.md", dir, i);
		printf "---\nid: WO-%05d\ntitle: Work order number %d\n", i, i > f;
		printf "goal: Make change %d to the module it names.\n", i > f;
		printf "priority: %d\ncreated_at: 2026-%02d-%02d\n", 1 + int(rand() * 5), 1 + i % 12, 1 + i % 28 > f;
		printf "context:\n  - src/mod%03d/file%d.c\n", i % 300, i % 7 > f;
		printf "tags: [bench, t%d]\n", i % 10 > f;
		if (i % 10 == 0)
			printf "depends_on: [WO-%05d]\n", i - 1 - int(rand() * 8) > f;
		printf "acceptance_criteria:\n  - It builds.\n  - The tests pass.\n---\n" > f;
		printf "## Notes\n\nBody of work order %d.\n", i > f;
		close(f);
	}
}'

t0=$(now); "$SLUICE" queue --json >../cold.json; t1=$(now)
cold=$(elapsed "$t0" "$t1")
t0=$(now); "$SLUICE" queue --json >../warm.json; t1=$(now)
warm=$(elapsed "$t0" "$t1")
for i in $(seq 1 100); do
	f=$(printf "work_orders/%02d/WO-%05d.md" $((i % 50)) "$i")
	echo "Edited." >>"$f"
done
t0=$(now); "$SLUICE" queue --json >../changed.json; t1=$(now)
changed=$(elapsed "$t0" "$t1")
listed=$(grep -c '"id": "WO-' ../cold.json)
ready=$(grep -c '"state": "ready"' ../warm.json || true)

rm -f .git/index
t0=$(now); git add -A && git status --porcelain >/dev/null; t1=$(now)
git_add=$(elapsed "$t0" "$t1")
t0=$(now); git ls-files | git hash-object --stdin-paths >/dev/null; t1=$(now)
git_hash=$(elapsed "$t0" "$t1")

machine="$(uname -srm), $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
day=$(date -u +%Y-%m-%d)
report=$(cat <<EOT
### $day: $N work orders ($machine)

| step | seconds | vs git add -A && git status | vs git hash-object of every file |
|---|---|---|---|
| sluice queue --json, cold (empty store) | $cold | $(ratio "$cold" "$git_add")x | $(ratio "$cold" "$git_hash")x |
| sluice queue --json, warm (nothing changed) | $warm | $(ratio "$warm" "$git_add")x | $(ratio "$warm" "$git_hash")x |
| sluice queue --json, 100 files changed | $changed | $(ratio "$changed" "$git_add")x | $(ratio "$changed" "$git_hash")x |
| git add -A && git status --porcelain (no index) | $git_add | 1x | |
| git ls-files \| git hash-object (every file) | $git_hash | | 1x |

$listed work orders listed, $ready ready in the warm listing; one in ten depends on an earlier one.
EOT
)
echo "$report"
if ! grep -q '^## Queue scale' "$RESULTS" 2>/dev/null; then
	printf '\n## Queue scale\n\nbench/queue_scale.sh: ingest and order work orders with `sluice queue --json`, against git doing the same file work.\n' >>"$RESULTS"
fi
# Insert at the end of the "## Queue scale" section (before the next "## ").
printf '%s\n' "$report" >"$WORK/report.md"
awk -v rf="$WORK/report.md" '
	function emit() { print ""; while ((getline l < rf) > 0) print l; done = 1 }
	/^## / { if (in_q && !done) emit(); in_q = ($0 ~ /^## Queue scale/) }
	{ print }
	END { if (!done) emit() }
' "$RESULTS" >"$WORK/results.md"
cp "$WORK/results.md" "$RESULTS"
