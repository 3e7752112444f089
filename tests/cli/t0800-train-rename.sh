#!/bin/sh
# The scenario of issue 12: run A renames greet() to hello() everywhere, run
# B (same base) adds a new file that calls greet(). Each passes `make test`
# alone, both are approved, their merge is textually clean and does not
# compile. With the merge train (merge.gates: [test]) neither order lands a
# broken main: the second run's car fails its gate, the run goes through
# resolution (kind semantic) where its builder reads the failing gate's
# output and renames the call, is reviewed again and lands. Every
# first-parent commit of main passes the gate; one merge per work order.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool make cc jq

G="$TRASH/gate"
mkdir -p "$G"

# A and B start together (so both are built on the same base), then A
# renames, B adds farewell.c with a call of the old name.
printf '%s\n' "sed -i 's/greet(/hello(/g' *.c *.h" 'echo "renamed greet() to hello()" >"$SLUICE_RUN_DIR/summary.md"' \
	>"$BUILDERS/edit-A.sh"
cat >"$BUILDERS/edit-B.sh" <<'EOS'
printf '%s\n' '#include "greet.h"' '' 'int farewell(void)' '{' '	return greet()[0] == 0;' '}' >farewell.c
echo "added farewell(), which greets" >"$SLUICE_RUN_DIR/summary.md"
EOS
meeting_builders A B "sh \"$BUILDERS/edit-%s.sh\""

# The resolver reads what it is given: it keeps the prompt and conflict.json,
# and renames the calls only if the prompt carries the failing gate's output
# (the compiler's complaint about greet).
cat >"$BUILDERS/resolve.sh" <<EOS
cp "\$SLUICE_PROMPT_FILE" "$TRASH/prompt-\$SLUICE_WORK_ORDER_ID.md"
cp "\$SLUICE_RUN_DIR/conflict.json" "$TRASH/conflict-\$SLUICE_WORK_ORDER_ID.json" 2>/dev/null
grep -q "greet" "\$SLUICE_PROMPT_FILE" || { echo "the prompt does not show the failing gate" >&2; exit 1; }
grep -l 'greet(' *.c *.h | while read -r f; do sed -i 's/greet(/hello(/g' "\$f"; done
echo "renamed the remaining greet() calls to hello()" >"\$SLUICE_RUN_DIR/summary.md"
EOS

# A reviewer that keeps every request and approves.
mkdir -p "$TRASH/reviews"
cat >"$BUILDERS/review.sh" <<EOS
n=\$(ls "$TRASH/reviews" | wc -l)
cat >"$TRASH/reviews/\$n.json"
echo '{"verdict": "approve", "reviewer": "approve-bot"}'
EOS

