#!/bin/sh
# Lanes (merge.lanes: docs/config.md, "Lanes"): a run whose files lie in one
# lane joins that lane's line, is tested only with its gates, and lands on
# its own: a car green on a tip another lane then moved keeps its test when
# its lane's paths are the same there, and lands without a retest, its
# train.json naming the tested commit and the lane's paths, which `sluice
# audit` checks. A run across two lanes waits for both lanes' cars ahead,
# then is tested with both lanes' gates; a run with a path in no lane is
# tested with every merge gate. kill -9 while a lane's car is under test
# after the other lane landed: each lands once, never untested.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool jq

# The lane gate (sh gate.sh NAME LOG): logs "<run> <HEAD> <tree> <NAME> merge|own <exit>"
# (merge: the train's test of a car; own: a run's gating). While LOG.hold-<run> exists
# the train's test of that run's car waits (at most 600 s, a guard against a hang),
# with LOG.waiting-<run> there to say so. Red when the tree has red.txt.
cat >"$TRASH/gate.sh" <<'EOS'
run=$(basename "$SLUICE_RUN_DIR") kind=own
[ "$run" != train ] || { run=$(basename "$(dirname "$SLUICE_RUN_DIR")") && kind=merge; }
if [ $kind = merge ] && [ -e "$2.hold-$run" ]; then
	: >"$2.waiting-$run"
	i=0
	while [ -e "$2.hold-$run" ] && [ $i -lt 6000 ]; do sleep 0.1; i=$((i + 1)); done
fi
rc=0
[ ! -e red.txt ] || rc=1
echo "$run $(git rev-parse HEAD) $(git rev-parse HEAD^{tree}) $1 $kind $rc" >>"$2"
exit $rc
EOS

