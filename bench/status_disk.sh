#!/bin/sh
# The cost of the disk line of `sluice status` (runner_disk_usage(): one
# nftw walk of .system/, bounded at 500,000 entries) against `du -s` of
# the same folder, with FILES files in worktrees under .system/runs/ (a
# checkout of 15,000 files is libgit2's; five failed runs keep five).
#
#   bench/status_disk.sh [SLUICE_BINARY]     (default: $SLUICE, else build/sluice)
#   FILES="0 15000 75000" REPS=5 bench/status_disk.sh
#
# Prints a markdown table: median milliseconds of `sluice status` and of
# `du -s .system`. Nothing asserts on time. Files are empty (the walk reads
# metadata only). The repository lives under ${TMPDIR:-/tmp}, removed afterwards.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
SLUICE=${1:-${SLUICE:-$here/build/sluice}}
SLUICE=$(cd "$(dirname "$SLUICE")" && pwd)/$(basename "$SLUICE")
FILES=${FILES:-"0 15000 75000"}
REPS=${REPS:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-disk.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GIT_CONFIG_NOSYSTEM=1 HOME="$work" GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@b \
	GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@b

ms() { # command...: wall milliseconds of the command (its output dropped)
	_t0=$(date +%s%N)
	"$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
	_t1=$(date +%s%N)
	echo $(((_t1 - _t0) / 1000000))
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# fill DIR N: N empty files, 1,000 a folder
fill() {
	_i=0
	while [ "$_i" -lt "$2" ]; do
		mkdir -p "$1/d$_i"
		(cd "$1/d$_i" && seq "$_i" $((_i + 999)) | sed 's/^/f/' | xargs touch)
		_i=$((_i + 1000))
	done
}

r="$work/repo"
git init -q "$r"
(cd "$r" && echo x >x && git add x && git commit -q -m x && "$SLUICE" init >/dev/null)
echo "| files under .system/ | sluice status (ms) | du -s .system (ms) |"
echo "|---:|---:|---:|"
have=0
for n in $FILES; do
	if [ "$n" -gt "$have" ]; then
		fill "$r/.system/runs/bench-$n/worktree" $((n - have))
		have=$n
	fi
	s=$(i=0; while [ $i -lt "$REPS" ]; do ms "$SLUICE" -C "$r" status; i=$((i + 1)); done | median)
	d=$(i=0; while [ $i -lt "$REPS" ]; do ms du -s "$r/.system"; i=$((i + 1)); done | median)
	echo "| $n | $s | $d |"
done