# greet_repo DIR FIRST [config lines...]: the greet project on main, the
# gate `make test` also as the train's gate, two jobs; work order FIRST (A,
# B or none) has priority 1, the other one 2.
greet_repo() {
	_d=$1 _pa=2 _pb=2 && shift &&
	case $1 in A) _pa=1 ;; B) _pb=1 ;; esac &&
	shift &&
	sluice_repo "$_d" "gates:" "  test: [sh, $FIXTURES/train/hold-gate.sh, $G]" "merge:" "  gates: [test]" \
		"queue:" "  jobs: 2" "$@" &&
	cp "$FIXTURES"/train/greet/* "$_d"/ &&
	echo "make -s test" >"$_d/check.sh" &&
	git -C "$_d" add Makefile greet.h greet.c main.c check.sh && git -C "$_d" commit -q -m "the greet project" &&
	(cd "$_d" && make -s test >/dev/null) &&
	sluice -C "$_d" check >/dev/null &&
	wo "$_d" A "priority: $_pa" && wo "$_d" B "priority: $_pb"
}

# The promises after both runs: both merged once, every first-parent commit
# since BASE green, train.json of each landing names it, and SECOND went
# through a semantic resolution against FIRST, was reviewed again and landed
# after it.
check_landed() { # DIR BASE FIRST SECOND
	_d=$1 _base=$2 _first=$3 _second=$4 &&
	r1=$(run_of "$_d" "$_first") && r2=$(run_of "$_d" "$_second") &&
	test "$(state_of "$_d" "$r1")" = merged &&
	test "$(state_of "$_d" "$r2")" = merged &&
	test "$(merges_of "$_d" A)" = 1 && test "$(merges_of "$_d" B)" = 1 &&
	gate_first_parents "$_d" "$_base" "make -s test" &&
	(cd "$_d" && make -s test >/dev/null) &&
	train_records_hold "$_d" &&
	git -C "$_d" log --first-parent --merges --format=%B main | sed -n "s/^Work-Order: //p" >order &&
	printf '%s\n' "$_second" "$_first" >order.want &&
	test_cmp order.want order &&
	test ! -f "$TRASH/prompt-$_first.md" &&
	test_grep "greet" "$TRASH/prompt-$_second.md" &&
	c="$_d/.system/runs/$r2/conflict.json" &&
	jq -e ".kind == \"semantic\"" "$c" >/dev/null &&
	jq -e "[.failedGates[].name] == [\"test\"]" "$c" >/dev/null &&
	jq -e ".failedGates[0].output | test(\"greet\")" "$c" >/dev/null &&
	jq -e --arg r "$r1" "[.rivalRuns | .. | strings] | index(\$r) != null" "$c" >/dev/null &&
	sluice -C "$_d" log "$r2" >log2 &&
	test_grep "resolving" log2 &&
	grep -l "$r2" "$TRASH"/reviews/*.json >reviews2 &&
	test "$(wc -l <reviews2)" -ge 1 &&
	test_grep "resolution" "$(tail -n 1 reviews2)" &&
	test "$(git -C "$_d" show main:farewell.c | grep -c "hello()")" = 1
}

for order in "A B" "B A"; do
	set -- $order
	test_expect_success "$1 first, then $2: the train lands both, main never broken" "
		rm -rf r order* log2 && rm -f \"\$TRASH\"/prompt-* \"\$TRASH\"/conflict-* \"\$TRASH\"/reviews/* &&
		rm -f \"\$TRASH\"/started-* \"\$G\"/* &&
		greet_repo r $1 'reviewer:' '  mode: manual' '  command: [sh, $BUILDERS/review.sh]' &&
		base=\$(git -C r rev-parse main) &&
		sluice -C r tick >tick.out 2>&1 &&
		test \"\$(state_of r \$(run_of r A))\" = awaiting_review &&
		test \"\$(state_of r \$(run_of r B))\" = awaiting_review &&
		sed -i 's/^  mode: manual\$/  mode: command/' r/.system/config.yaml &&
		sluice -C r check >/dev/null &&
		: >\"\$G/hold-all\" && rm -f \"\$TRASH/ticks\" &&
		train_join_in_order r \"\$G\" $1 $2 &&
		rm \"\$G/hold-all\" &&
		for p in \$(cat \"\$TRASH/ticks\"); do { wait \$p || true; } || return 1; done &&
		settle r &&
		check_landed r \$base $1 $2
	"
done

# Both approved by the loopback reviewer in the same tick, in whatever order
# they come: the one that lands second is the one resolved.
printf '{}\n' >"$TRASH/script.json"
test_expect_success 'both approved by the HTTP reviewer in one tick: the same promises' '
	rm -rf r order* log2 && rm -f "$TRASH"/prompt-* "$TRASH"/conflict-* "$TRASH"/reviews/* "$TRASH"/started-* &&
	start_reviewer "$TRASH/script.json" &&
	greet_repo r none "reviewer:" "  mode: http" "  url: $REVIEWER_URL" &&
	base=$(git -C r rev-parse main) &&
	settle r &&
	git -C r log --first-parent --merges --format=%B main | sed -n "s/^Work-Order: //p" >landed &&
	test "$(wc -l <landed)" = 2 &&
	second=$(sed -n 1p landed) && first=$(sed -n 2p landed) &&
	for f in "$REVIEWER_DIR"/requests/*.body; do
		cp "$f" "$TRASH/reviews/$(basename "$f" .body).json" || return 1
	done &&
	check_landed r $base $first $second
'

test_done
