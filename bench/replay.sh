#!/bin/sh
# A replay of real history (issue 28, "No tree tested twice"): the last 15
# first-parent commits of jsmn (bench/data/jsmn.bundle, a small C library with
# its own suite, `make test`: four builds and runs of its tests), one work order
# each, landed by sluice with the suite as its gate (the run's own gating and
# the merge train's gate), against a plain loop of git on the same commits:
#
#   git apply the commit's diff, git commit, the suite
#
# Both run the suite the same way: the committed tree exported (git archive)
# into a temporary folder and `make test` there. sluice: queue.jobs 1, a
# command reviewer that approves at once, merge.reuse_green (default true),
# ticks back to back; its time is from the first tick to the last landing.
# Twice: as configured by default, and with merge.reuse_gating (a run's own
# green in a clean worktree stands for its car's tree). Also counted: the
# suite's runs (15 when no tree was tested twice).
#
#   bench/replay.sh [SLUICE_BINARY]      (default: build/sluice)
#   ROUNDS=3 bench/replay.sh
#
# Not a test: nothing here asserts on time; the goal (at most 1.1x the plain
# loop) is printed as met or not. KEEP=1 keeps the repositories.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-1}
SLUICE=${1:-${SLUICE:-$here/build/sluice}}
command -v make >/dev/null && command -v cc >/dev/null ||
	{ echo "bench/replay.sh needs make and cc" >&2; exit 1; }
. "$here/bench/lib.sh"
bench_setup replay "[SLUICE_BINARY]"


orig=$work/orig
git clone -q -b replay "$here/bench/data/jsmn.bundle" "$orig"
BASE=1682c32e9ae5990ddd0f0e907270a0f6dde5cbe9
git -C "$orig" rev-list --reverse --first-parent "$BASE..replay" >"$work/commits"
n=$(wc -l <"$work/commits")

# The suite on the committed tree, in a folder of its own: sh suite.sh LOG
cat >"$work/suite.sh" <<'EOS'
d=$(mktemp -d)
git archive HEAD | tar -x -C "$d"
echo "$(git rev-parse HEAD^{tree})" >>"$1"
make -C "$d" test >/dev/null 2>&1
rc=$?
rm -rf "$d"
exit $rc
EOS

# The plain loop: apply, commit, suite, for each commit.
plain() { # DIR
	git clone -q "$orig" "$1"
	git -C "$1" checkout -q -b main "$BASE"
	t0=$(now_ms)
	while read -r c; do
		git -C "$orig" diff --binary "$c^1" "$c" | git -C "$1" apply --index
		git -C "$1" commit -q -m "$c"
		(cd "$1" && sh "$work/suite.sh" "$1.suite-runs") || echo "red: $c" >&2
	done <"$work/commits"
	echo $(($(now_ms) - t0))
}

# sluice: one work order per commit, W01..W15, in order.
replay() { # DIR REUSE_GATING
	git clone -q "$orig" "$1"
	git -C "$1" checkout -q -b main "$BASE"
	(cd "$1" && "$SLUICE" init >/dev/null)
	printf '%s\n' 'cat >/dev/null' 'echo "{\"verdict\": \"approve\", \"reviewer\": \"bench\"}"' >"$work/approve.sh"
	cat >>"$1/.system/config.yaml" <<EOC
queue:
  jobs: 1
builder:
  command: [sh, -c, 'c=\$(cat "$work/wo-\$SLUICE_WORK_ORDER_ID"); git -C "$orig" diff --binary "\$c^1" "\$c" | git apply']
gates:
  suite: [sh, $work/suite.sh, $1.suite-runs]
merge:
  reuse_gating: $2
reviewer:
  mode: command
  command: [sh, $work/approve.sh]
EOC
	mkdir -p "$1/work_orders"
	i=1
	while read -r c; do
		id=W$(printf %02d $i)
		echo "$c" >"$work/wo-$id"
		printf -- '---\nid: %s\ntitle: replay %s\n---\nApply %s of jsmn.\n' "$id" "$c" "$c" \
			>"$1/work_orders/$id.md"
		i=$((i + 1))
	done <"$work/commits"
	"$SLUICE" -C "$1" check >/dev/null
	t0=$(now_ms)
	ticks_while "$1" '[ "$("$SLUICE" -C "$1" runs --state merged | grep -c "^[0-9]")" -lt "$n" ]'
	echo $(($(last_landing_ms "$1") - t0))
}

rows=""
r=1
while [ $r -le "$ROUNDS" ]; do
	p=$(plain "$work/plain$r")
	s=$(replay "$work/sluice$r" false)
	g=$(replay "$work/gating$r" true)
	for d in sluice$r gating$r; do
		[ "$(git -C "$work/$d" rev-parse 'main^{tree}')" = "$(git -C "$orig" rev-parse 'replay^{tree}')" ] ||
			{ echo "$d: sluice's main is not jsmn's tree" >&2; exit 1; }
	done
	rows="$rows| $r | $(secs "$p") s ($(wc -l <"$work/plain$r.suite-runs")) | $(secs "$s") s ($(wc -l <"$work/sluice$r.suite-runs")) | $(ratio "$s" "$p") | $(secs "$g") s ($(wc -l <"$work/gating$r.suite-runs")) | $(ratio "$g" "$p") |
"
	r=$((r + 1))
done

echo "bench/replay.sh: $n commits of jsmn (bench/data), one work order each; $(date -u +%Y-%m-%d),"
echo "$(uname -srm), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $(git --version)."
echo
echo "| round | plain git loop (suite runs) | sluice (suite runs) | / plain | sluice, merge.reuse_gating (suite runs) | / plain |"
echo "|---|---|---|---|---|---|"
printf '%s' "$rows"
