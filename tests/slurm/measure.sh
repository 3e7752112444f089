#!/bin/sh
# The figures of docs/scale-out.md "The test cluster", measured on this
# machine: N times (default 5) start a cluster in a temp folder (time until
# sinfo shows the node idle) and time, on it, a trivial job three ways:
#   wait:  `sbatch --wait --wrap true` (sbatch polls the job itself)
#   poll:  `sbatch --parsable`, then `scontrol show job` every 0.1 s until
#          COMPLETED (what an executor that polls would see)
#   batch: 10 trivial jobs submitted at once, polled until all are COMPLETED
# and the stop. Prints one line a round and the medians. Root, Slurm and munge
# needed (as cluster.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-5}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-slurm-measure.XXXXXX")
trap 'sh "$here/cluster.sh" stop "$tmp/c" >/dev/null 2>&1; rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
dt() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

all_completed() { # JOBID...
	for j in "$@"; do
		scontrol show job "$j" | grep -q "JobState=COMPLETED " || return 1
	done
}

echo "round start wait poll batch10 stop (seconds)"
i=0
while [ $i -lt "$n" ]; do
	i=$((i + 1))
	rm -rf "$tmp/c"
	t0=$(now)
	sh "$here/cluster.sh" start "$tmp/c" >"$tmp/env" || exit 1
	t1=$(now)
	. "$tmp/env"
	sbatch --wait -o /dev/null --wrap true >/dev/null || exit 1
	t2=$(now)
	j=$(sbatch --parsable -o /dev/null --wrap true)
	until all_completed "$j"; do sleep 0.1; done
	t3=$(now)
	js=""
	for k in 1 2 3 4 5 6 7 8 9 10; do
		js="$js $(sbatch --parsable -o /dev/null --wrap true)"
	done
	# shellcheck disable=SC2086
	until all_completed $js; do sleep 0.1; done
	t4=$(now)
	sh "$here/cluster.sh" stop "$tmp/c"
	t5=$(now)
	echo "$i $(dt "$t0" "$t1") $(dt "$t1" "$t2") $(dt "$t2" "$t3") $(dt "$t3" "$t4") $(dt "$t4" "$t5")"
done | tee "$tmp/rounds"
awk '{ for (c = 2; c <= 6; c++) v[c, NR] = $c; n = NR }
END {
	printf "median"
	for (c = 2; c <= 6; c++) {
		for (i = 1; i <= n; i++) a[i] = v[c, i]
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		printf " %s", (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	printf "\n"
}' "$tmp/rounds"
