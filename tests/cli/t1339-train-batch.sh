#!/bin/sh
# Batches (merge.batch: docs/config.md, "Batches"): approved cars are tested
# as one chain, the merge gate on the chain's tip only. Green, every car
# lands in order, each landing's train.json naming the tested commit that
# covers it, and `sluice audit` checks exactly that. A red batch is bisected:
# only the car that makes it red leaves, with a reason that names the
# bisection; the rest land. No first-parent commit of main lands untested
# (by itself or by a later commit of its batch). kill -9 during a batch's
# test and during a bisection: every run lands exactly once, never untested.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool jq

# The merge gate (sh gate.sh LOG): logs "<run> <HEAD> <tree> merge|own <exit>" (merge: the
# train's test of a car; own: a run's gating), red when the tree has bad.txt and
# another run's file: green alone (in its own gating), red merged. While
# LOG.hold-<run> exists the train's test of that run's car waits (at most
# 600 s, a guard against a hang), with LOG.waiting-<run> there to say so.
cat >"$TRASH/gate.sh" <<'EOS'
run=$(basename "$SLUICE_RUN_DIR") kind=own
[ "$run" != train ] || { run=$(basename "$(dirname "$SLUICE_RUN_DIR")") && kind=merge; }
if [ $kind = merge ] && [ -e "$1.hold-$run" ]; then # held: a test kills the tick here
	: >"$1.waiting-$run"
	i=0
	while [ -e "$1.hold-$run" ] && [ $i -lt 6000 ]; do sleep 0.1; i=$((i + 1)); done
fi
rc=0
[ ! -e bad.txt ] || [ "$(ls f*.txt | wc -l)" -le 1 ] || { echo "bad.txt with others: red"; rc=1; }
echo "$run $(git rev-parse HEAD) $(git rev-parse HEAD^{tree}) $kind $rc" >>"$1"
exit $rc
EOS

# batch_repo DIR N [config lines...]: N work orders W1..WN built and waiting
# for a person's review (each adds its own file; W$BAD also adds bad.txt),
# then all approved at once: the next ticks find N approved runs.
batch_repo() {
	_d=$1 _n=$2 && shift 2 &&
	sluice_repo "$_d" "gates:" "  test: [sh, $TRASH/gate.sh, $TRASH/$_d.log]" "merge:" "  gates: [test]" \
		"  batch: 4" "$@" "queue:" "  jobs: 1" "reviewer:" "  mode: manual" &&
	git -C "$_d" rev-parse main >"$_d.base" &&
	_i=1 && while [ $_i -le "$_n" ]; do
		echo "echo $_i >f$_i.txt" >"$BUILDERS/W$_i.sh" &&
		{ [ "$_i" != "${BAD:-0}" ] || echo "echo bad >bad.txt" >>"$BUILDERS/W$_i.sh"; } &&
		wo "$_d" W$_i || return 1
		_i=$((_i + 1))
	done &&
	sluice -C "$_d" check >/dev/null &&
	_i=0 && while [ $_i -lt "$_n" ]; do # one run claimed a tick (queue.jobs 1)
		sluice -C "$_d" tick >>"$_d.tick0" 2>&1 || return 1
		_i=$((_i + 1))
	done &&
	test "$(sluice -C "$_d" runs --state awaiting_review | grep -cE "^[0-9]{8}-")" = "$_n" &&
	_i=1 && while [ $_i -le "$_n" ]; do # approved in order: the train's order
		sluice -C "$_d" approve "$(run_of "$_d" W$_i)" >/dev/null || return 1
		_i=$((_i + 1))
	done &&
	test "$(sluice -C "$_d" runs --state approved | grep -cE "^[0-9]{8}-")" = "$_n"
}

# Every merge on main's first-parent line since the base was tested green as
# itself, or is covered: its train.json names a tested commit, green in the
# log, that holds it on its first-parent line, in the same batch.
landed_covered() { # DIR LOG
	for _c in $(git -C "$1" rev-list --first-parent --merges main); do
		_r=$(git -C "$1" log -1 --format=%B "$_c" | sed -n "s/^Sluice-Run: //p")
		_j=$1/.system/runs/$_r/train.json
		_t=$(jq -r .tested_commit "$_j")
		grep -q " $_t [0-9a-f]* merge 0\$" "$2" ||
			{ echo "$_c (run $_r) landed on $_t, not tested green" >&2; cat "$2" >&2; return 1; }
		! grep -q " $_t [0-9a-f]* merge [1-9]" "$2" ||
			{ echo "$_t was red once" >&2; return 1; }
		[ "$_t" = "$_c" ] || { git -C "$1" merge-base --is-ancestor "$_c" "$_t" &&
			jq -e '.covered_by | type == "string"' "$_j" >/dev/null; } ||
			{ echo "$_c: tested $_t does not cover it" >&2; cat "$_j" >&2; return 1; }
	done
}

