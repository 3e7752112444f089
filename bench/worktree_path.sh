#!/bin/sh
# `sluice worktree create --path P --branch B` (Smithers' options, issue 15)
# against `git worktree add -q -b B P` on the same repository, in turns, on
# generated repositories of SIZES files; and the idempotent second call
# (the worktree is there: nothing is done). The seed (seeds/004) says a
# worktree takes about 50-100 ms to make.
#
#   bench/worktree_path.sh [SLUICE_BINARY]     (default: $SLUICE, else build/t/sluice)
#   SIZES="100 1000 10000" REPS=7 bench/worktree_path.sh
#
# Prints a markdown table: median milliseconds and the ratio to git. Nothing
# asserts on time. Repositories live under ${TMPDIR:-/tmp}, removed afterwards.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
SLUICE=${1:-${SLUICE:-$here/build/t/sluice}}
SLUICE=$(cd "$(dirname "$SLUICE")" && pwd)/$(basename "$SLUICE")
SIZES=${SIZES:-"100 1000 10000"}
REPS=${REPS:-7}
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-wtpath.XXXXXX")
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

echo "| files | git worktree add -b (ms) | sluice create --path --branch (ms) | ratio | sluice again, created false (ms) |"
echo "|---:|---:|---:|---:|---:|"
for n in $SIZES; do
	r="$work/r$n"
	git init -q "$r"
	(cd "$r" && i=0 && mkdir -p d && while [ $i -lt "$n" ]; do
		echo "file $i" >"d/f$i.txt"; i=$((i + 1)); done &&
	 git add -A && git commit -q -m files)
	: >"$work/g" && : >"$work/s" && : >"$work/a"
	i=0
	while [ $i -lt "$REPS" ]; do
		ms git -C "$r" worktree add -q -b "g$i" "$work/wt-g$n-$i" >>"$work/g"
		ms "$SLUICE" -C "$r" worktree create --path "$work/wt-s$n-$i" --branch "s$i" >>"$work/s"
		ms "$SLUICE" -C "$r" worktree create --path "$work/wt-s$n-$i" --branch "s$i" >>"$work/a"
		i=$((i + 1))
	done
	g=$(median <"$work/g") s=$(median <"$work/s") a=$(median <"$work/a")
	echo "| $n | $g | $s | $(awk "BEGIN { printf \"%.2f\", $s / ($g ? $g : 1) }") | $a |"
	rm -rf "$r" "$work"/wt-*
done
