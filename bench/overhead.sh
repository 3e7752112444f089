#!/bin/sh
# Per-run service overhead (docs/design.md, Benchmarks): everything sluice does for
# a run but the builder, the gates and the reviewer. N work orders go through
# one `sluice tick --jobs 1` end to end: worktree, build (a builder that
# appends a line to f1.txt), snapshot commit, diff.patch, review (a command
# reviewer that approves at once), merge --no-ff with the checkout brought
# along, cleanup, plus every artifact and store write. No gates.
#
# The baseline is a shell pipeline doing the same git steps per work order:
#   git worktree add -b b<i> wt<i> main; echo x >>wt<i>/f1.txt;
#   git -C wt<i> add -A && git -C wt<i> commit; git diff --binary --full-index
#   -M main b<i> >patch; git merge --no-ff b<i>; git worktree remove wt<i>;
#   git branch -d b<i>
#
#   bench/overhead.sh [SLUICE_BINARY]      (default: build/sluice)
#   N=20 N_LARGE=5 SIZES="1000 10000" bench/overhead.sh
#
# N work orders at sizes under 10,000 files, N_LARGE from 10,000 on (checking
# out 10k files takes seconds here; the whole script stays near 3 minutes).
#
# Prints, per size, a markdown table of ms per run for each step and end to
# end, git and sluice side by side, with the machine, date and versions;
# sluice's steps come from its event log (`sluice log`). Repositories live
# under ${TMPDIR:-/tmp} and are removed afterwards.
# Not a test: nothing here asserts on time.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
SLUICE=${1:-${SLUICE:-$here/build/sluice}}
SIZES=${SIZES:-"1000 10000"}
N_SMALL=${N:-20}
N=$N_SMALL
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-overhead.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT INT TERM
export GIT_CONFIG_NOSYSTEM=1 HOME="$work" GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@b \
	GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@b
unset GIT_DIR GIT_WORK_TREE

