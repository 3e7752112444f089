#!/bin/sh
# The merge train's throughput (issue 12, docs/design.md, The merge train): N approved
# runs, each adding a file of its own, and a merge gate that takes GATE
# seconds (`sleep`), landed by sluice with merge.train_depth 1 and 4
# (queue.jobs 4), and by a plain serial loop of git commands: merge, test,
# revert on red.
#
#   bench/train.sh [--quick] [SLUICE_BINARY]     (default: build/sluice)
#   N=12 GATE=2 DEPTHS="1 4" JOBS=4 bench/train.sh
#
# --quick: 4 runs, a 0.3 s gate (a smoke run for CI; nothing is asserted).
# KEEP=1 keeps the repositories (their event logs say what each car did).
#
# The builder writes its file at once, the reviewer (command mode) approves
# at once, and the gate sleeps only in the train (where the worktree is
# detached at the car's merge commit; the build's gate runs on the run's
# branch and is instant), so the figure is the train's. The
# time measured is from the first approval to the last landing, from
# sluice's event log (`sluice log --json`). Ticks run back to back, as a
# busy cron would. Also counted: how many times the merge gate ran (N when
# no car was tested twice).
#
# The serial baseline takes the same run heads (the second parents of what
# sluice landed) in a clone at the same base and does, for each:
#   git merge --no-ff HEAD; sleep GATE || git reset --hard HEAD~1
# Its time is the whole loop (every run is "approved" when it starts).
#
# Prints a markdown table with the machine, date and versions. Repositories
# live under ${TMPDIR:-/tmp} and are removed afterwards. Not a test: nothing
# here asserts on time (the goal, depth 4 in at most a third of depth 1's
# time, is printed as met or not).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-12}
GATE=${GATE:-2}
if [ "${1:-}" = --quick ]; then
	N=4 GATE=0.3
	shift
fi
SLUICE=${1:-${SLUICE:-$here/build/sluice}}
DEPTHS=${DEPTHS:-"1 4"}
JOBS=${JOBS:-4}
command -v jq >/dev/null || { echo "bench/train.sh needs jq" >&2; exit 1; }
. "$here/bench/lib.sh"
bench_setup train "[--quick] [SLUICE_BINARY]"


printf '%s\n' 'cat >/dev/null' 'echo "{\"verdict\": \"approve\", \"reviewer\": \"bench\"}"' >"$work/approve.sh"

# A repository with N approved-at-once work orders and the train at DEPTH.
make_repo() { # DIR DEPTH
	git init -q -b main "$1"
	(cd "$1" && echo "# bench" >README.md && git add README.md && git commit -q -m base &&
		"$SLUICE" init >/dev/null)
	cat >>"$1/.system/config.yaml" <<EOC
queue:
  jobs: $JOBS
builder:
  command: [sh, -c, 'echo "\$SLUICE_WORK_ORDER_ID" >"f-\$SLUICE_WORK_ORDER_ID.txt"']
gates:
  slow: [sh, -c, 'git symbolic-ref -q HEAD >/dev/null || { echo x >>"$1.gate-runs"; sleep $GATE; }']
merge:
  gates: [slow]
  train_depth: $2
reviewer:
  mode: command
  command: [sh, $work/approve.sh]
EOC
	mkdir -p "$1/work_orders"
	i=1
	while [ $i -le "$N" ]; do
		printf -- '---\nid: W%02d\ntitle: file %d\n---\nAdd f-W%02d.txt.\n' $i $i $i \
			>"$1/work_orders/W$(printf %02d $i).md"
		i=$((i + 1))
	done
	: >"$1.gate-runs"
	"$SLUICE" -C "$1" check >/dev/null
}

# Ticks back to back until N runs are merged (at most 15 minutes).
land_all() { # DIR
	ticks_while "$1" '[ "$("$SLUICE" -C "$1" runs --state merged | grep -c "^[0-9]")" -lt "$N" ]'
}

# ms from the first approval to the last landing, from the event log.
train_ms() { # DIR
	"$SLUICE" -C "$1" log --json | jq '
		([.[] | select(.run != null and .from == "reviewing" and .to == "approved") | .at_ms] | min) as $a |
		([.[] | select(.run != null and .to == "merged") | .at_ms] | max) as $m | $m - $a'
}

# The serial loop on the heads sluice landed in DIR, in the same order.
serial_ms() { # DIR
	s="$1.serial"
	base=$(git -C "$1" rev-list --max-parents=0 main)
	git clone -q "$1" "$s"
	git -C "$s" reset -q --hard "$base"
	git -C "$1" log --reverse --first-parent --merges --format=%P main | cut -d' ' -f2 >"$s.heads"
	t0=$(now_ms)
	while read -r h; do
		git -C "$s" merge -q --no-ff -m "merge $h" "$h"
		sleep "$GATE" || git -C "$s" reset -q --hard HEAD~1
	done <"$s.heads"
	echo $(($(now_ms) - t0))
}

rows=""
first_ms=""
for depth in $DEPTHS; do
	d="$work/depth$depth"
	make_repo "$d" "$depth"
	land_all "$d"
	ms=$(train_ms "$d")
	runs=$(wc -l <"$d.gate-runs")
	[ -n "$first_ms" ] || { first_ms=$ms; first_repo=$d; first_depth=$depth; }
	eval "ms_$depth=$ms"
	rows="$rows| sluice, merge.train_depth $depth (queue.jobs $JOBS) | $(secs "$ms") s | $(ratio "$ms" "$first_ms") | $runs |
"
done
ser=$(serial_ms "$first_repo")
rows="$rows| git: merge, test, revert on red (serial loop) | $(secs "$ser") s | $(ratio "$ser" "$first_ms") | $N |
"

echo "bench/train.sh: $N runs, a merge gate of $GATE s; $(date -u +%Y-%m-%d), $(uname -srm),"
echo "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $(git --version)."
echo
echo "| landing | first approval to last landing | vs depth $first_depth | merge gate runs |"
echo "|---|---|---|---|"
printf '%s' "$rows"
echo
if [ -n "${ms_1:-}" ] && [ -n "${ms_4:-}" ]; then
	echo "depth 4 / depth 1: $(ratio "$ms_4" "$ms_1") (goal: at most 0.33: $(awk -v a="$ms_4" -v b="$ms_1" 'BEGIN { print (a * 3 <= b) ? "met" : "not met" }'));" \
		"depth 4 / serial git loop: $(ratio "$ms_4" "$ser")"
fi
