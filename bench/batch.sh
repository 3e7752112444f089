#!/bin/sh
# A train that keeps up (issue 28; docs/config.md, "Batches"): one gate runner
# (queue.jobs 1) and a merge gate of GATE seconds (`sleep`), N approved runs
# each adding a file of its own, landed by sluice:
#
#   serial     merge.batch 1: every car tested on its own (N gate runs)
#   batch      merge.batch 4, N green runs (goal: N/4 gate-times)
#   red        merge.batch 4, one red run among N (W07: green alone, red
#              merged with the others; merge.resolver none, so it waits in
#              merge_conflict): only it leaves (goal: at most 8 gate-times)
#   shared     a monorepo: two merge gates, web and api, of GATE seconds
#              each; two gate runners (queue.jobs 2), merge.batch 1, the runs
#              in web/ (odd) and api/ (even), one line (train_depth 2): every
#              car runs both gates
#   lanes      the same with merge.lanes web (web/**, gate web) and api
#              (api/**, gate api): each car runs its lane's gate (goal: about
#              twice the landings per minute of one shared line); both again
#              with W07 (web) red merged
#   flaky      merge.batch 1, a gate that fails 20% of its runs on any tree
#              (pseudo-random, seeded by the tree and its run count, so the
#              same trees give the same outcomes), merge.rerun_failed 2,
#              ROUNDS rounds: how many innocent runs left, and the flake rate
#              `sluice status --json` shows
#
#   bench/batch.sh [--quick] [SLUICE_BINARY]     (default: build/sluice)
#   N=12 GATE=5 ROUNDS=3 bench/batch.sh
#
# --quick: 8 runs, a 0.3 s gate, one flaky round (a smoke run; nothing is
# asserted). KEEP=1 keeps the repositories.
#
# Every run is built and approved first (reviewer.mode manual, `sluice
# approve` in order); the time measured is from the first tick after the
# approvals to the last landing (the event log), ticks back to back. The
# gate sleeps only in the train (a detached checkout of the car); the
# build's gate on the run's branch is instant. "gate-times" is that time
# over GATE. Prints a markdown table with the machine, date and versions.
# Not a test: nothing here asserts on time.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-12}
GATE=${GATE:-5}
ROUNDS=${ROUNDS:-3}
if [ "${1:-}" = --quick ]; then
	N=8 GATE=0.3 ROUNDS=1
	shift
fi
SLUICE=${1:-${SLUICE:-$here/build/sluice}}
command -v jq >/dev/null || { echo "bench/batch.sh needs jq" >&2; exit 1; }
. "$here/bench/lib.sh"
bench_setup batch "[--quick] [SLUICE_BINARY]"

gate_times() { awk -v ms="$1" -v g="$GATE" 'BEGIN { printf "%.1f", ms / 1000 / g }'; }

# The merge gate: sh gate.sh LOG KIND. Instant on a branch (the run's own
# gating); in the train it logs, sleeps GATE, and is red when KIND is red
# and the tree has bad.txt, or KIND is flaky and the tree's draw says so.
cat >"$work/gate.sh" <<EOS
git symbolic-ref -q HEAD >/dev/null && exit 0
t=\$(git rev-parse HEAD^{tree})
n=\$(grep -c "^\$t" "\$1" || true)
echo "\$t \$n" >>"\$1"
sleep $GATE
case \$2 in
red) ! ls bad.txt web/bad.txt api/bad.txt 2>/dev/null | grep -q . ;;
flaky) r=\$(printf '%s %s' "\$t" "\$n" | cksum | cut -d' ' -f1); [ \$((r % 5)) -ne 0 ] ;;
esac
EOS