test_expect_success 'eight green runs, batch 4: all land in order after two gate runs' '
	batch_repo g 8 &&
	settle g &&
	for i in 1 2 3 4 5 6 7 8; do
		test "$(merges_of g W$i)" = 1 &&
		test "$(state_of g "$(run_of g W$i)")" = merged || return 1
	done &&
	test "$(grep -c " merge " g.log)" = 2 &&
	git -C g log --reverse --first-parent --merges --format=%B main | sed -n "s/^Work-Order: //p" >order &&
	printf "W%s\n" 1 2 3 4 5 6 7 8 >order.want &&
	test_cmp order.want order &&
	landed_covered g "$TRASH/g.log" &&
	train_records_hold g &&
	test "$(jq -s "map(select(.covered_by)) | length" g/.system/runs/*/train.json)" = 6 &&
	r4=$(run_of g W4) &&
	jq -e --arg r "$r4" ".covered_by == \$r" g/.system/runs/$(run_of g W1)/train.json >/dev/null &&
	sluice -C g audit >audit.out &&
	sluice -C g audit --json >audit.json &&
	test "$(jq -r .gated audit.json)" = 8 &&
	sluice -C g log "$(run_of g W2)" >log2 &&
	test_grep "in a batch of" log2
'

test_expect_success 'show, show --json and the desk say which test covered a landing' '
	r1=$(run_of g W1) && r4=$(run_of g W4) &&
	sluice -C g show $r1 >show1 &&
	test_grep "in a batch, covered by the test of W4.s car" show1 &&
	sluice -C g show --json $r1 >show1.json &&
	jq -e --arg r "$r4" ".train.covered_by == \$r and .train.covered_by_work_order == \"W4\" and
		.train.tested_commit != .train.commit" show1.json >/dev/null &&
	schema_validate show.schema.json show1.json &&
	sluice -C g show --json $r4 >show4.json &&
	jq -e ".train.covered_by == null and .train.tested_commit == .train.commit" show4.json >/dev/null &&
	schema_validate show.schema.json show4.json &&
	sluice -C g show $r4 >show4 &&
	test_grep "the tested commit [0-9a-f]* is the merge commit" show4 &&
	if command -v curl >/dev/null; then
		desk_up g && test_when_finished "kill $(cat "$TRASH/desk.pid")" &&
		desk_page /runs/$r1 >run1.html &&
		test_grep "a batch: covered by the green test of W4" run1.html
	fi
'

test_expect_success 'the audit finds a covered landing whose tested commit does not hold it' '
	r1=$(run_of g W1) && j=g/.system/runs/$r1/train.json &&
	cp $j j.keep &&
	other=$(jq -r .tested_commit g/.system/runs/$(run_of g W8)/train.json) &&
	jq --arg t "$(cat g.base)" \
		".tested_commit = \$t | .covered_commit = \$t" j.keep >$j &&
	test_expect_failure_code 1 sluice -C g audit >audit.bad 2>&1 &&
	test_grep "covering tested commit" audit.bad &&
	cp j.keep $j
'

test_expect_success 'a revert in the line turns batching off: its car runs the watch gate itself' '
	printf "%s\n" "watch:" "  gates:" "    e2e: [sh, -c, \"git rev-parse HEAD >>$TRASH/g.e2e\"]" \
		>>g/.system/config.yaml &&
	r1=$(run_of g W1) && m1=$(git -C g log --first-parent --merges --format=%H main |
		while read -r c; do
			git -C g log -1 --format=%B $c | grep -q "^Sluice-Run: $r1\$" && echo $c; done) &&
	test -n "$m1" &&
	echo "echo 9 >f9.txt" >"$BUILDERS/W9.sh" && echo "echo 10 >f10.txt" >"$BUILDERS/W10.sh" &&
	wo g W9 && wo g W10 &&
	wo g W1-revert "priority: urgent" "revert: {commit: \"$m1\", run: \"$r1\", gate: e2e}" &&
	sluice -C g tick >t1 2>&1 && sluice -C g tick >t2 2>&1 && sluice -C g tick >t3 2>&1 &&
	for w in W1-revert W9 W10; do
		test "$(state_of g "$(run_of g $w)")" = awaiting_review || return 1
	done &&
	for w in W9 W10 W1-revert; do
		sluice -C g approve "$(run_of g $w)" >/dev/null || return 1
	done &&
	: >"$TRASH/g.e2e" &&
	settle g &&
	for w in W1-revert W9 W10; do
		test "$(merges_of g $w)" = 1 || return 1
	done &&
	! git -C g cat-file -e main:f1.txt 2>/dev/null &&
	rv=$(run_of g W1-revert) &&
	jq -e ".covered_by == null and ([.gates[].name] | index(\"watch.e2e\") != null)" \
		g/.system/runs/$rv/train.json >/dev/null &&
	test -s "$TRASH/g.e2e" &&
	landed_covered g "$TRASH/g.log" &&
	sluice -C g audit >/dev/null
