#!/bin/sh
# diff.patch and files_changed.json (what a run writes, through the hidden
# `sluice test-diff`) against `git diff --binary --full-index -M` on a
# generated repository: N files, a run changing a share of them (edits,
# renames, deletions, additions, binary files).
#
#   bench/diff.sh [SLUICE_BINARY]        (default: build/bench/sluice)
#   FILES=10000 ITER=5 bench/diff.sh
#
# Prints a markdown table: median milliseconds and the ratio to git. Also
# checks that the patch is byte-identical to git's.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
SLUICE=${1:-$here/build/bench/sluice}
FILES=${FILES:-10000}
ITER=${ITER:-5}
if [ ! -x "$SLUICE" ]; then
	cmake -S "$here" -B "$here/build/bench" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build "$here/build/bench" --target sluice -j2 >/dev/null
	SLUICE=$here/build/bench/sluice
fi
SLUICE=$(cd "$(dirname "$SLUICE")" && pwd)/$(basename "$SLUICE")
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-diff.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GIT_CONFIG_NOSYSTEM=1 HOME="$work" GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@b \
	GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@b

r="$work/repo"
git init -q -b main "$r"
cd "$r"
i=0
while [ $i -lt "$FILES" ]; do
	d=dir$((i % 100))
	mkdir -p $d
	seq $i $((i + 40)) | sed "s/^/line /" >$d/f$i.txt
	i=$((i + 1))
done
git add -A && git commit -q -m base
base=$(git rev-parse HEAD)
# the run: 20% edited, 5% renamed, 2% deleted, 3% added, 0.5% binary
i=0
while [ $i -lt "$FILES" ]; do
	d=dir$((i % 100))
	case $((i % 200)) in
	[0-9] | [1-3][0-9]) sed -i "5s/.*/edited $i/" $d/f$i.txt ;;
	4[0-9]) git mv -k $d/f$i.txt $d/g$i.txt ;;
	5[0-3]) git rm -q $d/f$i.txt ;;
	6[0-5]) echo "new $i" >$d/n$i.txt ;;
	70) head -c 4096 /dev/urandom >$d/b$i.bin ;;
	esac
	i=$((i + 1))
done
git add -A && git commit -q -m run
head=$(git rev-parse HEAD)

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ms() { # command...: elapsed milliseconds
	s=$(date +%s%N)
	"$@" >/dev/null 2>&1
	e=$(date +%s%N)
	echo $(((e - s) / 1000000))
}

n=0
: >"$work/git.t"
: >"$work/sluice.t"
while [ $n -lt "$ITER" ]; do
	ms sh -c "git diff --binary --full-index -M $base $head >'$work/git.patch'" >>"$work/git.t"
	ms "$SLUICE" test-diff "$base" "$head" "$work/s.patch" "$work/s.json" >>"$work/sluice.t"
	n=$((n + 1))
done
cmp -s "$work/git.patch" "$work/s.patch" && same=yes || same=NO
g=$(median <"$work/git.t")
s=$(median <"$work/sluice.t")
changed=$(git diff --name-only -M "$base" "$head" | wc -l)
echo "$FILES files, $changed changed, patch $(wc -c <"$work/git.patch") bytes, byte-identical: $same"
echo
echo "| command | ms (median of $ITER) | vs git |"
echo "|---|---|---|"
echo "| \`git diff --binary --full-index -M base head\` | $g | 1.00 |"
echo "| \`sluice test-diff\` (diff.patch + files_changed.json) | $s | $(awk "BEGIN { printf \"%.2f\", $s / ($g ? $g : 1) }") |"
