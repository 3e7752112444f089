#!/bin/sh
# The benchmarks of issues 14 and 29 in one command (docs/design.md,
# Benchmarks): sluice against the git CLI doing the same work, in the same run,
# as medians and ratios, printed as markdown tables for bench/RESULTS.md.
#
#   bench/run.sh [--quick] [SLUICE_BINARY]      (default: $SLUICE, else build/sluice)
#
# 1. Worktree acquisition at 1k, 10k and 50k files: `git worktree add -b`;
#    a run's fresh worktree (`worktree.pool: 0`); a run's worktree from the
#    pool when the run's base is 1, 10 and 100 files away from the pooled
#    worktree (a run merges, its worktree goes to the pool, K files are
#    committed on main directly, the next run takes it). sluice's figure is
#    the run's "preparing" step from its event log (`sluice log --json`).
# 2. Per-run overhead against a shell pipeline of the same git commands
#    (bench/overhead.sh's method: worktree add, edit, add + commit, diff,
#    merge --no-ff, worktree remove, branch -d) at 1k, 10k and 100k files,
#    one work order per `sluice tick --jobs 1`, an instant builder, no gates, a
#    command reviewer that approves at once; cold: `worktree.pool: 0` (fresh
#    worktree, removed after) and pool emptied before each run outside the
#    timing (`sluice worktree cleanup --pool`, or `sluice gc` in a binary
#    without it: fresh worktree, pooled after); warm: the previous run's worktree is in the pool. git and the
#    three sluice repositories take turns, so each ratio is of the same
#    minutes. Then the warm run's cost at each size against its cost at 1k
#    (issue 29: 10k at most 1.3x, 100k at most 3x).
# 3. E2E_N (200) work orders end to end: `sluice tick --jobs 2` (ticks until
#    all are merged) on a 100-file repository, instant builder and command
#    reviewer; wall time and `/usr/bin/time -v`'s maximum resident set size
#    (the largest process of the tree, git included); then one more run with
#    a probe (an LD_PRELOAD library, compiled here) that writes, as each
#    process whose executable is the sluice binary exits, its VmHWM (the
#    kernel's high-water mark of its resident set): the peak of every tick
#    and worker process, none missed however short-lived. The first tick is
#    timed on its own too (issue 29: all 200 in one tick, under 10 s), and
#    again with E2E_SMALL (E2E_N/4) work orders: the time per work order at
#    the two counts shows whether it grows with their number.
# 4. A gate running `npm ci` on a small project with a lockfile (two small
#    dependencies, 7 packages; lockfile and npm cache made once here, from
#    the registry), fresh (`worktree.pool: 0`) against the pool with
#    `worktree.recycle: keep-ignored` (node_modules/ is ignored), for the
#    literal `npm ci` and for two gates a user would write to profit from
#    kept dependencies. The gate's duration_ms from the run's gates.json.
#
# --quick: a smoke run for CI (about a minute or two): 1k files, one
# repetition, E2E_N=20; the npm part is skipped (and says so) when npm or
# the registry is not there. Nothing asserts on time, in either mode; the
# exit status is 1 only when something is broken (a run did not merge, a
# table could not be made), 2 on a usage error.
#
# Rounds: ROUNDS=3 runs the parts three times in a row (issue 29 asks for
# three), each round on repositories of its own, made afresh (the same
# sizes, so the same trees and commits, but new inodes and a cold pool).
# Each round prints its tables; at the end one table gives issue 29's
# figures of every round side by side, with how many rounds met each goal.
#
# Knobs (environment): REPS (5; quick 1) repetitions of each measurement;
# REPS_50K (3) at 50,000 files and more (parts 1 and 2), where one fresh
# worktree takes a minute or more here; WT_SIZES ("1000 10000 50000"),
# OH_SIZES ("1000 10000 100000"; the repositories' maker puts 100 files in a
# folder, 1,000 folders at 100k, about 30 s for each of part 2's four
# repositories there), E2E_N (200), E2E_SMALL (E2E_N/4), E2E_REPS (REPS),
# ROUNDS (1), NPM (auto; 0 skips it, 1 requires it), PARTS ("acquire
# overhead e2e npm"), KEEP=1 keeps the repositories, SYNC=0 skips the `sync`
# before each timed sample (outside the timing: what the previous sample
# wrote or deleted is on disk before the next one starts).
# Repositories live under ${TMPDIR:-/tmp}; put TMPDIR on the disk you mean to
# measure. Not a test: the targets of issue 14 and the goals of issue 29 are
# printed as met or not met.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
QUICK=0
if [ "${1:-}" = --quick ]; then
	QUICK=1
	shift
fi
case ${1:-} in -*) echo "usage: bench/run.sh [--quick] [SLUICE_BINARY]" >&2; exit 2 ;; esac
SLUICE=${1:-${SLUICE:-$here/build/sluice}}
[ -x "$SLUICE" ] || { echo "bench/run.sh: no sluice binary at $SLUICE" >&2; exit 2; }
SLUICE=$(cd "$(dirname "$SLUICE")" && pwd)/$(basename "$SLUICE")
for tool in git jq awk; do
	command -v $tool >/dev/null || { echo "bench/run.sh needs $tool" >&2; exit 2; }
done

if [ $QUICK = 1 ]; then
	REPS=${REPS:-1} REPS_50K=${REPS_50K:-1} WT_SIZES=${WT_SIZES:-1000}
	OH_SIZES=${OH_SIZES:-1000} E2E_N=${E2E_N:-20}
else
	REPS=${REPS:-5} REPS_50K=${REPS_50K:-3} WT_SIZES=${WT_SIZES:-"1000 10000 50000"}
	OH_SIZES=${OH_SIZES:-"1000 10000 100000"} E2E_N=${E2E_N:-200}
fi
E2E_SMALL=${E2E_SMALL:-$((E2E_N / 4 > 0 ? E2E_N / 4 : 1))}
E2E_REPS=${E2E_REPS:-$REPS}
ROUNDS=${ROUNDS:-1}
case $ROUNDS in "" | *[!0-9]* | 0) echo "bench/run.sh: ROUNDS must be a number of 1 or more" >&2; exit 2 ;; esac
NPM_REPS=${NPM_REPS:-$REPS}
NPM=${NPM:-auto}
PARTS=${PARTS:-"acquire overhead e2e npm"}

# $top holds what the rounds share (HOME, the reviewer, the list of what is
# broken, each round's figures); $work is the current round's directory,
# where the parts make their repositories and files ($top before the first).
top=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-run.XXXXXX")
top=$(cd "$top" && pwd -P)
work=$top
if [ "${KEEP:-0}" = 1 ]; then
	echo "keeping $top" >&2
else
	trap 'chmod -R u+w "$top" 2>/dev/null; rm -rf "$top"' EXIT
	trap 'exit 130' INT TERM
fi
export GIT_CONFIG_NOSYSTEM=1 HOME="$top" GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@b \
	GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@b npm_config_update_notifier=false
unset GIT_DIR GIT_WORK_TREE
git config --global init.defaultBranch main
git config --global gc.auto 0

# ---- helpers

