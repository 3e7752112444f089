#!/bin/sh
# Executors (issue 17, docs/scale-out.md, What stays on the sluice host, what goes to a job): N work orders (20) with a
# gate that sleeps GATE seconds (5), landed by sluice with the builders and
# gates as local processes (executor.kind local, queue.jobs 2), and as Slurm
# jobs on a private one-node cluster (tests/slurm/cluster.sh; executor.kind
# slurm, a bare repository in the temp folder as executor.remote, poll 1s,
# queue.jobs = the node's CPUs), and the figure a multi-node cluster would
# scale by: landings per minute against jobs in flight.
#
#   bench/executor.sh [-h] [SLUICE_BINARY]      (default: build/sluice, then build/t/sluice)
#   N=20 GATE=5 ROUNDS=2 MODES="local slurm" LOCAL_JOBS=2 SLURM_JOBS=$(nproc) bench/executor.sh
#   TRAIN_GATES=1 bench/executor.sh             # the train runs the gate too (see below)
#   MODES="local:8 slurm:8" OVERSUBSCRIBE=4 bench/executor.sh
#                                               # more jobs in flight than CPUs (see below)
#   KEEP=1 bench/executor.sh                    # keep the repositories and the cluster's logs
#
# The builder writes one file of its own per work order (all merge cleanly),
# the gate is [sh, -c, 'sleep GATE'], the reviewer is manual: the loop runs
# `sluice tick` back to back and `sluice approve` on every run awaiting
# review, until N runs are merged. Wall time: from the first tick to the Nth
# `merged` event (sluice's event log). By default `merge: {gates: []}`: the
# train only serializes the merges, so the figure is the executor's (build +
# gate as jobs) and the serial landing's; with TRAIN_GATES=1 merge.gates is
# left at its default (every gate), so each car is gated again in the train
# (a second GATE per run, train_depth = queue.jobs cars at once, also as
# jobs on the executor).
#
# A mode may name its queue.jobs: local:8, slurm:8. Slurm runs one job a CPU;
# OVERSUBSCRIBE=K sets the cluster's partition to OverSubscribe=FORCE:K
# (`scontrol update`), K jobs a CPU: the gate sleeps, so this stands in for
# a cluster with K times the CPUs as far as the sleeping gate goes (the
# builders, the job scripts' git and sluice still share this machine).
#
# Also measured: the engine's overhead of a trivial job (sbatch --parsable,
# then `scontrol show job` every 0.1 s until COMPLETED, 5 times), and from
# the event log of each round: the medians of preparing -> gating (the
# build, as a job or not), gating -> reviewing (the gates), approved ->
# merged, merging -> merged, and the serial parts: the gap between two
# merges landed back to back by one tick, and between two approvals of the
# loop (a `sluice approve` each). Prints a markdown section; RESULTS=path appends it to a
# file (bench/RESULTS.md is edited by hand). Not a test: nothing is asserted.
#
# Exit 77 (skip) when Slurm is asked for and this is not root or Slurm or
# munge is missing (the cluster runs as root, as in the tests).
set -eu

usage() {
	echo "usage: bench/executor.sh [-h] [SLUICE_BINARY]   (env: N GATE ROUNDS MODES LOCAL_JOBS SLURM_JOBS TRAIN_GATES OVERSUBSCRIBE KEEP RESULTS)" >&2
	exit "${1:-2}"
}
case "${1:-}" in -h | --help) usage 0 ;; -*) usage ;; esac
[ $# -le 1 ] || usage

here=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-20}
GATE=${GATE:-5}
ROUNDS=${ROUNDS:-1}
MODES=${MODES:-"local slurm"}
LOCAL_JOBS=${LOCAL_JOBS:-2}
SLURM_JOBS=${SLURM_JOBS:-$(nproc)}
TRAIN_GATES=${TRAIN_GATES:-0}
LIMIT_S=${LIMIT_S:-1200}
SLUICE=${1:-${SLUICE:-}}
if [ -z "$SLUICE" ]; then
	SLUICE=$here/build/sluice
	[ -x "$SLUICE" ] || SLUICE=$here/build/t/sluice
fi
[ -x "$SLUICE" ] || { echo "no sluice binary at $SLUICE" >&2; exit 1; }
SLUICE=$(cd "$(dirname "$SLUICE")" && pwd)/$(basename "$SLUICE")
command -v jq >/dev/null || { echo "bench/executor.sh needs jq" >&2; exit 1; }
case " $MODES " in
*" slurm"*)
	if [ "$(id -u)" -ne 0 ]; then
		echo "bench/executor.sh: not root (the private Slurm cluster runs as root); MODES=local runs the local half" >&2
		exit 77
	fi
	for t in sbatch scontrol squeue sinfo munged; do
		command -v "$t" >/dev/null 2>&1 || [ -x "/usr/sbin/$t" ] || {
			echo "bench/executor.sh: $t not installed (scripts/deps.sh installs slurm-wlm and munge)" >&2
			exit 77
		}
	done
	;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-exec.XXXXXX")