'

test_expect_success 'one red run among eight: bisected in at most 5 gate runs, only it leaves, the rest land' '
	BAD=6 batch_repo b 8 "  rerun_failed: 0" &&
	settle b &&
	for i in 1 2 3 4 5 7 8; do
		test "$(merges_of b W$i)" = 1 || return 1
	done &&
	test "$(merges_of b W6)" = 0 &&
	r6=$(run_of b W6) &&
	test "$(state_of b $r6)" != merged &&
	! git -C b cat-file -e main:bad.txt 2>/dev/null &&
	landed_covered b "$TRASH/b.log" &&
	gate_first_parents b "$(cat b.base)" "test ! -e bad.txt" &&
	test "$(grep -c " merge " b.log)" -le 5 &&
	sluice -C b log $r6 >log6 &&
	test_grep "a red batch bisected: green up to W5" log6 &&
	test_grep "gate test (exit 1)" log6 &&
	sluice -C b log "$(run_of b W5)" >log5 &&
	test_grep "bisecting a red batch" log5 &&
	sluice -C b audit >/dev/null
'

test_expect_success 'merge.batch is checked: a bad value names the file and what to write' '
	sluice_repo c "merge:" "  batch: 0" &&
	test_expect_failure_code 1 sluice -C c check >c.out 2>&1 &&
	test_grep "config.yaml" c.out &&
	test_grep "merge.batch" c.out &&
	sed -i "s/batch: 0/batch: 65/" c/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C c check >c.out 2>&1 &&
	test_grep "merge.batch" c.out
'

# After a kill in DIR (BAD=3 of 6): W1, W2, W4-W6 landed once each, W3 not,
# every landing tested (itself or covered), main green, the records and the
# audit hold.
w3_left_rest_once() { # DIR
	for _i in 1 2 4 5 6; do
		test "$(merges_of "$1" W$_i)" = 1 || return 1
	done &&
	test "$(merges_of "$1" W3)" = 0 &&
	landed_covered "$1" "$TRASH/$1.log" &&
	gate_first_parents "$1" "$(cat "$1.base")" "test ! -e bad.txt" &&
	train_records_hold "$1" &&
	sluice -C "$1" audit >/dev/null
}

# kill -9 at POINT, the first time any worker reaches it, in two ticks in a
# row (the tick and its workers at once: the batch's test, W3 red in it, and
# its test again); then ticks until settled: each lands once, never untested.
for point in train.after_gates train.after_result train.after_car; do
	test_expect_success "killed at $point in the test of a batch, twice: each lands once, tested" '
		rm -rf k k.base "$TRASH/k.log" &&
		BAD=3 batch_repo k 6 &&
		FAULT_GROUP=1 fault_fire $point k.kill1 -C k tick &&
		{ FAULT_GROUP=1 fault_fire $point k.kill2 -C k tick || :; } &&
		settle k &&
		w3_left_rest_once k
	'
done

# kill -9 of the tick and its workers while the gates test W4 (the batch's
# test, W3 red in it) or W2 (the bisection's first step): each lands once,
# never untested; W3 alone leaves.
test_skip_unless_tool setsid pkill
for who in W4 W2; do
	test_expect_success "killed -9 while the train tests $who: each lands once, tested" '
		rm -rf h h.base "$TRASH"/h.log* tick.sid &&
		BAD=3 batch_repo h 6 &&
		hr=$(run_of h '$who') &&
		: >"$TRASH/h.log.hold-$hr" &&
		{ setsid sh -c "echo \$\$ >tick.sid; exec \"$SLUICE\" -C h tick >tick.out 2>&1" & } &&
		wait_until "[ -e \"$TRASH/h.log.waiting-$hr\" ]" &&
		pkill -KILL -s "$(cat tick.sid)" &&
		wait &&
		rm "$TRASH/h.log.hold-$hr" &&
		settle h &&
		w3_left_rest_once h
	'
done

test_done
