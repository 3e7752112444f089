#!/bin/sh
# Two sluice binaries side by side on one `sluice tick --jobs 2` of N work
# orders (issue 29: 200 in one tick), taking turns ROUNDS times, each on a
# repository made afresh: 100 files, a builder that adds one file, a command
# reviewer that approves, no gates (as bench/run.sh part 3). Also the
# processes each starts per work order, counted with strace when it is
# installed (one extra tick of 20 work orders each).
#
#   bench/tick_ab.sh OLD_BINARY NEW_BINARY
#   ROUNDS=3 N=200 bench/tick_ab.sh OLD NEW
#
# Prints a markdown table: per round and binary the wall, user and system
# seconds (/usr/bin/time) and how many runs merged; then the medians. The
# machine's minutes vary by a third (bench/RESULTS.md): compare within one
# run of this script, never across. Nothing asserts on time. Everything lives
# under ${TMPDIR:-/tmp}, removed afterwards.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/lib.sh"
[ $# -eq 2 ] || { echo "usage: bench/tick_ab.sh OLD_BINARY NEW_BINARY" >&2; exit 2; }
for t in /usr/bin/time jq git; do
	command -v $t >/dev/null || { echo "bench/tick_ab.sh: needs $t" >&2; exit 2; }
done
[ -x "$1" ] || { echo "no sluice binary at $1" >&2; exit 1; }
OLD=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SLUICE=$2
bench_setup tick_ab "OLD_BINARY NEW_BINARY" # checks NEW, makes $work, git's identity
NEW=$SLUICE
ROUNDS=${ROUNDS:-3} N=${N:-200}
printf '%s\n' 'cat >/dev/null' 'echo "{\"verdict\": \"approve\", \"reviewer\": \"bench\"}"' \
	>"$work/approve.sh"

repo() { # BINARY DIR N: 100 files, N work orders
	rm -rf "$2"
	git init -q -b main "$2"
	(cd "$2" && mkdir d && echo "line 0" >f1.txt && i=1 &&
		while [ $i -lt 100 ]; do echo "file $i" >d/f$i.txt; i=$((i + 1)); done &&
		git add -A && git commit -q -m base && git gc -q)
	"$1" -C "$2" init >/dev/null
	cat >>"$2/.system/config.yaml" <<-EOC
	builder:
	  command: [sh, -c, 'echo "\$SLUICE_WORK_ORDER_ID" >"f-\$SLUICE_WORK_ORDER_ID.txt"']
	reviewer:
	  mode: command
	  command: [sh, $work/approve.sh]
	merge:
	  gates: []
	EOC
	mkdir -p "$2/work_orders"
	i=1
	while [ $i -le "$3" ]; do
		w=$(printf 'W%04d' $i)
		printf -- '---\nid: %s\ntitle: bench %s\n---\nBenchmark work order.\n' "$w" "$w" \
			>"$2/work_orders/$w.md"
		i=$((i + 1))
	done
	"$1" -C "$2" check >/dev/null
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "# bench/tick_ab.sh, $(date -u '+%Y-%m-%d %H:%M') UTC, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "$N work orders in one \`sluice tick --jobs 2\`, $ROUNDS rounds taking turns."
echo
echo "| round | binary | wall s | user s | sys s | merged |"
echo "|---|---|---|---|---|---|"
r=1
while [ $r -le "$ROUNDS" ]; do
	for which in old new; do
		b=$OLD
		[ $which = old ] || b=$NEW
		repo "$b" "$work/r" "$N"
		sync
		/usr/bin/time -f "%e %U %S" -o "$work/time" "$b" -C "$work/r" tick --jobs 2 \
			>"$work/out" 2>&1 || true
		merged=$("$b" -C "$work/r" runs --json | jq '[.[] | select(.state == "merged")] | length')
		set -- $(cat "$work/time")
		echo "| $r | $which | $1 | $2 | $3 | $merged of $N |"
		echo "$1" >>"$work/wall.$which"
	done
	r=$((r + 1))
done
echo
echo "Median wall: old $(median <"$work/wall.old") s, new $(median <"$work/wall.new") s."
if command -v strace >/dev/null; then
	for which in old new; do
		b=$OLD
		[ $which = old ] || b=$NEW
		repo "$b" "$work/p" 20
		strace -f -qq -o "$work/trace" -e trace=execve "$b" -C "$work/p" tick --jobs 2 \
			>/dev/null 2>&1 || true
		all=$(grep 'execve(' "$work/trace" | grep -vc ENOENT || true)
		git=$(grep 'execve("[^"]*/git"' "$work/trace" | grep -vc ENOENT || true)
		echo "Processes a work order, $which: $(awk -v a="$all" 'BEGIN { printf "%.1f", (a - 1) / 20 }') (git $(awk -v g="$git" 'BEGIN { printf "%.1f", g / 20 }'))."
	done
fi