now() { date +%s%N; }
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2f", a / b }'; }
msec() { awk -v ns="$1" 'BEGIN { if (ns == "") print "n/a"; else printf "%.0f", ns / 1e6 }'; }
kfiles() { if [ $(($1 % 1000)) = 0 ]; then echo "$(($1 / 1000))k"; else echo "$1"; fi; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
progress() { echo "bench/run.sh: ${round_label:-}$*" >&2; }
# Before each timed sample, outside the timing: write back what the previous
# one left dirty (10,000 new or deleted files), so that no sample pays for
# the one before it.
settle() { [ "${SYNC:-1}" = 0 ] || sync; }

broken() { # MESSAGE: something that should work did not; the exit status will be 1
	echo "bench/run.sh: BROKEN: $*" >&2
	echo "$*" >>"$top/broken"
}

# One of issue 29's figures of this round, for the table at the end: what,
# the goal ("" if none), the value and the verdict ("" if not judged).
fig() { # LABEL GOAL VALUE VERDICT
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$top/figs.$round"
}

# met if A OP B ("le": A <= B, "ge": A >= B), else "not met"
verdict() { # A OP B
	awk -v a="$1" -v b="$3" -v op="$2" 'BEGIN {
		if (a == "" || a == "n/a") { print "not measured"; exit }
		ok = (op == "le") ? (a + 0 <= b + 0) : (a + 0 >= b + 0)
		print ok ? "met" : "not met" }'
}

make_files() { # DIR N: f1.txt and N-1 files of ~1 KiB in 100-file directories, one packed commit
	git init -q -b main "$1"
	(cd "$1" && echo "line 0" >f1.txt && awk -v n="$2" 'BEGIN {
		for (i = 1; i < n; i++) {
			d = sprintf("d%03d", int(i / 100)); f = sprintf("%s/f%05d.txt", d, i)
			if (d != last) { system("mkdir -p " d); last = d }
			for (l = 0; l < 16; l++) printf("file %d line %d %s\n", i, l, "abcdefghijklmnopqrstuvwxyz0123456789abcdef") > f
			close(f)
		} }' && git add -A && git commit -q -m base && git gc -q)
}

printf '%s\n' 'cat >/dev/null' 'echo "{\"verdict\": \"approve\", \"reviewer\": \"bench\"}"' \
	>"$top/approve.sh"

# sluice in REPO with a command reviewer that approves at once, the builder
# BUILDER (a shell command), no merge gates, and the extra config EXTRA.
sluice_setup() { # REPO BUILDER EXTRA
	"$SLUICE" -C "$1" init >/dev/null
	cat >>"$1/.system/config.yaml" <<-EOC
	builder:
	  command: [sh, -c, '$2']
	reviewer:
	  mode: command
	  command: [sh, $top/approve.sh]
	merge:
	  gates: []
	$3
	EOC
	mkdir -p "$1/work_orders"
	"$SLUICE" -C "$1" check >/dev/null
}

# worktree.pool in REPO's config: N, or "" for the binary's default.
set_pool() { # REPO N [RECYCLE]
	sed -i '/^worktree:$/,/^[^ ]/{/^worktree:$/d;/^  /d}' "$1/.system/config.yaml"
	[ -z "$2" ] && [ -z "${3:-}" ] && return 0
	{
		echo "worktree:"
		[ -z "$2" ] || echo "  pool: $2"
		[ -z "${3:-}" ] || echo "  recycle: $3"
	} >>"$1/.system/config.yaml"
}

add_wo() { # REPO ID
	printf -- '---\nid: %s\ntitle: bench %s\n---\nBenchmark work order.\n' "$2" "$2" \
		>"$1/work_orders/$2.md"
}

# Drop work order ID in REPO, ingest it outside the timing, run one
# `sluice tick --jobs 1`; prints "RUN WALL_NS" when the run merged.
run_wo() { # REPO ID
	add_wo "$1" "$2"
	"$SLUICE" -C "$1" queue >/dev/null 2>&1 || true
	settle
	t=$(now)
	"$SLUICE" -C "$1" tick --jobs 1 >>"$1.ticks" 2>&1 || true
	t=$(($(now) - t))
	r=$("$SLUICE" -C "$1" runs --json | jq -r --arg w "$2" \
		'[.[] | select(.work_order == $w)] | first | "\(.id) \(.state)"')
	if [ "${r#* }" != merged ]; then
		broken "work order $2 in $1 did not merge: run ${r% *} is ${r#* } (see $1.ticks)"
		return 1
	fi
	echo "${r% *} $t"
}