# make_repo DIR BATCH KIND: N work orders built and approved in order (RERUN:
# merge.rerun_failed; JOBS: queue.jobs, default 1; LANES=1: merge.lanes web and api,
# and the runs' files in web/ (odd) and api/ (even) with JOBS above 1).
make_repo() {
	d=$1 batch=$2 kind=$3 jobs=${JOBS:-1}
	dir='.'
	[ "$jobs" = 1 ] || dir='$([ $((${SLUICE_WORK_ORDER_ID#W0} % 2)) = 1 ] && echo web || echo api)'
	gates="  slow: [sh, $work/gate.sh, $d.gate-runs, $kind]" mgates=slow lanes=""
	[ "$jobs" = 1 ] || gates="  web: [sh, $work/gate.sh, $d.gate-runs, $kind]
  api: [sh, $work/gate.sh, $d.gate-runs, $kind]" mgates="web, api"
	[ "${LANES:-0}" = 0 ] || lanes='  lanes: [{name: web, paths: ["web/**"], gates: [web]}, {name: api, paths: ["api/**"], gates: [api]}]'
	git init -q -b main "$d"
	(cd "$d" && echo "# bench $(basename "$d")" >README.md && git add README.md && git commit -q -m base &&
		"$SLUICE" init >/dev/null)
	cat >>"$d/.system/config.yaml" <<EOC
queue:
  jobs: $jobs
builder:
  command: [sh, -c, 'd=$dir; mkdir -p \$d; echo "\$SLUICE_WORK_ORDER_ID" >"\$d/f-\$SLUICE_WORK_ORDER_ID.txt"; [ "\$SLUICE_WORK_ORDER_ID" != W07 ] || [ "$kind" != red ] || echo bad >\$d/bad.txt']
gates:
$gates
merge:
  gates: [$mgates]
  batch: $batch
  resolver: none
  rerun_failed: ${RERUN:-1}
$lanes
reviewer:
  mode: manual
EOC
	mkdir -p "$d/work_orders"
	i=1
	while [ $i -le "$N" ]; do
		printf -- '---\nid: W%02d\ntitle: file %d\n---\nAdd f-W%02d.txt.\n' $i $i $i \
			>"$d/work_orders/W$(printf %02d $i).md"
		i=$((i + 1))
	done
	: >"$d.gate-runs"
	"$SLUICE" -C "$d" check >/dev/null
	while [ "$("$SLUICE" -C "$d" runs --state awaiting_review | grep -c '^[0-9]')" -lt "$N" ]; do
		"$SLUICE" -C "$d" tick --jobs "$N" >>"$d.ticks" 2>&1
	done
	i=1
	while [ $i -le "$N" ]; do
		r=$("$SLUICE" -C "$d" runs --wo "W$(printf %02d $i)" | grep '^[0-9]' | head -n 1 | cut -d' ' -f1)
		"$SLUICE" -C "$d" approve "$r" >/dev/null
		i=$((i + 1))
	done
	: >"$d.gate-runs"
}

# Ticks back to back until no run is approved or merging (at most 15 minutes);
# prints the ms from the first tick to the last landing.
land_all() { # DIR
	t0=$(now_ms)
	ticks_while "$1" '"$SLUICE" -C "$1" runs | awk "{ print \$3 }" | grep -qxE "approved|merging|resolving"'
	echo $(($(last_landing_ms "$1") - t0))
}

merged() { "$SLUICE" -C "$1" runs --state merged | grep -c '^[0-9]' || true; }
left() { "$SLUICE" -C "$1" runs | grep '^[0-9]' | awk '$3 != "merged" { print $2 }' | tr '\n' ' '; }
row() { # NAME DIR MS
	echo "| $1 | $(secs "$3") s | $(gate_times "$3") | $(wc -l <"$2.gate-runs") | $(merged "$2") of $N | $(awk -v n="$(merged "$2")" -v ms="$3" 'BEGIN { printf "%.1f", n * 60000 / ms }') | $(left "$2") |"
}

rows=""
for s in serial batch red; do
	d="$work/$s"
	case $s in
	serial) make_repo "$d" 1 green ;;
	batch) make_repo "$d" 4 green ;;
	red) make_repo "$d" 4 red ;;
	esac
	ms=$(land_all "$d")
	rows="$rows$(row "$s: merge.batch $([ $s = serial ] && echo 1 || echo 4)$([ $s = red ] && echo ", W07 red merged" || true)" "$d" "$ms")
"
done
for s in shared lanes shared-red lanes-red; do
	d="$work/$s"
	k=green
	case $s in *-red) k=red ;; esac
	case $s in
	shared*) JOBS=2 make_repo "$d" 1 $k ;;
	lanes*) JOBS=2 LANES=1 make_repo "$d" 1 $k ;;
	esac
	ms=$(land_all "$d")
	rows="$rows$(row "$s: queue.jobs 2$(case $s in lanes*) echo ", merge.lanes web, api" ;; esac)$([ $k = red ] && echo ", W07 red merged" || true)" "$d" "$ms")
"
done
flakes=""
round=1
while [ $round -le "$ROUNDS" ]; do
	d="$work/flaky$round"
	RERUN=2 make_repo "$d" 1 flaky
	ms=$(land_all "$d")
	rows="$rows$(row "flaky round $round: merge.batch 1, 20% red runs, rerun_failed 2" "$d" "$ms")
"
	flakes="$flakes $("$SLUICE" -C "$d" status --json | jq -r '[.merge_gates[]? | "\(.gate): flaky on \(.flaky) of \(.trees) trees (\(.flake_rate))"] | join(", ")')"
	round=$((round + 1))
done

echo "bench/batch.sh: $N runs, one gate runner (queue.jobs 1), a merge gate of $GATE s;"
echo "$(date -u +%Y-%m-%d), $(uname -srm), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $(git --version)."
echo
echo "| train | first tick to last landing | gate-times | merge gate runs | landed | landings per minute | not landed |"
echo "|---|---|---|---|---|---|---|"
printf '%s' "$rows"
echo
echo "flake rates shown by sluice status:$flakes"
