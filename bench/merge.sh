#!/bin/sh
# sluice merge-preview vs git merge-tree on a generated repository (docs/design.md, Benchmarks).
#
#   SLUICE=path/to/sluice bench/merge.sh [FILES] [RUNS]     (default 10000 files, 11 runs)
#
# Builds a repository of FILES files in 100 directories; the run branch
# edits 5% of the files and renames 1%, main edits another 1%. Times, as
# the median of RUNS runs each (whole process, wall clock):
#   - git merge-tree --write-tree main run
#   - sluice merge-preview main run            (git merge-tree is the authority: one git process)
#   - sluice merge-preview --libgit2 main run  (plus libgit2's in-memory merge as a second opinion)
#   - sluice --version                         (sluice's process start alone, for scale)
# and prints a Markdown section for bench/RESULTS.md on stdout.
set -eu

files=${1:-10000}
runs=${2:-11}
: "${SLUICE:?set SLUICE to the sluice binary}"
case $SLUICE in /*) ;; *) SLUICE=$(pwd)/$SLUICE ;; esac

dir=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-merge.XXXXXX")
trap 'rm -rf "$dir"' EXIT
export HOME="$dir" GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com

cd "$dir" && git init -q -b main repo && cd repo
awk -v n="$files" 'BEGIN {
	for (i = 0; i < n; i++) {
		f = sprintf("d%02d/f%06d.txt", i % 100, i)
		if (i < 100) system("mkdir -p " sprintf("d%02d", i))
		for (l = 1; l <= 20; l++) print "file " i " line " l > f
		close(f)
	}
}'
git add -A && git commit -qm base && git branch run
# main: edit 1% (every 100th file, offset 50)
git ls-files | awk 'NR % 100 == 50' | while read -r f; do sed -i 3s/line/main/ "$f"; done
git commit -qam main
git checkout -q run
git ls-files | awk 'NR % 20 == 1' | while read -r f; do sed -i 10s/line/run/ "$f"; done
git ls-files | awk 'NR % 100 == 7' | while read -r f; do git mv "$f" "$f.renamed"; done
git commit -qam run
git checkout -q main
git gc -q

now_ms() { echo $(($(date +%s%N) / 1000000)); }

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

time_it() { # runs command...: the median wall time in ms
	i=0
	while [ $i -lt "$runs" ]; do
		t0=$(now_ms)
		"$@" >/dev/null 2>&1 || [ $? = 1 ]
		echo $(($(now_ms) - t0))
		i=$((i + 1))
	done | median
}

# all three must agree on the tree before we time anything
want=$(git merge-tree --write-tree main run)
got=$("$SLUICE" merge-preview --libgit2 main run)
[ "$(echo "$got" | sed -n 2p)" = "$want" ] && [ "$(echo "$got" | sed -n 3p)" = "libgit2: clean $want" ] ||
	{ echo "trees differ: git $want, sluice $got" >&2; exit 1; }

t_git=$(time_it git merge-tree --write-tree main run)
t_sl=$(time_it "$SLUICE" merge-preview main run)
t_lg=$(time_it "$SLUICE" merge-preview --libgit2 main run)
t_start=$(time_it "$SLUICE" --version)
changed=$(git diff --name-only main...run | wc -l)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }'; }

cat <<MD
## Merge

\`bench/merge.sh $files $runs\` on $(date -u +%Y-%m-%d), $(uname -srm), $(nproc) CPUs,
$(git --version), libgit2 $(pkg-config --modversion libgit2 2>/dev/null || echo '?').
Repository: $files files in 100 directories; the run changes $changed paths
(5% edited, 1% renamed), main edits another 1%; clean merge, identical trees.
Median of $runs runs, wall clock of the whole process.

| command | ms | vs git merge-tree |
|---|---|---|
| \`git merge-tree --write-tree main run\` | $t_git | 1.0 |
| \`sluice merge-preview\` (git merge-tree, the authority) | $t_sl | $(ratio "$t_sl" "$t_git") |
| \`sluice merge-preview --libgit2\` (+ libgit2's opinion) | $t_lg | $(ratio "$t_lg" "$t_git") |
| \`sluice --version\` (process start only) | $t_start | $(ratio "$t_start" "$t_git") |
MD
