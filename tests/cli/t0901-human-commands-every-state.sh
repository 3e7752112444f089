#!/bin/sh
# Every human command (approve, reject, retry, abandon) on a run in every
# state a person can meet: what each accepts and refuses, and where the run
# goes. This is the behaviour of sluice before issue 11 (the matrix was
# compared with the binary of 6849b2c), kept now that the store refuses any
# move the state table (src/store/state.c) does not have.
. "$(dirname "$0")/lib.sh"

# try CMD RUN WANT-RC WANT-STATE: run a human command, check its exit status
# and the state after it (a refusal exits 1 and leaves the run as it was).
try() {
	_m=
	case $1 in approve|reject) _m="-m because" ;; esac
	# shellcheck disable=SC2086
	test_expect_failure_code "$3" sluice -C r "$1" "$2" $_m 2>try.err || { cat try.err >&2; return 1; }
	_s=$(state_of r "$2")
	[ "$_s" = "$4" ] || { echo "$1: run $2 is $_s, not $4" >&2; cat try.err >&2; return 1; }
}

# A run of a new work order WO (builder EDIT) left by `sluice run` at the fault point FP.
run_to() { # WO FP [EDIT]
	echo "${3:-echo $1 >$1.txt}" >"$BUILDERS/$1.sh" && wo r "$1" &&
	{ SLUICE_FAULT=$2 "$SLUICE" -C r run "$1" >run.out 2>&1 || :; } &&
	grep -q "fault point '$2' reached" run.out
}

test_expect_success 'setup: manual reviewer, no conflict resolver, a gate and a setup' '
	sluice_repo r "queue:" "  jobs: 8" "merge:" "  resolver: none" "worktree:" "  setup: [\"true\"]" \
		"gates:" "  g: [\"true\"]" &&
	seq 1 5 >r/lines.txt && git -C r add lines.txt && git -C r commit -q -m lines
'

for st in queued:claim.after_claim preparing:prepare.after_setup building:build.after_builder \
	gating:gates.after_all; do
	test_expect_success "${st%%:*}: only abandon is taken" "
		run_to W-${st%%:*} ${st#*:} &&
		run=\$(run_of r W-${st%%:*}) &&
		test \"\$(state_of r \$run)\" = ${st%%:*} &&
		try approve \$run 1 ${st%%:*} && try reject \$run 1 ${st%%:*} &&
		try retry \$run 1 ${st%%:*} && try abandon \$run 0 abandoned
	"
done

test_expect_success 'awaiting_review: approve, reject and abandon are taken, retry is refused' '
	for w in AW1 AW2 AW3; do
		echo "echo $w >$w.txt" >"$BUILDERS/$w.sh" && wo r $w || return 1
	done &&
	sluice -C r tick >tick.out &&
	a=$(run_of r AW1) && b=$(run_of r AW2) && c=$(run_of r AW3) &&
	try retry $a 1 awaiting_review &&
	try approve $a 0 approved && try reject $b 0 rejected && try abandon $c 0 abandoned
'

test_expect_success 'approved: retry keeps it approved, approve and reject are refused' '
	a=$(run_of r AW1) &&
	try approve $a 1 approved && try reject $a 1 approved && try retry $a 0 approved
'

test_expect_success 'merging (killed before the merge): only abandon is taken' '
	echo "echo AP >AP.txt" >"$BUILDERS/AP.sh" && wo r AP &&
	sluice -C r run AP >/dev/null &&
	run=$(run_of r AP) &&
	sluice -C r approve $run &&
	{ SLUICE_FAULT=train.before_land "$SLUICE" -C r run AP >run.out 2>&1 || :; } &&
	test "$(state_of r $run)" = merging &&
	try approve $run 1 merging && try reject $run 1 merging && try retry $run 1 merging &&
	try abandon $run 0 abandoned
'

test_expect_success 'merged: every command is refused' '
	a=$(run_of r AW1) &&
	sluice -C r tick >tick.out && test "$(state_of r $a)" = merged &&
	for c in approve reject retry abandon; do try $c $a 1 merged || return 1; done
'

test_expect_success 'abandoned: every command is refused' '
	c=$(run_of r AW3) &&
	for c2 in approve reject retry abandon; do try $c2 $c 1 abandoned || return 1; done
'

test_expect_success 'rejected: only retry is taken (queued again)' '
	b=$(run_of r AW2) &&
	try approve $b 1 rejected && try reject $b 1 rejected && try abandon $b 1 rejected &&
	try retry $b 0 queued
'

test_expect_success 'failed: only retry is taken (queued again)' '
	echo "exit 1" >"$BUILDERS/FL.sh" && wo r FL &&
	sluice -C r tick >tick.out &&
	run=$(run_of r FL) && test "$(state_of r $run)" = failed &&
	try approve $run 1 failed && try reject $run 1 failed && try abandon $run 1 failed &&
	try retry $run 0 queued
'

test_expect_success 'merge_conflict: retry before the conflict is resolved is refused, abandon is taken' '
	for w in K1 K2 K3; do
		echo "sed -i s/^3\$/three-$w/ lines.txt" >"$BUILDERS/$w.sh" && wo r $w || return 1
	done &&
	sluice -C r tick >tick.out &&
	for w in K1 K2 K3; do sluice -C r approve $(run_of r $w) || return 1; done &&
	sluice -C r tick >tick.out &&
	n=0 && k2= && k3= &&
	for w in K1 K2 K3; do
		r1=$(run_of r $w) &&
		case $(state_of r $r1) in
		merged) n=$((n + 1)) ;;
		merge_conflict) if [ -z "$k2" ]; then k2=$r1; else k3=$r1; fi ;;
		esac || return 1
	done &&
	test $n = 1 && test -n "$k3" &&
	try approve $k2 1 merge_conflict && try reject $k2 1 merge_conflict &&
	try retry $k2 1 merge_conflict && test_grep "git merge main, fix, commit" try.err &&
	try abandon $k3 0 abandoned
'

test_done