now() { date +%s%N; }
ms() { awk -v ns="$1" -v n="$2" 'BEGIN { printf "%.0f", ns / n / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

make_repo() { # DIR N: f1.txt and N-1 files of ~1 KiB in 100-file directories
	git init -q -b main "$1"
	(cd "$1" && echo "line 0" >f1.txt && awk -v n="$2" 'BEGIN {
		for (i = 1; i < n; i++) {
			d = sprintf("d%03d", int(i / 100)); f = sprintf("%s/f%05d.txt", d, i)
			if (d != last) { system("mkdir -p " d); last = d }
			for (l = 0; l < 16; l++) printf("file %d line %d %s\n", i, l, "abcdefghijklmnopqrstuvwxyz0123456789abcdef") > f
			close(f)
		} }' && git add -A && git -c gc.auto=0 commit -q -m base && git gc -q)
}

# The git CLI doing a run's git steps, N times. Prints the total nanoseconds;
# each step's total goes to $work/git.<step>.
git_pipeline() { # REPO
	wt=0 ed=0 df=0 mg=0 cl=0
	t0=$(now)
	i=0
	while [ $i -lt "$N" ]; do
		i=$((i + 1))
		a=$(now)
		git -C "$1" worktree add -q -b "b$i" "$1/../wt$i" main
		b=$(now)
		echo x >>"$1/../wt$i/f1.txt"
		git -C "$1/../wt$i" add -A && git -C "$1/../wt$i" commit -q -m "work $i"
		c=$(now)
		git -C "$1" diff --binary --full-index -M main "b$i" >"$1/../patch$i"
		d=$(now)
		git -C "$1" merge -q --no-ff -m "Merge b$i" "b$i"
		e=$(now)
		git -C "$1" worktree remove "$1/../wt$i"
		git -C "$1" branch -q -d "b$i"
		f=$(now)
		wt=$((wt + b - a)) ed=$((ed + c - b)) df=$((df + d - c)) mg=$((mg + e - d)) cl=$((cl + f - e))
	done
	echo $(($(now) - t0))
	echo "$wt $ed $df $mg $cl" >"$work/git.steps"
}

# sluice's stages from its event log, summed over the runs, in nanoseconds:
# worktree (preparing), build+snapshot+diff.patch (building), gates+review
# (gating, reviewing), merge (approved, merging), after the merge (manifest,
# worktree removal, claiming the next run).
sluice_steps() { # REPO
	"$SLUICE" -C "$1" log | awk '
	function ns(ts,   p) { split(substr(ts, 12, 12), p, ":"); return (p[1] * 3600 + p[2] * 60 + p[3]) * 1e9 }
	$2 == "run" && $5 == "->" {
		t = ns($1)
		if ($6 == "queued" && last_merged) { after += t - last_merged; last_merged = 0 }
		if ($6 == "preparing") start = t
		if ($6 == "building") { wt += t - start; start = t }
		if ($6 == "gating") { bd += t - start; start = t }
		if ($6 == "approved") { rv += t - start; start = t }
		if ($6 == "merged") { mg += t - start; last_merged = t }
	}
	END { printf "%.0f %.0f %.0f %.0f %.0f\n", wt, bd, rv, mg, after }'
}

setup_sluice() { # REPO
	"$SLUICE" -C "$1" init >/dev/null
	printf '%s\n' 'cat >/dev/null' 'echo "{\"verdict\": \"approve\"}"' >"$work/approve.sh"
	cat >>"$1/.system/config.yaml" <<-EOC
	builder:
	  command: [sh, -c, 'echo x >> f1.txt']
	reviewer:
	  mode: command
	  command: [sh, $work/approve.sh]
	EOC
	i=0
	while [ $i -lt "$N" ]; do
		i=$((i + 1))
		printf -- '---\nid: WO-%03d\ntitle: Append to f1.txt (%d)\n---\nAppend a line.\n' \
			"$i" "$i" >"$1/work_orders/WO-$(printf %03d $i).md"
	done
	"$SLUICE" -C "$1" check >/dev/null
	"$SLUICE" -C "$1" queue >/dev/null # ingest outside the timing
}

sluice_ticks() { # REPO: ticks until no work order is left; prints nanoseconds
	total=0
	k=0
	while [ $k -lt 5 ] && [ "$("$SLUICE" -C "$1" runs --state merged | wc -l)" -lt "$N" ]; do
		t=$(now)
		"$SLUICE" -C "$1" tick --jobs 1 >>"$work/tick.log" 2>&1
		total=$((total + $(now) - t))
		k=$((k + 1))
	done
	echo "$total"
	echo "$k" >"$work/ticks"
}

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
echo "bench/overhead.sh, $(date -u +%Y-%m-%d)"
echo "$(uname -srm), $(nproc) CPUs, ${cpu:-unknown CPU}; $(git --version)," \
	"libgit2 $(pkg-config --modversion libgit2 2>/dev/null || echo '?')," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
for n in $SIZES; do
	N=$([ "$n" -ge 10000 ] && echo "${N_LARGE:-5}" || echo "$N_SMALL")
	make_repo "$work/g$n/repo" "$n"
	g=$(git_pipeline "$work/g$n/repo")
	rm -rf "$work/g$n"
	make_repo "$work/s$n/repo" "$n"
	setup_sluice "$work/s$n/repo"
	s=$(sluice_ticks "$work/s$n/repo")
	merged=$("$SLUICE" -C "$work/s$n/repo" runs --state merged | wc -l)
	lines=$(git -C "$work/s$n/repo" show main:f1.txt | wc -l)
	[ "$merged" -eq "$N" ] && [ "$lines" -eq $((N + 1)) ] ||
		echo "warning: $merged of $N runs merged, f1.txt has $lines lines; see $work/tick.log" >&2
	set -- $(cat "$work/git.steps") $(sluice_steps "$work/s$n/repo")
	echo
	echo "$n files, $N work orders through $(cat "$work/ticks") tick(s), $merged merged:"
	echo
	echo "| step | git CLI ms/run | sluice ms/run | sluice/git |"
	echo "|---|---|---|---|"
	row() { echo "| $1 | $(ms "$2" "$N") | $(ms "$3" "$N") | $(ratio "$3" "$2") |"; }
	row "worktree: \`git worktree add\` / preparing" "$1" "$6"
	row "edit, commit (sluice: builder, snapshot, diff.patch)" "$2" "$7"
	row "diff (sluice: review package, reviewer process)" "$3" "$8"
	row "\`merge --no-ff\` (sluice: merge, cross-check, checkout update)" "$4" "$9"
	row "cleanup (sluice: manifest, worktree removal, next claim)" "$5" "${10}"
	echo "| the rest of the tick: start, reconcile, ingest, exit | | $(ms $((s - $6 - $7 - $8 - $9 - ${10})) "$N") | |"
	row "**end to end** (sluice: the whole \`sluice tick\`)" "$g" "$s"
	rm -rf "$work/s$n"
done
