#!/bin/sh
# The merge train (DESIGN.md 7b): two runs that each pass their gate but
# break the target together (A renames greet() to hello(), B adds a call of
# greet()). The merge is textually clean; the train tests it before the
# target moves, the second car fails, goes through the resolution path as a
# semantic conflict, is fixed by its builder, reviewed again and lands.
. "$(dirname "$0")/lib.sh"

GATE='for f in calls/*.sh; do (set -e; . ./lib.sh; . "./$f") >/dev/null || { echo "gate: $f fails"; exit 1; }; done'

setup_repo() { # DIR [config lines]
	_d=$1
	shift
	sluice_repo "$_d" "queue:" "  jobs: 2" "gates:" "  test: [sh, -c, '$GATE']" "$@" \
		"$(approve_reviewer_config)" || return 1
	mkdir -p "$_d/calls" &&
	echo 'greet() { echo "hello, $1"; }' >"$_d/lib.sh" &&
	echo 'greet world' >"$_d/calls/main.sh" &&
	git -C "$_d" add lib.sh calls && git -C "$_d" commit -q -m "greet" || return 1
	meeting_builders A B 'case %s in A) sed -i s/greet/hello/g lib.sh calls/main.sh ;; B) echo "greet again" >calls/other.sh ;; esac' &&
	cat >"$BUILDERS/resolve.sh" <<-'EOS'
	if grep -q "semantic conflict" "$SLUICE_PROMPT_FILE"; then
		sed -i s/greet/hello/g calls/*.sh
		echo "called hello(), the new name" >"$SLUICE_RUN_DIR/summary.md"
	fi
	EOS
	wo "$_d" A && wo "$_d" B
}

# Every first-parent commit of main since $2 passes the gate.
all_green() { # DIR BASE
	git -C "$1" rev-list --first-parent "$2..main" >commits &&
	test -s commits &&
	while read -r c; do
		rm -rf chk && mkdir chk && git -C "$1" archive "$c" | tar -x -C chk &&
		(cd chk && sh -c "$GATE") || { echo "red: $c"; return 1; }
	done <commits
}

test_expect_success 'both land, the target is green at every commit, B resolved the semantic conflict' '
	setup_repo r &&
	base=$(git -C r rev-parse main) &&
	settle r &&
	a=$(run_of r A) && b=$(run_of r B) &&
	test "$(state_of r $a)" = merged && test "$(state_of r $b)" = merged &&
	all_green r $base &&
	test "$(git -C r log --first-parent --format=%s $base..main | grep -c "^Merge ")" = 2 &&
	sluice -C r log >log.out &&
	grep "semantic conflict: the merge gates failed on top of" log.out >sem.out &&
	test_grep "(gate test (exit 1; red on both runs of the same tree [0-9a-f]\{12\})); the builder resolves it" sem.out &&
	grep -q "\"kind\": \"semantic\"" r/.system/runs/*/conflict.json &&
	git -C r log --first-parent --format=%B $base..main | grep -q "^Resolved-with: " &&
	sluice -C r audit
'

test_expect_success 'the landed merge is the tested car: train.json records its tree, base and green gates' '
	for run in $(run_of r A) $(run_of r B); do
		j=r/.system/runs/$run/train.json &&
		m=$(jq -r .merge_commit r/.system/runs/$run/merge.json) &&
		test "$(jq -r .commit $j)" = "$m" &&
		test "$(jq -r .tree $j)" = "$(git -C r rev-parse $m^{tree})" &&
		test "$(jq -r .base $j)" = "$(git -C r rev-parse $m^1)" &&
		test "$(jq -r .green $j)" = true &&
		test "$(jq -r ".gates[0].name" $j)" = test &&
		test "$(jq -r ".gates[0].passed" $j)" = true || return 1
	done
'

test_expect_success 'with merge.resolver none the failing car waits in merge_conflict, the target stays green' '
	rm -rf r2 && setup_repo r2 "merge:" "  resolver: none" &&
	base=$(git -C r2 rev-parse main) &&
	settle r2 &&
	sluice -C r2 runs >runs.out &&
	test "$(grep -c " merged " runs.out)" = 1 &&
	grep " merge_conflict " runs.out &&
	all_green r2 $base &&
	sluice -C r2 status >status.out &&
	grep -q "semantic conflict" status.out
'

# The gate of the speculation test: the first car of the train (its HEAD a merge
# on a commit that is not one) waits until the second car is tested on top of
# it (a merge on a merge), however slow the machine: the two overlap.
cat >"$TRASH/overlap.sh" <<EOS
if git rev-parse -q --verify HEAD^2 >/dev/null 2>&1; then
	if git rev-parse -q --verify HEAD^1^2 >/dev/null 2>&1; then
		: >"$TRASH/second-car-tested"
	else
		$(wait_until_sh "[ -f $TRASH/second-car-tested ]")
	fi
fi
EOS

test_expect_success 'speculation: the second car is tested on top of the first while it tests, fails there, and is resolved' '
	rm -rf r3 && GATE="sh $TRASH/overlap.sh; $GATE" && setup_repo r3 &&
	base=$(git -C r3 rev-parse main) &&
	settle r3 &&
	sluice -C r3 log >log3.out &&
	second=$(grep -E "car 2 of 2, testing on top of (A|B) " log3.out | awk "{ print \$3 }") &&
	test -n "$second" &&
	grep "  run $second  " log3.out | sed -n "/car 2 of 2, testing on top of/,\$p" |
		grep -v "in the train: car [0-9]* of [0-9]*, testing on top of" | head -n 1 >next.out &&
	# the first car still testing then (waits for it), done and landed (the
	# cars ahead), or its result in (a semantic conflict): any, by the timing
	test_grep "merge gates failed on top of .*, which is not known good yet; waits for it\|merge gates failed on top of .*; waits for the cars ahead\|semantic conflict: the merge gates failed on top of" next.out &&
	test "$(sluice -C r3 runs | grep -c " merged ")" = 2 &&
	all_green r3 $base &&
	sluice -C r3 audit
'

test_done