# A run's steps from its event log, in ms: preparing, building, gating,
# reviewing, merging (approved to merged), and 1 if its worktree came from
# the pool (the log says so), else 0.
run_steps() { # REPO RUN
	"$SLUICE" -C "$1" log --json "$2" | jq -r '[.[] | select(.run != null)] as $e
	| ([$e[] | select(.to == "preparing") | .at_ms] | first) as $p0
	| ([$e[] | select(.from == "preparing" and .to == "building") | .at_ms] | first) as $p1
	| ([$e[] | select(.from == "building" and .to == "gating") | .at_ms] | first) as $b1
	| ([$e[] | select(.from == "gating" and .to == "reviewing") | .at_ms] | first) as $g1
	| ([$e[] | select(.to == "approved") | .at_ms] | first) as $r1
	| ([$e[] | select(.to == "merged") | .at_ms] | last) as $m1
	| ([$e[] | select((.reason // "") | test("from the pool"; "i"))] | length) as $pool
	| "\($p1 - $p0) \($b1 - $p1) \($g1 - $b1) \($r1 - $g1) \($m1 - $r1) \(if $pool > 0 then 1 else 0 end)"'
}

# One work order through run_wo and run_steps: prints "WALL_NS PREPARING
# BUILDING GATING REVIEWING MERGING FROM_POOL" (the steps in ms).
sample() { # REPO ID
	r=$(run_wo "$1" "$2") || return 1
	s=$(run_steps "$1" "${r% *}" 2>&1) || s=""
	case $s in
	*[!0-9\ -]* | "")
		broken "run ${r% *} in $1 merged but its event log lacks a step: $s"
		return 1
		;;
	esac
	echo "${r#* } $s"
}

# ---- the machine

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
mem=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null)
lg2=$(pkg-config --modversion libgit2 2>/dev/null ||
	ldd "$SLUICE" 2>/dev/null | sed -n 's/.*libgit2\.so\.\([0-9.]*\).*/\1 (soname)/p' | head -n 1)
rev=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')
fs=$(df -T "$work" 2>/dev/null | awk 'NR == 2 { print $2 }')

# Does this binary have the worktree pool (issue 14)? Its config check knows the key.
POOL=0
make_files "$work/probe" 2
if sluice_setup "$work/probe" 'true' "worktree:
  pool: 1
  recycle: keep-ignored" 2>/dev/null; then
	POOL=1
	# how to empty the pool: `sluice worktree cleanup --pool`, else `sluice gc` (which also does)
	if "$SLUICE" -C "$work/probe" worktree cleanup --pool >/dev/null 2>&1; then
		EMPTY_POOL="worktree cleanup --pool"
	else
		EMPTY_POOL="gc"
	fi
fi
rm -rf "$work/probe"

echo "# bench/run.sh$([ $QUICK = 1 ] && echo ' --quick'), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "- machine: $(uname -srm), $(nproc) CPUs (${cpu:-unknown CPU}), ${mem:-? GiB} RAM;" \
	"repositories on ${fs:-?} (${TMPDIR:-/tmp})"
echo "- $(git --version), libgit2 ${lg2:-?}; sluice: $("$SLUICE" --version 2>&1 | head -n 1)," \
	"$SLUICE (built $(date -u -r "$SLUICE" '+%Y-%m-%d %H:%M UTC'); this script's checkout at $rev)"
echo "- load average at the start: $(load) (each table gives it again when done)"
if [ $POOL = 1 ]; then
	echo "- worktree pool (\`worktree.pool\`): in this binary"
else
	echo "- worktree pool (\`worktree.pool\`): NOT in this binary (no such config key): the pool's rows say n/a"
fi
echo "- medians of $REPS run(s)$([ $REPS_50K != $REPS ] && echo " ($REPS_50K at 50,000 files and more)"), wall clock;" \
	"$([ "${SYNC:-1}" = 0 ] && echo "no sync between samples (SYNC=0)" || echo "\`sync\` before each timed sample, outside the timing")"
echo "- $ROUNDS round(s) of the parts ($PARTS) in a row, each on repositories made afresh"

# ---- 1. worktree acquisition

git_wt_add() { # REPO: one timed `git worktree add -b` of main (ns); removed outside the timing
	settle
	t=$(now)
	git -C "$1" worktree add -q -b bench-git-wt "$1.gitwt" main
	t=$(($(now) - t))
	git -C "$1" worktree remove --force "$1.gitwt"
	git -C "$1" branch -q -D bench-git-wt
	echo "$t"
}

acq_row() { # LABEL SAMPLES_FILE GIT_MEDIAN_NS [NOTE]
	n=$(grep -c . "$2" || true)
	m=$(median <"$2")
	if [ -z "$m" ]; then
		echo "| $n_files | $1 | 0 | n/a | n/a | n/a |"
		return
	fi
	echo "| $n_files | $1${4:-} | $n | $(msec "$m") ms | $(ratio "$m" "$3") | $(ratio "$3" "$m")x |"
}

acquire() {
	echo
	echo "## 1. Worktree acquisition"
	echo
	echo "A run's \"preparing\" step (\`sluice log\`) against \`git worktree add -b\` of the same"
	echo "commit, in the same repository and minutes (N files of ~1 KiB in 100-file directories;"
	echo "removal not timed). Fresh: \`worktree.pool: 0\`. From the pool: the previous run merged"
	echo "and its worktree went to the pool, then K files were committed on main directly."
	echo
	echo "| files | acquisition | runs | median | sluice/git | git/sluice |"
	echo "|---|---|---|---|---|---|"
	: >"$work/acq.targets"
	for n_files in $WT_SIZES; do
		reps=$REPS
		[ "$n_files" -lt 50000 ] || reps=$REPS_50K
		d="$work/acq$n_files"
		progress "acquisition, $n_files files: making the repository"
		make_files "$d" "$n_files"
		sluice_setup "$d" 'echo x >>f1.txt' ""
		[ $POOL = 0 ] || set_pool "$d" 0
		: >"$d.git" && : >"$d.fresh"
		i=0
		while [ $i -lt "$reps" ]; do
			i=$((i + 1))
			progress "acquisition, $n_files files: fresh, run $i of $reps"
			git_wt_add "$d" >>"$d.git"
			r=$(sample "$d" "fresh-$i") || continue
			set -- $r
			echo $(($2 * 1000000)) >>"$d.fresh"
		done
		for k in 1 10 100; do : >"$d.pool$k"; done
		if [ $POOL = 1 ]; then
			set_pool "$d" 2
			progress "acquisition, $n_files files: a run to fill the pool"
			(run_wo "$d" warm) >/dev/null || true
			git -C "$d" ls-files 'd*' | head -n 100 >"$d.files"
			for k in 1 10 100; do
				i=0
				while [ $i -lt "$reps" ]; do
					i=$((i + 1))
					progress "acquisition, $n_files files: from the pool, base $k files away, run $i of $reps"
					head -n "$k" "$d.files" | while read -r f; do echo "main $k $i" >>"$d/$f"; done
					head -n "$k" "$d.files" | (cd "$d" && xargs git add --)
					git -C "$d" commit -q -m "main: $k files"
					[ $i -gt 1 ] || git_wt_add "$d" >>"$d.git"
					r=$(sample "$d" "pool$k-$i") || continue
					set -- $r
					echo $(($2 * 1000000)) >>"$d.pool$k"
					[ "$7" = 1 ] || echo "$k" >>"$d.notpool"
				done
			done
		fi
		g=$(median <"$d.git")
		acq_row "\`git worktree add -b\`" "$d.git" "$g"
		if [ $POOL = 1 ]; then
			acq_row "sluice, fresh (\`worktree.pool: 0\`)" "$d.fresh" "$g"
		else
			acq_row "sluice, fresh (no pool in this binary)" "$d.fresh" "$g"
		fi
		for k in 1 10 100; do
			if [ $POOL = 0 ]; then
				echo "| $n_files | sluice, from the pool, base $k files away | 0 | n/a | n/a | n/a |"
				continue
			fi
			note=""
			! grep -qx "$k" "$d.notpool" 2>/dev/null ||
				note=" (**$(grep -cx "$k" "$d.notpool") run(s) did not say \"from the pool\"**)"
			acq_row "sluice, from the pool, base $k file$([ $k = 1 ] || echo s) away" "$d.pool$k" "$g" "$note"
			echo "$n_files $k $(ratio "$g" "$(median <"$d.pool$k")")" >>"$work/acq.targets"
		done
		echo "$n_files fresh $(ratio "$(median <"$d.fresh")" "$g")" >>"$work/acq.targets"
		[ "${KEEP:-0}" = 1 ] || rm -rf "$d" "$d".*
	done
	echo
	echo "Load average when done: $(load)."
	echo
	echo "Targets: from the pool at 10k files, base 1-100 files away, at least 50x faster than"
	echo "\`git worktree add\`; fresh no slower than \`git worktree add\` at any size."
	echo
	while read -r n k r; do
		if [ "$k" = fresh ]; then
			echo "- $n files, fresh: $r x git's time (target <= 1.0): $(verdict "$r" le 1.0)"
		elif [ "$n" = 10000 ]; then
			echo "- $n files, from the pool, $k file(s) away: ${r}x faster than git (target >= 50): $(verdict "$r" ge 50)"
		else
			echo "- $n files, from the pool, $k file(s) away: ${r}x faster than git (no target at this size)"
		fi
	done <"$work/acq.targets"
	echo
	echo "Issue 29's goal: a slot from the pool at 10k files at least 50x faster than \`git worktree"
	echo "add\` (the run's base 1 file away, as for the next run after a merge)."
	echo
	r=$(awk '$1 == 10000 && $2 == 1 { print $3 }' "$work/acq.targets")
	if [ -z "$r" ]; then
		echo "- 10000 files, a slot from the pool: not measured (no 10000 in WT_SIZES, or no pool)"
		return 0
	fi
	v=$(verdict "$r" ge 50)
	echo "- 10000 files, a slot from the pool: ${r}x faster than \`git worktree add\` (goal >= 50): $v"
	fig "a slot from the pool at 10k files (base 1 file away) against \`git worktree add\`" \
		">= 50x faster" "${r}x" "$v"
}

# ---- 2. per-run overhead against the git pipeline

# One work order's git steps in plain repository REPO (bench/overhead.sh's
# pipeline); prints "TOTAL WORKTREE EDIT DIFF MERGE CLEANUP" in ns.
git_pipeline_one() { # REPO I
	settle
	gp_a=$(now)
	git -C "$1" worktree add -q -b "b$2" "$1.wt" main
	gp_b=$(now)
	echo x >>"$1.wt/f1.txt"
	git -C "$1.wt" add -A && git -C "$1.wt" commit -q -m "work $2"
	gp_c=$(now)
	git -C "$1" diff --binary --full-index -M main "b$2" >"$1.patch"
	gp_d=$(now)
	git -C "$1" merge -q --no-ff -m "Merge b$2" "b$2"
	gp_e=$(now)
	git -C "$1" worktree remove "$1.wt"
	git -C "$1" branch -q -d "b$2"
	gp_f=$(now)
	echo "$((gp_f - gp_a)) $((gp_b - gp_a)) $((gp_c - gp_b)) $((gp_d - gp_c)) $((gp_e - gp_d)) $((gp_f - gp_e))"
}

# column COL of FILE's lines, median (ns)
col_median() { # FILE COL
	awk -v c="$2" '{ print $c }' "$1" | median
}

overhead() {
	echo
	echo "## 2. Per-run overhead against the git pipeline"
	echo
	echo "One work order per \`sluice tick --jobs 1\` (ingested outside the timing), a builder that"
	echo "appends a line to f1.txt, no gates, a command reviewer that approves at once; against a"
	echo "shell pipeline of the same git steps (\`git worktree add -b\`, the edit, \`git add -A &&"
	echo "git commit\`, \`git diff --binary --full-index -M\`, \`git merge --no-ff\`, \`git worktree"
	echo "remove\`, \`git branch -d\`). Runs of the four take turns. sluice's steps from its event log;"
	echo "\"the rest\" is the tick's wall time less those steps (process start, reconcile, claim, the"
	echo "worker's start, manifest, worktree removal or pooling, exit). ms, median per step (the"
	echo "medians of the steps need not add up to the median end to end); in brackets sluice/git."
	echo "Cold, pool 0: every run's worktree is created fresh and removed after. Cold, pool emptied:"
	echo "\`sluice ${EMPTY_POOL:-worktree cleanup --pool}\` before each run (outside the timing): created"
	echo "fresh, pooled after. Warm: the previous run's worktree is in the pool."
	: >"$work/oh.targets" && : >"$work/oh.warm"
	for n_files in $OH_SIZES; do
		reps=$REPS
		[ "$n_files" -lt 50000 ] || reps=$REPS_50K
		d="$work/oh$n_files"
		progress "overhead, $n_files files: making the repositories"
		make_files "$d.git" "$n_files"
		kinds="c0"
		[ $POOL = 0 ] || kinds="c0 ce w"
		for kind in $kinds; do
			make_files "$d.$kind" "$n_files"
			sluice_setup "$d.$kind" 'echo x >>f1.txt' ""
			case $kind in c0) [ $POOL = 0 ] || set_pool "$d.$kind" 0 ;; *) set_pool "$d.$kind" 2 ;; esac
			(run_wo "$d.$kind" warmup) >/dev/null || true # first run and the pool filled
			: >"$d.$kind.samples"
		done
		: >"$d.git.samples"
		i=0
		while [ $i -lt "$reps" ]; do
			i=$((i + 1))
			progress "overhead, $n_files files: run $i of $reps"
			git_pipeline_one "$d.git" "$i" >>"$d.git.samples"
			for kind in $kinds; do
				[ $kind != ce ] || "$SLUICE" -C "$d.$kind" $EMPTY_POOL >/dev/null ||
					broken "sluice $EMPTY_POOL failed in $d.ce"
				r=$(sample "$d.$kind" "oh-$i") || continue
				set -- $r
				[ $kind != w ] || [ "$7" = 1 ] || echo x >>"$d.w.notpool"
				[ $kind = w ] || [ "$7" = 0 ] || echo x >>"$d.$kind.pooled"
				echo "$1 $2 $3 $(($4 + $5)) $6 $(($1 / 1000000 - $2 - $3 - $4 - $5 - $6))" >>"$d.$kind.samples"
			done
		done
		echo
		echo "$n_files files, $reps run(s) of each; load average when done: $(load)."
		echo
		hdr="| step | git CLI | sluice, cold: pool 0"
		sep="|---|---|---"
		case $kinds in *ce*) hdr="$hdr | sluice, cold: pool emptied" sep="$sep|---" ;; esac
		case $kinds in *w*) hdr="$hdr | sluice, warm pool" sep="$sep|---" ;; esac
		[ $POOL = 1 ] || hdr="| step | git CLI | sluice (no pool in this binary)"
		echo "$hdr |"
		echo "$sep|"
		oh_row() { # LABEL GIT_COL SLUICE_COL (sluice columns in ms, git's in ns)
			if [ "$2" = - ]; then g=""; else g=$(col_median "$d.git.samples" "$2"); fi
			line="| $1 | $(if [ -n "$g" ]; then msec "$g"; fi)"
			for kind in $kinds; do
				s=$(col_median "$d.$kind.samples" "$3")
				if [ -z "$s" ]; then
					line="$line | n/a"
				elif [ "$3" = 1 ]; then
					line="$line | $(msec "$s") ($(ratio "$s" "$g"))"
				elif [ -n "$g" ]; then
					line="$line | $s ($(ratio "$((s * 1000000))" "$g"))"
				else
					line="$line | $s"
				fi
			done
			echo "$line |"
		}
		oh_row "worktree: \`git worktree add\` / preparing" 2 2
		oh_row "edit, commit / building (builder, snapshot, diff.patch)" 3 3
		oh_row "diff / gating and reviewing (review package, reviewer)" 4 4
		oh_row "\`merge --no-ff\` / merging (the train's car, landing, checkout)" 5 5
		oh_row "cleanup: \`worktree remove\`, \`branch -d\` / the rest of the tick" 6 6
		oh_row "**end to end** (sluice: the whole \`sluice tick\`)" 1 1
		g=$(col_median "$d.git.samples" 1)
		for kind in $kinds; do
			[ ! -s "$d.$kind.pooled" ] || echo "- **$(grep -c . "$d.$kind.pooled") $kind run(s) said \"from the pool\"**"
			echo "$n_files $kind $(ratio "$(col_median "$d.$kind.samples" 1)" "$g")" >>"$work/oh.targets"
		done
		[ ! -s "$d.w.notpool" ] ||
			echo "- **$(grep -c . "$d.w.notpool") warm run(s) did not say \"from the pool\"**"
		case $kinds in *w*) echo "$n_files $(col_median "$d.w.samples" 1)" >>"$work/oh.warm" ;; esac
		[ "${KEEP:-0}" = 1 ] || rm -rf "$d".*
	done
	echo
	echo "Targets, end to end: warm at most 0.1x the git pipeline at 10k files and 0.5x at 1k;"
	echo "cold at most 1.0x."
	echo
	while read -r n kind r; do
		case $kind in
		c0) echo "- $n files, cold (pool 0): ${r}x (target <= 1.0): $(verdict "$r" le 1.0)" ;;
		ce) echo "- $n files, cold (pool emptied before each run): ${r}x (target <= 1.0): $(verdict "$r" le 1.0)" ;;
		w)
			case $n in
			1000) echo "- $n files, warm pool: ${r}x (target <= 0.5): $(verdict "$r" le 0.5)" ;;
			10000) echo "- $n files, warm pool: ${r}x (target <= 0.1): $(verdict "$r" le 0.1)" ;;
			*) echo "- $n files, warm pool: ${r}x (no target at this size)" ;;
			esac
			;;
		esac
	done <"$work/oh.targets"
	oh_growth
	oh_goals
}

# Issue 29: the warm run's cost at each size against its cost at 1k.
oh_growth() {
	echo
	if [ ! -s "$work/oh.warm" ]; then
		echo "A run's cost with a warm pool against its cost at 1k: not measured (no pool in this binary)."
		return 0
	fi
	base=$(awk '$1 == 1000 { print $2 }' "$work/oh.warm")
	echo "A run's cost with a warm pool (end to end, median) against its cost at 1,000 files:"
	echo
	echo "| files | sluice, warm pool | ratio to the 1k cost |"
	echo "|---|---|---|"
	while read -r n ns; do
		if [ -z "$base" ]; then
			echo "| $n | $(msec "$ns") ms | not measured (no 1000 in OH_SIZES) |"
		else
			echo "| $n | $(msec "$ns") ms | $(ratio "$ns" "$base") |"
		fi
	done <"$work/oh.warm"
	[ -z "$base" ] || fig "a run, warm pool, 1k files (the base of the next two)" "" "$(msec "$base") ms" ""
}

# Issue 29's goals of part 2, from oh.warm and oh.targets.
oh_goals() {
	base=$(awk '$1 == 1000 { print $2 }' "$work/oh.warm")
	echo
	echo "Issue 29's goals: a run with a warm pool at 10k files at most 1.3x its cost at 1k, at 100k"
	echo "at most 3x; cold (\`worktree.pool: 0\`) at most 1.0x the git pipeline at every size."
	echo
	for n in 10000 100000; do
		goal=1.3
		[ $n = 10000 ] || goal=3.0
		ns=$(awk -v n=$n '$1 == n { print $2 }' "$work/oh.warm")
		if [ -z "$base" ] || [ -z "$ns" ]; then
			echo "- $n files, warm pool: not measured (OH_SIZES needs 1000 and $n, and the pool)"
			continue
		fi
		r=$(ratio "$ns" "$base")
		v=$(verdict "$r" le $goal)
		echo "- $n files, warm pool: ${r}x the 1k cost ($(msec "$ns") against $(msec "$base") ms; goal <= $goal): $v"
		fig "a run, warm pool, $(kfiles $n) files, against its cost at 1k" "<= ${goal}x" "${r}x ($(msec "$ns") ms)" "$v"
	done
	sizes=$(awk '$2 == "c0" { printf "%s%s", s, $1; s = " / " }' "$work/oh.targets")
	rs=$(awk '$2 == "c0" { printf "%s%s", s, $3; s = " / " }' "$work/oh.targets")
	worst=$(awk '$2 == "c0" { seen = 1; if ($3 == "n/a") bad = 1; else if ($3 + 0 > m) m = $3 + 0 }
		END { if (seen && !bad) print m }' "$work/oh.targets")
	v=$(verdict "$worst" le 1.0)
	echo "- cold (\`worktree.pool: 0\`), $sizes files: ${rs}x the git pipeline (goal <= 1.0 at each size): $v"
	while read -r n kind r; do
		[ "$kind" = c0 ] || continue
		fig "cold (\`worktree.pool: 0\`), $(kfiles $n) files, against the git pipeline" "<= 1.0x" "${r}x" \
			"$(verdict "$r" le 1.0)"
	done <"$work/oh.targets"
}

# ---- 3. E2E_N work orders end to end, --jobs 2

# The memory probe: as a process whose executable is $BENCH_MEM_EXE exits
# (exit, return from main, or _exit), append "KIND VmHWM_kB PID" to
# $BENCH_MEM_LOG; KIND is "tick", "advance-run" (a worker) or "other".
# VmHWM is the kernel's high-water mark of the resident set: read at exit
# it is the process's peak, however short it lived.
mem_probe_build() {
	command -v cc >/dev/null || return 1
	cat >"$work/memprobe.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int recorded;

static void record(void)
{
	char exe[4096], buf[8192], line[128];
	const char *want = getenv("BENCH_MEM_EXE"), *log = getenv("BENCH_MEM_LOG");
	const char *kind = "other", *p;
	long hwm = -1;
	ssize_t n;
	int fd, len;

	if (recorded || !want || !log)
		return;
	recorded = 1;
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) < 0)
		return;
	exe[n] = '\0';
	if (strcmp(exe, want))
		return;
	if ((fd = open("/proc/self/status", O_RDONLY)) < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if ((p = strstr(buf, "VmHWM:")))
		hwm = strtol(p + 6, NULL, 10);
	if ((fd = open("/proc/self/cmdline", O_RDONLY)) >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		for (p = buf; n > 0 && p < buf + n; p += strlen(p) + 1)
			if (!strcmp(p, "tick") || !strcmp(p, "advance-run")) {
				kind = p;
				break;
			}
	}
	len = snprintf(line, sizeof(line), "%s %ld %d\n", kind, hwm, (int)getpid());
	if ((fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0644)) >= 0) {
		if (write(fd, line, (size_t)len) < 0)
			len = 0;
		close(fd);
	}
}

__attribute__((destructor)) static void at_exit(void)
{
	record();
}

void _exit(int status)
{
	record();
	for (;;)
		syscall(SYS_exit_group, status);
}
C
	cc -O2 -shared -fPIC -o "$work/memprobe.so" "$work/memprobe.c" 2>"$work/memprobe.err"
}

e2e_repo() { # DIR N: a 100-file repository with N work orders, each adding a file of its own
	make_files "$1" 100
	sluice_setup "$1" 'echo "$SLUICE_WORK_ORDER_ID" >"f-$SLUICE_WORK_ORDER_ID.txt"' ""
	e2e_w=0
	while [ $e2e_w -lt "$2" ]; do
		e2e_w=$((e2e_w + 1))
		add_wo "$1" "$(printf 'W%04d' $e2e_w)"
	done
}

# Ticks (`--jobs 2`, each under /usr/bin/time -v, and with PRELOAD in the
# environment if given) until the N runs are merged, at most 5; prints
# "WALL_NS TICKS MAXRSS_KB MERGED FIRST_TICK_NS MERGED_BY_THE_FIRST".
e2e_ticks() { # DIR N [PRELOAD]
	total=0 k=0 rss=0
	merged=0 first=0 first_merged=0
	settle
	while [ $k -lt 5 ] && [ "$merged" -lt "$2" ]; do
		k=$((k + 1))
		t=$(now)
		if [ -n "${3:-}" ]; then
			env LD_PRELOAD="$3" BENCH_MEM_EXE="$SLUICE" BENCH_MEM_LOG="$1.mem" \
				$TIMEV "$SLUICE" -C "$1" tick --jobs 2 >>"$1.ticks" 2>&1 || true
		else
			$TIMEV "$SLUICE" -C "$1" tick --jobs 2 >>"$1.ticks" 2>&1 || true
		fi
		t=$(($(now) - t))
		total=$((total + t))
		[ $k != 1 ] || first=$t
		if [ -n "$TIMEV" ] && [ -s "$1.time" ]; then
			r=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$1.time")
			[ "${r:-0}" -le "$rss" ] || rss=$r
		fi
		merged=$("$SLUICE" -C "$1" runs --json 2>/dev/null | jq '[.[] | select(.state == "merged")] | length' || echo 0)
		[ $k != 1 ] || first_merged=$merged
	done
	echo "$total $k $rss $merged $first $first_merged"
}

# Repetition I with E2E_SMALL work orders, ticked until all are merged (no
# /usr/bin/time, no probe): appends the first tick's wall time (ns) to
# e2e.small.first, and "x" to e2e.small.first.split when it did not merge all.
e2e_small() { # I
	ds="$work/e2e-small$1"
	progress "end to end, $E2E_SMALL work orders: run $1 of $E2E_REPS"
	e2e_repo "$ds" "$E2E_SMALL"
	set -- $(TIMEV="" e2e_ticks "$ds" "$E2E_SMALL")
	if [ "$4" -ne "$E2E_SMALL" ]; then
		broken "end to end, $E2E_SMALL work orders: $4 of $E2E_SMALL runs merged in $2 ticks (see $ds.ticks)"
	else
		echo "$5" >>"$work/e2e.small.first"
		[ "$6" -eq "$E2E_SMALL" ] || echo x >>"$work/e2e.small.first.split"
	fi
	[ "${KEEP:-0}" = 1 ] || rm -rf "$ds" "$ds".*
}

# Median ms per run of each step, from the event log: claimed to preparing,
# preparing, building, gating and reviewing, approved to merging (the wait
# for the train), merging.
e2e_steps() { # DIR
	"$SLUICE" -C "$1" log --json | jq -r '[.[] | select(.run != null)] | group_by(.run)
	| map(def at(c): (map(select(c)) | .[0].at_ms);
		{ q: (at(.to == "preparing") - at(.to == "queued")),
		  p: (at(.from == "preparing" and .to == "building") - at(.to == "preparing")),
		  b: (at(.from == "building" and .to == "gating") - at(.from == "preparing" and .to == "building")),
		  r: (at(.to == "approved") - at(.from == "building" and .to == "gating")),
		  a: (at(.to == "merging") - at(.to == "approved")),
		  m: (at(.to == "merged") - at(.to == "merging")) })
	| def med(f): (map(f) | sort | .[(length - 1) / 2 | floor]);
	  "\(med(.q)) \(med(.p)) \(med(.b)) \(med(.r)) \(med(.a)) \(med(.m))"' 2>/dev/null
}

mb() { awk -v kb="$1" 'BEGIN { if (kb == "" || kb < 0) print "n/a"; else printf "%.1f", kb * 1024 / 1e6 }'; }

e2e() {
	TIMEV=""
	if [ -x /usr/bin/time ]; then
		TIMEV="/usr/bin/time -v -o"
	fi
	echo
	echo "## 3. $E2E_N work orders end to end, \`sluice tick --jobs 2\`"
	echo
	echo "A 100-file repository, $E2E_N work orders dropped in the inbox at once (ingested by the"
	echo "tick, inside the timing), each adding a file of its own; a builder that writes it at once,"
	echo "no gates, a command reviewer that approves at once. Ticks back to back until all are"
	echo "merged. Peak memory: \`/usr/bin/time -v\`'s maximum resident set size (the largest process"
	echo "of the tree, git's included), and, in one more run, every sluice process's VmHWM at its exit"
	echo "(an LD_PRELOAD probe, see the script): the tick and each worker (\`advance-run\`). The first"
	echo "tick is timed on its own too, and each repetition is followed by one with $E2E_SMALL work orders"
	echo "(the first tick's time per work order at the two counts: does it grow with their number?)."
	echo
	: >"$work/e2e.wall" && : >"$work/e2e.rss" && : >"$work/e2e.steps" && : >"$work/e2e.peaks"
	: >"$work/e2e.first" && : >"$work/e2e.first.split"
	: >"$work/e2e.small.first" && : >"$work/e2e.small.first.split"
	ticks=""
	i=0
	while [ $i -lt "$E2E_REPS" ]; do
		i=$((i + 1))
		d="$work/e2e$i"
		progress "end to end, $E2E_N work orders: run $i of $E2E_REPS"
		e2e_repo "$d" "$E2E_N"
		[ -z "$TIMEV" ] || TIMEV="/usr/bin/time -v -o $d.time"
		set -- $(e2e_ticks "$d" "$E2E_N")
		if [ "$4" -ne "$E2E_N" ] ||
			[ "$(git -C "$d" ls-tree --name-only main | grep -c '^f-W')" -ne "$E2E_N" ]; then
			broken "end to end: $4 of $E2E_N runs merged in $2 ticks (see $d.ticks)"
		else
			echo "$1" >>"$work/e2e.wall"
			echo "$5" >>"$work/e2e.first"
			[ "$6" -eq "$E2E_N" ] || echo x >>"$work/e2e.first.split"
			e2e_steps "$d" >>"$work/e2e.steps" || true
			echo "$3" >>"$work/e2e.rss"
			ticks="$ticks $2"
		fi
		[ "${KEEP:-0}" = 1 ] || rm -rf "$d" "$d".*
		e2e_small $i # in turn with E2E_N's, so that both are of the same minutes
	done
	probe="not run"
	if ldd "$SLUICE" 2>/dev/null | grep -q 'libasan'; then
		# ASan must be the first library loaded: an LD_PRELOAD probe would stop every process
		probe="not run: the binary is built with AddressSanitizer"
	elif mem_probe_build; then
		d="$work/e2e-probe"
		progress "end to end, $E2E_N work orders: the memory probe's run"
		e2e_repo "$d" "$E2E_N"
		[ -z "$TIMEV" ] || TIMEV="/usr/bin/time -v -o $d.time"
		set -- $(e2e_ticks "$d" "$E2E_N" "$work/memprobe.so")
		[ "$4" -eq "$E2E_N" ] || broken "end to end with the memory probe: $4 of $E2E_N runs merged"
		probe=ok
	else
		probe="not run: no C compiler ($(cat "$work/memprobe.err" 2>/dev/null | head -n 1))"
	fi
	w=$(median <"$work/e2e.wall")
	echo "| measure | value |"
	echo "|---|---|"
	echo "| runs of the benchmark | $(grep -c . "$work/e2e.wall" || true) of $E2E_REPS with all $E2E_N merged (ticks each:$ticks) |"
	echo "| wall time, median | $(awk -v ns="$w" 'BEGIN { if (ns == "") print "n/a"; else printf "%.2f s", ns / 1e9 }') (each: $(sort -n "$work/e2e.wall" | awk '{ printf "%s%.2f", (NR > 1 ? ", " : ""), $1 / 1e9 }')) |"
	echo "| per work order | $(awk -v ns="$w" -v n="$E2E_N" 'BEGIN { if (ns == "") print "n/a"; else printf "%.0f ms", ns / n / 1e6 }') |"
	e2e_first_rows
	if [ -s "$work/e2e.steps" ]; then
		echo "| a run's steps, median ms (event log; median over the runs of the benchmark):" \
			"claimed to preparing / preparing / building / gating and reviewing / approved to" \
			"merging / merging | $(for c in 1 2 3 4 5 6; do col_median "$work/e2e.steps" $c; done |
			paste -sd/ | sed 's,/, / ,g') |"
	fi
	if [ -n "$TIMEV" ]; then
		echo "| largest process of the tree (\`/usr/bin/time -v\`, max over the runs) | $(mb "$(sort -n "$work/e2e.rss" | tail -n 1)") MB |"
	else
		echo "| largest process of the tree | n/a (no /usr/bin/time) |"
	fi
	if [ "$probe" = ok ]; then
		touch "$d.mem"
		for kind in tick advance-run other; do
			c=$(awk -v k=$kind '$1 == k' "$d.mem" | grep -c . || true)
			[ "$c" -gt 0 ] || [ $kind = other ] || broken "the memory probe saw no $kind process"
			[ "$c" -gt 0 ] || continue
			mx=$(awk -v k=$kind '$1 == k { print $2 }' "$d.mem" | sort -n | tail -n 1)
			md=$(awk -v k=$kind '$1 == k { print $2 }' "$d.mem" | median)
			case $kind in
			tick) label="the tick process" ;;
			advance-run) label="a worker (\`advance-run\`)" ;;
			*) label="other sluice processes" ;;
			esac
			echo "| peak resident memory, $label: max (median), $c processes | $(mb "$mx") MB ($(mb "$md") MB) |"
			echo "$mx" >>"$work/e2e.peaks"
		done
		echo "| the memory probe's run (not in the median) | $(awk -v ns="$1" 'BEGIN { printf "%.2f s", ns / 1e9 }'), $2 tick(s), largest process $(mb "$3") MB |"
	else
		echo "| peak resident memory of each sluice process | $probe |"
	fi
	[ "${KEEP:-0}" = 1 ] || rm -rf "$work/e2e-probe" "$work"/e2e-probe.*
	echo
	echo "Load average when done: $(load)."
	echo
	echo "Targets: $E2E_N work orders under 10 s (the target is for 200); every sluice process under 30 MB."
	echo
	if [ -n "$w" ]; then
		s=$(awk -v ns="$w" 'BEGIN { printf "%.2f", ns / 1e9 }')
		if [ "$E2E_N" = 200 ]; then
			echo "- wall time: $s s (target < 10 s): $(verdict "$s" le 9.999)"
		else
			echo "- wall time: $s s for $E2E_N work orders (the target is for 200: not judged)"
		fi
	fi
	if [ -s "$work/e2e.peaks" ]; then
		p=$(mb "$(sort -n "$work/e2e.peaks" | tail -n 1)")
		echo "- largest sluice process: $p MB (target < 30 MB): $(verdict "$p" le 29.999)"
	fi
	e2e_goals
}

# ms per work order, one decimal: NS N
per_wo() { awk -v ns="$1" -v n="$2" 'BEGIN { if (ns == "") print "n/a"; else printf "%.1f", ns / n / 1e6 }'; }
# "K of M": the runs of FILE (first ticks) whose first tick merged all
all_in_first() { echo "$(($(grep -c . "$1" || true) - $(grep -c . "$1.split" || true))) of $(grep -c . "$1" || true)"; }

# Issue 29's rows of part 3: the first tick alone, E2E_N and E2E_SMALL work orders.
e2e_first_rows() {
	fn=$(median <"$work/e2e.first")
	fs=$(median <"$work/e2e.small.first")
	echo "| the first tick alone: wall time, median | $(awk -v ns="$fn" 'BEGIN { if (ns == "") print "n/a"; else printf "%.2f s", ns / 1e9 }')" \
		"(each: $(sort -n "$work/e2e.first" | awk '{ printf "%s%.2f", (NR > 1 ? ", " : ""), $1 / 1e9 }');" \
		"all $E2E_N merged by it in $(all_in_first "$work/e2e.first") runs) |"
	echo "| the first tick per work order: $E2E_N / $E2E_SMALL work orders (median of $E2E_REPS each) |" \
		"$(per_wo "$fn" "$E2E_N") / $(per_wo "$fs" "$E2E_SMALL") ms" \
		"($E2E_SMALL merged by the first tick in $(all_in_first "$work/e2e.small.first") runs) |"
}

# Issue 29's goals of part 3.
e2e_goals() {
	fn=$(median <"$work/e2e.first")
	fs=$(median <"$work/e2e.small.first")
	echo
	echo "Issue 29's goals: 200 work orders in one \`sluice tick\` under 10 s; a time per work order"
	echo "that does not grow with their number (here: the first tick's per work order with $E2E_N at"
	echo "most 1.1x that with $E2E_SMALL, for the noise)."
	echo
	if [ -z "$fn" ]; then
		echo "- $E2E_N work orders in one tick: not measured"
	else
		s=$(awk -v ns="$fn" 'BEGIN { printf "%.2f", ns / 1e9 }')
		v=""
		if [ "$E2E_N" != 200 ]; then
			echo "- $E2E_N work orders in one tick: $s s (the goal is for 200: not judged)"
		else
			v=$(verdict "$s" le 9.999)
			[ ! -s "$work/e2e.first.split" ] ||
				v="not met (the first tick merged all in $(all_in_first "$work/e2e.first") runs)"
			echo "- $E2E_N work orders in one tick: $s s (goal < 10 s): $v"
		fi
		fig "$E2E_N work orders in one \`sluice tick\`" "$([ "$E2E_N" = 200 ] && echo "< 10 s")" "$s s" "$v"
	fi
	if [ -z "$fn" ] || [ -z "$fs" ]; then
		echo "- per work order in one tick, $E2E_N against $E2E_SMALL: not measured"
		return 0
	fi
	a=$(per_wo "$fn" "$E2E_N")
	b=$(per_wo "$fs" "$E2E_SMALL")
	r=$(ratio "$a" "$b")
	v=$(verdict "$r" le 1.1)
	echo "- per work order in one tick: $a ms for $E2E_N, $b ms for $E2E_SMALL: ${r}x (goal <= 1.1): $v"
	fig "per work order in one tick, $E2E_N against $E2E_SMALL" "<= 1.1x (no growth)" "$a / $b ms (${r}x)" "$v"
}

# ---- 4. an npm gate, fresh against the pool with keep-ignored

# The gates: the literal one, and two that profit from kept dependencies.
NPM_GATE_CI='npm ci && node index.js'
NPM_GATE_INSTALL='npm install --prefer-offline --no-audit --no-fund && node index.js'
NPM_GATE_STAMP='h=$(sha256sum package-lock.json); [ "$(cat node_modules/.lock-sha 2>/dev/null)" = "$h" ] || { npm ci && echo "$h" >node_modules/.lock-sha; } && node index.js'

# A small project with a lockfile: package.json, package-lock.json (made
# here, once, from the registry; that fills the npm cache in $HOME/.npm
# too), index.js using both dependencies, node_modules/ ignored.
npm_project() { # DIR
	mkdir -p "$1"
	printf '{\n  "name": "bench-gate",\n  "version": "1.0.0",\n  "private": true\n}\n' >"$1/package.json"
	(cd "$1" && timeout 120 npm install --no-audit --no-fund chalk@4.1.2 ms@2.1.3 >"$work/npm-install.log" 2>&1) ||
		return 1
	rm -rf "$1/node_modules"
	printf '%s\n' 'const chalk = require("chalk"), ms = require("ms");' \
		'console.log(chalk.green("ok"), ms(60000));' >"$1/index.js"
	echo "node_modules/" >"$1/.gitignore"
}

npm_repo() { # DIR GATE POOL(0|2)
	git init -q -b main "$1"
	cp -R "$work/npmproject/." "$1/"
	echo "line 0" >"$1/f1.txt"
	(cd "$1" && git add -A && git commit -q -m base)
	recycle=""
	[ "$3" = 0 ] || recycle=keep-ignored
	sluice_setup "$1" 'echo x >>f1.txt' "gates:
  deps: [sh, -c, '$2']"
	set_pool "$1" "$3" "$recycle"
	(run_wo "$1" warmup) >/dev/null || true # a first run; with the pool, its worktree is pooled
}

gate_ms() { # REPO RUN: the gate's duration_ms from gates.json, or "" if it did not pass
	jq -r '.[] | select(.name == "deps") | if .passed then .duration_ms else "" end' \
		"$1/.system/runs/$2/gates.json" 2>/dev/null
}

npm_part() {
	echo
	echo "## 4. A gate running npm on a small project with a lockfile"
	echo
	skip=""
	if [ "$NPM" = 0 ]; then
		skip="skipped (NPM=0)"
	elif ! command -v npm >/dev/null || ! command -v node >/dev/null; then
		skip="skipped: npm or node is not installed"
	elif [ $POOL = 0 ]; then
		skip="skipped: no worktree pool in this binary"
	elif ! npm_project "$work/npmproject"; then
		skip="skipped: npm could not install from the registry (offline?): $(tail -n 1 "$work/npm-install.log")"
	fi
	if [ -n "$skip" ]; then
		echo "$skip."
		if [ "$NPM" = 1 ] || { [ "$NPM" = auto ] && [ $QUICK = 0 ] && [ $POOL = 1 ]; }; then
			broken "the npm gate benchmark was $skip"
		fi
		return 0
	fi
	pk=$(jq '.packages | length - 1' "$work/npmproject/package-lock.json")
	echo "package.json with chalk@4.1.2 and ms@2.1.3 ($pk packages in the lockfile), node $(node --version),"
	echo "npm $(npm --version); the npm cache was filled once before (the registry is still asked:"
	echo "\`npm ci\` runs an audit). Each gate ends with \`node index.js\` (which uses both). A builder that"
	echo "appends to f1.txt, a command reviewer, no merge gates. Fresh: \`worktree.pool: 0\`. From the"
	echo "pool: \`worktree.pool: 2\`, \`worktree.recycle: keep-ignored\`, node_modules/ in .gitignore, the"
	echo "previous run's worktree (and its node_modules) in the pool. The gate's \`duration_ms\` from"
	echo "the run's gates.json, median of $NPM_REPS."
	echo
	echo "| gate | fresh | from the pool, keep-ignored | fresh/pool |"
	echo "|---|---|---|---|"
	: >"$work/npm.targets"
	for g in ci install stamp; do
		case $g in
		ci) gate=$NPM_GATE_CI label="\`npm ci\` (the literal gate)" ;;
		install) gate=$NPM_GATE_INSTALL label="\`npm install --prefer-offline --no-audit --no-fund\`" ;;
		stamp) gate=$NPM_GATE_STAMP label="\`npm ci\` unless node_modules/.lock-sha holds package-lock.json's SHA-256" ;;
		esac
		progress "npm gate ($g): making the repositories"
		npm_repo "$work/npm-$g-fresh" "$gate" 0
		npm_repo "$work/npm-$g-pool" "$gate" 2
		: >"$work/npm-$g-fresh.ms" && : >"$work/npm-$g-pool.ms"
		i=0
		while [ $i -lt "$NPM_REPS" ]; do
			i=$((i + 1))
			progress "npm gate ($g): run $i of $NPM_REPS"
			for v in fresh pool; do
				r=$(run_wo "$work/npm-$g-$v" "npm-$i") || continue
				m=$(gate_ms "$work/npm-$g-$v" "${r% *}")
				if [ -z "$m" ]; then
					broken "npm gate $g ($v): no passed gate in run ${r% *}"
					continue
				fi
				echo "$m" >>"$work/npm-$g-$v.ms"
			done
		done
		f=$(median <"$work/npm-$g-fresh.ms")
		p=$(median <"$work/npm-$g-pool.ms")
		echo "| $label | ${f:-n/a} ms | ${p:-n/a} ms | $(ratio "$f" "$p")x |"
		echo "$g $(ratio "$f" "$p")" >>"$work/npm.targets"
		[ "${KEEP:-0}" = 1 ] || rm -rf "$work/npm-$g-fresh" "$work/npm-$g-pool" "$work/npm-$g"-*.*
	done
	echo
	echo "Load average when done: $(load)."
	echo
	echo "Target: the \`npm ci\` gate from the pool with keep-ignored at least 5x faster than fresh."
	echo
	while read -r g r; do
		case $g in
		ci) echo "- literal \`npm ci\`: ${r}x (target >= 5): $(verdict "$r" ge 5) (\`npm ci\` removes node_modules/ before it installs)" ;;
		install) echo "- \`npm install --prefer-offline\`: ${r}x: $(verdict "$r" ge 5) against 5x" ;;
		stamp) echo "- \`npm ci\` when the lockfile changed: ${r}x: $(verdict "$r" ge 5) against 5x" ;;
		esac
	done <"$work/npm.targets"
}

# ---- issue 29's figures, round by round

# From $top/figs.1 .. figs.ROUNDS: a row per figure, in the order the first
# round that has it gave them, a column per round, and how many met the goal.
rounds_table() {
	r=0 files=""
	while [ $r -lt "$ROUNDS" ]; do
		r=$((r + 1))
		files="$files $top/figs.$r"
	done
	cat $files | grep -q . || return 0
	echo
	echo "## Issue 29's figures, round by round"
	echo
	echo "Medians of each round (the tables above give each round's samples and the git side)."
	echo
	line="| figure | goal" sep="|---|---"
	r=0
	while [ $r -lt "$ROUNDS" ]; do
		r=$((r + 1))
		line="$line | round $r" sep="$sep|---"
	done
	echo "$line | met in |"
	echo "$sep|---|"
	awk -F '\t' -v n="$ROUNDS" '
	{
		k = split(FILENAME, p, ".")
		r = p[k]
		if (!($1 in goal)) {
			order[++rows] = $1
			goal[$1] = ($2 == "" ? "-" : $2)
		}
		val[$1, r] = $3
		if ($4 != "") judged[$1] = 1
		if ($4 == "met") met[$1]++
	}
	END {
		for (i = 1; i <= rows; i++) {
			l = order[i]
			line = "| " l " | " goal[l]
			for (r = 1; r <= n; r++)
				line = line " | " (((l, r) in val) ? val[l, r] : "-")
			print line " | " (judged[l] ? (met[l] + 0) " of " n : "-") " |"
		}
	}' $files
}

# ---- main

round=0
while [ $round -lt "$ROUNDS" ]; do
	round=$((round + 1))
	work=$top/round$round
	mkdir -p "$work"
	: >"$top/figs.$round"
	if [ "$ROUNDS" -gt 1 ]; then
		round_label="round $round of $ROUNDS: "
		echo
		echo "# Round $round of $ROUNDS, $(date -u '+%H:%M UTC'), load average $(load)"
	fi
	for part in $PARTS; do
		case $part in
		acquire) acquire ;;
		overhead) overhead ;;
		e2e) e2e ;;
		npm) npm_part ;;
		*) echo "bench/run.sh: unknown part '$part' in PARTS" >&2; exit 2 ;;
		esac
	done
	[ "${KEEP:-0}" = 1 ] || { chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"; }
done
rounds_table
echo
echo "Done: $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(load)."
if [ -s "$top/broken" ]; then
	echo
	echo "**Broken** ($(grep -c . "$top/broken") problem(s); the figures above may be incomplete):"
	sed 's/^/- /' "$top/broken"
	exit 1
fi