# lanes_repo DIR JOBS WO...: lanes web (web/**, gate web-test) and api (api/**, gate
# api-test), a gate "unit" in no lane; each work order's builder is $BUILDERS/<WO>.sh
# (written by the caller). The work orders are built, and approved by a person in order
# (those of APPROVE only, when set).
lanes_repo() {
	_d=$1 _j=$2 && shift 2 &&
	sluice_repo "$_d" "gates:" \
		"  web-test: [sh, $TRASH/gate.sh, web-test, $TRASH/$_d.log]" \
		"  api-test: [sh, $TRASH/gate.sh, api-test, $TRASH/$_d.log]" \
		"  unit: [sh, $TRASH/gate.sh, unit, $TRASH/$_d.log]" \
		"merge:" "  lanes:" \
		"    - {name: web, paths: [\"web/**\"], gates: [web-test]}" \
		"    - {name: api, paths: [\"api/**\"], gates: [api-test]}" \
		"queue:" "  jobs: $_j" "reviewer:" "  mode: manual" &&
	git -C "$_d" rev-parse main >"$_d.base" &&
	for _w in "$@"; do
		wo "$_d" "$_w" || return 1
	done &&
	sluice -C "$_d" check >/dev/null &&
	_i=0 && while [ $_i -lt $# ]; do
		sluice -C "$_d" tick >>"$_d.tick0" 2>&1 || return 1
		_i=$((_i + 1))
	done &&
	test "$(sluice -C "$_d" runs --state awaiting_review | grep -cE "^[0-9]{8}-")" = $# &&
	for _w in ${APPROVE:-"$@"}; do
		sluice -C "$_d" approve "$(run_of "$_d" "$_w")" >/dev/null || return 1
	done
}

# The train's tests of run R's car in LOG: "<commit> <gate>" lines.
merge_tests() { # LOG RUN
	awk -v r="$2" '$1 == r && $5 == "merge" { print $2, $4 }' "$1"
}

echo "mkdir -p web && echo w1 >web/w1.txt" >"$BUILDERS/W1.sh"
echo "mkdir -p web && echo w2 >web/w2.txt" >"$BUILDERS/W2.sh"
echo "mkdir -p api && echo a1 >api/a1.txt" >"$BUILDERS/A1.sh"
echo "mkdir -p api && echo a2 >api/a2.txt" >"$BUILDERS/A2.sh"
echo "mkdir -p web api && echo x >web/x.txt && echo x >api/x.txt" >"$BUILDERS/X.sh"
echo "mkdir -p docs && echo d >docs/d.txt" >"$BUILDERS/D.sh"

test_skip_unless_tool setsid pkill

# Both runs' merge tests held (W1's, A1's), A1's let go: A1 lands while W1's test
# still runs; then W1's: it lands on the tip A1 moved, its test standing.
test_expect_success 'two lanes land on their own: a car green before the other lane landed lands untested again' '
	lanes_repo l 2 W1 A1 &&
	w1=$(run_of l W1) && a1=$(run_of l A1) &&
	: >"$TRASH/l.log.hold-$w1" && : >"$TRASH/l.log.hold-$a1" &&
	{ setsid sh -c "exec \"$SLUICE\" -C l tick >tick.out 2>&1" & } &&
	wait_until "[ -e \"$TRASH/l.log.waiting-$w1\" ] && [ -e \"$TRASH/l.log.waiting-$a1\" ]" &&
	rm "$TRASH/l.log.hold-$a1" &&
	wait_until "test \"\$(merges_of l A1)\" = 1" &&
	rm "$TRASH/l.log.hold-$w1" &&
	wait &&
	settle l &&
	test "$(merges_of l W1)" = 1 &&
	for w in W1 A1; do
		merge_tests "$TRASH/l.log" "$(run_of l $w)" >tests.$w &&
		test "$(wc -l <tests.$w)" = 1 || { cat tests.$w; return 1; }
	done &&
	test_grep " web-test\$" tests.W1 && test_grep " api-test\$" tests.A1 &&
	j=l/.system/runs/$w1/train.json &&
	jq -e ".tested_commit != .commit and .lanes == [\"web\"] and .lane_paths == [\"web/**\"]
		and .green == true and .tested_base == null" $j >/dev/null &&
	test "$(jq -r .tested_commit $j)" = "$(cut -d" " -f1 tests.W1)" &&
	test "$(git -C l rev-parse main^1)" = "$(jq -r .commit l/.system/runs/$a1/train.json)" &&
	test "$(git -C l rev-parse main)" = "$(jq -r .commit $j)" &&
	train_records_hold l &&
	sluice -C l audit --json >audit.json &&
	test "$(jq -r .gated audit.json)" = 2 &&
	sluice -C l log $w1 >log1 &&
	test_grep "its test stands (lane web" log1 &&
	test_grep "gates: web-test; lane web" log1
'

test_expect_success 'the lines go on: two more runs of each lane land, each tested once with its lane gate' '
	echo "mkdir -p web && echo w3 >web/w3.txt" >"$BUILDERS/W3.sh" &&
	echo "mkdir -p api && echo a3 >api/a3.txt" >"$BUILDERS/A3.sh" &&
	for w in W2 A2 W3 A3; do wo l $w || return 1; done &&
	for i in 1 2 3 4; do sluice -C l tick >>l.tick1 2>&1 || return 1; done &&
	for w in W2 A2 W3 A3; do sluice -C l approve "$(run_of l $w)" >/dev/null || return 1; done &&
	settle l &&
	for w in W2 A2 W3 A3; do
		test "$(merges_of l $w)" = 1 &&
		merge_tests "$TRASH/l.log" "$(run_of l $w)" >tests.$w &&
		test "$(wc -l <tests.$w)" = 1 || { cat tests.$w; return 1; }
	done &&
	test_grep " web-test\$" tests.W2 && test_grep " web-test\$" tests.W3 &&
	test_grep " api-test\$" tests.A2 && test_grep " api-test\$" tests.A3 &&
	train_records_hold l &&
	sluice -C l audit >/dev/null
'

test_expect_success 'show, show --json and the desk name the lane and the commit that was tested' '
	w1=$(run_of l W1) &&
	sluice -C l show $w1 >show1 &&
	test_grep "before another lane landed (merge.lanes)" show1 &&
	test_grep "in lane web; tested on" show1 &&
	sluice -C l show --json $w1 >show1.json &&
	jq -e ".train.lanes == [\"web\"] and .train.tested_commit != .train.commit" show1.json >/dev/null &&
	schema_validate show.schema.json show1.json &&
	if command -v curl >/dev/null; then
		desk_up l && test_when_finished "kill $(cat "$TRASH/desk.pid")" &&
		desk_page /runs/$w1 >run1.html &&
		test_grep "lane web (tested before the tip moved" run1.html
	fi
'

test_expect_success 'the audit finds a lane landing whose tested tree differs in the lane' '
	w1=$(run_of l W1) && j=l/.system/runs/$w1/train.json && cp $j j.keep &&
	a1c=$(jq -r .tested_commit l/.system/runs/$(run_of l A1)/train.json) &&
	jq --arg t "$a1c" ".tested_commit = \$t" j.keep >$j &&
	test_expect_failure_code 1 sluice -C l audit >audit.bad 2>&1 &&
	test_grep "differ in the lane" audit.bad &&
	jq ".lane_paths = [\"api/**\"]" j.keep >$j &&
	test_expect_failure_code 1 sluice -C l audit >audit.bad 2>&1 &&
	test_grep "outside the lane" audit.bad &&
	cp j.keep $j &&
	sluice -C l audit >/dev/null
'

# W1's and A1's tests held (a tick of two workers); X, across both lanes, then
# approved and taken by a second tick: it waits, saying so, and is tested
# only once both landed. D (docs/: no lane) afterwards runs every gate.
test_expect_success 'a run across both lanes waits for both lanes, then runs both gates; a path in no lane runs every gate' '
	APPROVE="W1 A1" lanes_repo x 3 W1 A1 X D &&
	w1=$(run_of x W1) && a1=$(run_of x A1) && xr=$(run_of x X) && dr=$(run_of x D) &&
	: >"$TRASH/x.log.hold-$w1" && : >"$TRASH/x.log.hold-$a1" &&
	{ sluice -C x tick >tick1.out 2>&1 & } &&
	wait_until "[ -e \"$TRASH/x.log.waiting-$w1\" ] && [ -e \"$TRASH/x.log.waiting-$a1\" ]" &&
	sluice -C x approve $xr >/dev/null &&
	{ sluice -C x tick >tick2.out 2>&1 & } &&
	wait_until "sluice -C x status --json $xr | jq -r .reason | grep -q \"waits for the cars ahead in web, api (merge.lanes\"" &&
	test -z "$(merge_tests "$TRASH/x.log" $xr)" &&
	rm "$TRASH/x.log.hold-$w1" "$TRASH/x.log.hold-$a1" &&
	wait &&
	sluice -C x approve $dr >/dev/null &&
	settle x &&
	for w in W1 A1 X D; do
		test "$(merges_of x $w)" = 1 || return 1
	done &&
	merge_tests "$TRASH/x.log" $xr | cut -d" " -f2 | sort >x.gates &&
	printf "%s\n" api-test web-test >x.want && test_cmp x.want x.gates &&
	merge_tests "$TRASH/x.log" $dr | cut -d" " -f2 | sort >d.gates &&
	printf "%s\n" api-test unit web-test >d.want && test_cmp d.want d.gates &&
	jq -e ".lanes == [\"web\", \"api\"]" x/.system/runs/$xr/train.json >/dev/null &&
	jq -e ".lanes == null and .tested_commit == .commit" x/.system/runs/$dr/train.json >/dev/null &&
	sluice -C x show --json $dr >d.json && jq -e ".train.lanes == null" d.json >/dev/null &&
	train_records_hold x &&
	sluice -C x audit >/dev/null
'

# W1's and A1's tests held in one tick (its own session), A1's let go: it
# lands. A2, then approved, is taken by a second tick, which plans the train:
# W1's car, still under test, is built on the new tip with its test standing
# (lane_commit). The first tick is killed there.
test_expect_success 'killed -9 while a lane car is under test after the other lane landed: each lands once, tested' '
	APPROVE="W1 A1" lanes_repo k 2 W1 A1 A2 &&
	w1=$(run_of k W1) && a1=$(run_of k A1) &&
	: >"$TRASH/k.log.hold-$w1" && : >"$TRASH/k.log.hold-$a1" &&
	{ setsid sh -c "echo \$\$ >tick.sid; exec \"$SLUICE\" -C k tick >tick.out 2>&1" & } &&
	wait_until "[ -e \"$TRASH/k.log.waiting-$w1\" ] && [ -e \"$TRASH/k.log.waiting-$a1\" ]" &&
	rm "$TRASH/k.log.hold-$a1" &&
	wait_until "test \"\$(merges_of k A1)\" = 1" &&
	sluice -C k approve "$(run_of k A2)" >/dev/null &&
	sluice -C k tick >tick2.out 2>&1 &&
	test -n "$(sqlite3 k/.system/sluice.db "SELECT lane_commit FROM train_cars WHERE run_id = '"'"'$w1'"'"'")" &&
	pkill -KILL -s "$(cat tick.sid)" &&
	wait &&
	rm "$TRASH/k.log.hold-$w1" &&
	settle k &&
	for w in W1 A1 A2; do
		test "$(merges_of k $w)" = 1 || return 1
	done &&
	j=k/.system/runs/$w1/train.json &&
	grep -q " $(jq -r .tested_commit $j) [0-9a-f]* web-test merge 0\$" "$TRASH/k.log" &&
	train_records_hold k &&
	sluice -C k audit >/dev/null
'

# W1 tested green under lanes where web runs web-test, on a frozen target
# (nothing lands); the web lane is then given the gate unit instead: at the
# next tick W1's car, tested under the old lanes, is tested again with unit
# before it lands.
test_expect_success 'merge.lanes changed while a car waits green: it is tested again under the new lanes' '
	lanes_repo m 1 W1 &&
	w1=$(run_of m W1) &&
	sluice -C m freeze -m "hold it" >/dev/null &&
	sluice -C m tick >tick1.out 2>&1 &&
	test "$(merges_of m W1)" = 0 &&
	test "$(sqlite3 m/.system/sluice.db "SELECT status FROM train_cars WHERE run_id = '"'"'$w1'"'"'")" = green &&
	sed -i "s|gates: \\[web-test\\]}|gates: [unit]}|" m/.system/config.yaml &&
	sluice -C m check >/dev/null &&
	sluice -C m unfreeze >/dev/null &&
	settle m &&
	test "$(merges_of m W1)" = 1 &&
	merge_tests "$TRASH/m.log" $w1 | cut -d" " -f2 >m.gates &&
	printf "%s\\n" web-test unit >m.want && test_cmp m.want m.gates &&
	jq -e "[.gates[].name] == [\"unit\"] and .tested_commit == .commit" \
		m/.system/runs/$w1/train.json >/dev/null &&
	sluice -C m audit >/dev/null
'

test_expect_success 'merge.lanes is checked: each mistake names the file, the line and what to write' '
	sluice_repo c "gates:" "  t: [true]" "merge:" "  lanes:" \
		"    - {name: web, paths: [\"web/**\"], gates: [nope]}" &&
	test_expect_failure_code 1 sluice -C c check >c.out 2>&1 &&
	test_grep "config.yaml:[0-9]*:[0-9]*: lane .web. names gate .nope., which is no configured gate" c.out &&
	sed -i "s|gates: \[nope\]}|gates: [t]}|" c/.system/config.yaml &&
	sluice -C c check >/dev/null &&
	printf "%s\n" "    - {name: web, paths: [\"../x/**\"], gates: [t]}" >>c/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C c check >c.out 2>&1 &&
	test_grep "not a path inside the repository" c.out &&
	test_grep "lane .web. is named twice" c.out &&
	sed -i "\$d" c/.system/config.yaml &&
	printf "%s\n" "    - {name: api, gates: [t]}" >>c/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C c check >c.out 2>&1 &&
	test_grep "needs name, paths and gates" c.out &&
	sed -i "\$d" c/.system/config.yaml &&
	printf "%s\n" "  batch: 2" >>c/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C c check >c.out 2>&1 &&
	test_grep "merge.lanes. and .merge.batch. above 1 do not go together" c.out &&
	sluice_repo c2 "merge:" "  lanes: web" &&
	test_expect_failure_code 1 sluice -C c2 check >c.out 2>&1 &&
	test_grep "config.yaml:[0-9]*:[0-9]*: .merge.lanes. must be a list of lanes" c.out
'

test_done