cluster=$work/cluster
cleanup() {
	[ -d "$cluster" ] && sh "$here/tests/slurm/cluster.sh" stop "$cluster" >/dev/null 2>&1
	if [ "${KEEP:-0}" = 1 ]; then
		echo "kept $work" >&2
	else
		chmod -R u+w "$work" 2>/dev/null
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
export GIT_CONFIG_NOSYSTEM=1 HOME="$work" GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@b \
	GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@b
unset GIT_DIR GIT_WORK_TREE

now_ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { awk -v ms="$1" 'BEGIN { printf "%.1f", ms / 1000 }'; }
median() { sort -n | awk '{ a[NR] = $1 } END { if (!NR) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# A repository DIR with N work orders, for MODE (local or slurm) and JOBS.
make_repo() { # DIR MODE JOBS
	git init -q -b main "$1"
	(cd "$1" && echo "# bench" >README.md && git add README.md && git commit -q -m base &&
		"$SLUICE" init >/dev/null)
	jobs=$3
	if [ "$2" = slurm ]; then
		git init -q --bare "$1.remote.git"
		exec_cfg="executor: {kind: slurm, remote: $1.remote.git, poll: 1s}"
	else
		exec_cfg="executor: {kind: local}"
	fi
	merge_cfg="merge: {gates: []}"
	[ "$TRAIN_GATES" = 1 ] && merge_cfg="# merge.gates: the default, every gate"
	cat >>"$1/.system/config.yaml" <<EOC
queue:
  jobs: $jobs
builder:
  command: [sh, -c, 'echo "\$SLUICE_WORK_ORDER_ID" >"f-\$SLUICE_WORK_ORDER_ID.txt"']
gates:
  slow: [sh, -c, 'sleep $GATE']
reviewer:
  mode: manual
$merge_cfg
$exec_cfg
EOC
	mkdir -p "$1/work_orders"
	i=1
	while [ $i -le "$N" ]; do
		printf -- '---\nid: W%02d\ntitle: file %d\n---\nAdd f-W%02d.txt.\n' $i $i $i \
			>"$1/work_orders/W$(printf %02d $i).md"
		i=$((i + 1))
	done
	"$SLUICE" -C "$1" check >/dev/null
}

merged_count() { "$SLUICE" -C "$1" runs --state merged | grep -c '^[0-9]' || true; }

# Ticks back to back, approving what awaits review, until N runs are merged.
land_all() { # DIR
	t0=$(now_ms)
	echo "$t0" >"$1.t0"
	while [ "$(merged_count "$1")" -lt "$N" ]; do
		"$SLUICE" -C "$1" tick >>"$1.ticks" 2>&1 || true
		for run in $("$SLUICE" -C "$1" runs --state awaiting_review --json | jq -r '.[].id'); do
			"$SLUICE" -C "$1" approve "$run" -m bench >>"$1.approvals" 2>&1 || true
		done
		if [ $(($(now_ms) - t0)) -gt $((LIMIT_S * 1000)) ]; then
			echo "not all $N runs landed in $LIMIT_S s:" >&2
			"$SLUICE" -C "$1" runs >&2
			tail -n 40 "$1.ticks" >&2
			return 1
		fi
	done
}

# The round's figures from the event log, one line of ms: wall, and the medians
# of preparing -> gating (worktree and builder), gating -> reviewing (gates),
# approved -> merged (waiting for the next tick and landing), merging -> merged.
figures() { # DIR
	"$SLUICE" -C "$1" log --json >"$1.log.json"
	t0=$(cat "$1.t0")
	wall=$(jq --argjson t0 "$t0" '[.[] | select(.run != null and .to == "merged") | .at_ms] | max - $t0' "$1.log.json")
	# per run: ms from first entering state A to first entering state B
	span() { # A B
		jq -r --arg a "$1" --arg b "$2" '[.[] | select(.run != null and .to != null)] |
			group_by(.run)[] |
			([.[] | select(.to == $a) | .at_ms] | min) as $x |
			([.[] | select(.to == $b) | .at_ms] | min) as $y |
			select($x != null and $y != null) | $y - $x' "$dir.log.json" | median
	}
	dir=$1
	build=$(span preparing gating)
	gate=$(span gating reviewing)
	land=$(span approved merged)
	merging=$(span merging merged)
	# the serial landing: gaps between consecutive merged events closer than
	# half a gate (landed back to back by one tick), and the same for the
	# loop's approvals (one `sluice approve` process each)
	gap() { # STATE
		jq -r --arg s "$1" --argjson lim "$(awk -v g="$GATE" 'BEGIN { print int(g * 500) }')" \
			'[.[] | select(.run != null and .to == $s) | .at_ms] | sort |
			[range(1; length) as $i | .[$i] - .[$i - 1]] | .[] | select(. < $lim)' \
			"$dir.log.json" | median
	}
	echo "$wall $build $gate $land $merging $(gap merged) $(gap approved)"
}

# The engine's overhead: a trivial job, submit to COMPLETED, 5 times (ms each).
slurm_overhead() {
	for _ in 1 2 3 4 5; do
		a=$(now_ms)
		j=$(sbatch --parsable -o /dev/null --wrap true)
		until scontrol show job "$j" | grep -q "JobState=COMPLETED "; do sleep 0.1; done
		echo $(($(now_ms) - a))
	done
}

load() { cut -d' ' -f1-3 /proc/loadavg; }

: >"$work/rows"
overhead=-
case " $MODES " in
*" slurm"*)
	sh "$here/tests/slurm/cluster.sh" start "$cluster" >"$work/cluster.env" || exit 1
	# shellcheck source=/dev/null
	. "$work/cluster.env"
	export SLURM_CONF
	slurm_overhead >"$work/overhead"
	overhead=$(median <"$work/overhead")
	echo "slurm trivial job, submit to COMPLETED (ms): $(tr '\n' ' ' <"$work/overhead")" >&2
	if [ -n "${OVERSUBSCRIBE:-}" ]; then
		scontrol update PartitionName=debug OverSubscribe=FORCE:"$OVERSUBSCRIBE" || exit 1
		echo "slurm partition: $(scontrol show partition debug | grep -o 'OverSubscribe=[^ ]*')" >&2
	fi
	;;
esac

r=1
while [ $r -le "$ROUNDS" ]; do
	for mj in $MODES; do
		m=${mj%%:*}
		case $m in local) jobs=$LOCAL_JOBS ;; slurm) jobs=$SLURM_JOBS ;; *) usage ;; esac
		[ "$mj" = "$m" ] || jobs=${mj#*:}
		d=$work/r$r-$m-$jobs
		make_repo "$d" "$m" "$jobs"
		la0=$(load)
		if land_all "$d"; then
			# shellcheck disable=SC2046
			set -- $(figures "$d")
			lpm=$(awk -v n="$N" -v ms="$1" 'BEGIN { printf "%.1f", n * 60000 / ms }')
			row="| $r | $m | $jobs | $(secs "$1") | $lpm | $(secs "$2") | $(secs "$3") | $4 | $5 | $6 | $7 | $la0 / $(load) |"
		else
			row="| $r | $m | $jobs | did not finish in $LIMIT_S s | | | | | | | | $la0 / $(load) |"
		fi
		echo "$row" >&2
		echo "$row" >>"$work/rows"
	done
	r=$((r + 1))
done

machine="$(uname -srm), $(nproc) CPUs"
slurmv=$(sbatch --version 2>/dev/null || echo "no slurm")
report=$(cat <<EOT
### $(date -u +%Y-%m-%d): $N work orders, a ${GATE} s gate ($machine; $slurmv; $("$SLUICE" --version 2>/dev/null | head -n 1))

merge.gates: $([ "$TRAIN_GATES" = 1 ] && echo "default (every gate: the train gates each car again)" || echo "[] (the train only serializes the merges)"); reviewer manual, approved by the loop as soon as a run awaits review.

| round | executor | queue.jobs | wall (s), first tick to Nth merge | landings/min | preparing -> gating (s, median) | gating -> reviewing (s, median) | approved -> merged (ms, median) | merging -> merged (ms, median) | merged -> next merged, one tick (ms, median) | approve -> next approve (ms, median) | load average before / after |
|---|---|---|---|---|---|---|---|---|---|---|---|
$(cat "$work/rows")

EOT
)
[ "$overhead" = - ] || report="$report
Slurm$([ -n "${OVERSUBSCRIBE:-}" ] && echo " (partition OverSubscribe=FORCE:$OVERSUBSCRIBE)"): a trivial job, submit to COMPLETED, polled every 0.1 s: median $(secs "$overhead") s ($(tr '\n' ' ' <"$work/overhead")ms)."
echo "$report"
[ -z "${RESULTS:-}" ] || printf '\n%s\n' "$report" >>"$RESULTS"
