#!/bin/sh
# A train of five approved runs (merge.train_depth 4: the fifth waits for a
# place) whose third makes the merge gate fail on top of the two ahead of it:
# each run adds a plugin, the third also lowers the limit of plugins to one
# (alone it passes: it is the only plugin). The others land in order, the
# third is resolved by its builder and lands after them, or with
# merge.resolver: none waits in merge_conflict with a reason that names the
# gate and the car ahead; `sluice show` shows the semantic conflict. Every
# first-parent commit of main passes the gate; one merge per work order.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool jq

for i in 1 2 3 4 5; do
	echo "echo plugin $i >plugins/p$i.txt" >"$BUILDERS/W$i.sh"
done
echo "echo 1 >max.txt" >>"$BUILDERS/W3.sh"

# The resolver raises the limit again only if the prompt carries the gate's
# complaint.
cat >"$BUILDERS/resolve.sh" <<EOS
cp "\$SLUICE_PROMPT_FILE" "$TRASH/prompt-\$SLUICE_WORK_ORDER_ID.md"
grep -q "too many plugins" "\$SLUICE_PROMPT_FILE" || exit 1
echo 10 >max.txt
echo "raised the limit of plugins back to 10" >"\$SLUICE_RUN_DIR/summary.md"
EOS

G="$TRASH/gate"
mkdir -p "$G"
cat >"$TRASH/check.sh" <<'EOS'
n=$(ls plugins | wc -l)
max=$(cat max.txt)
[ "$n" -le "$max" ] || { echo "too many plugins: $n > $max (max.txt)"; exit 1; }
echo "$n plugins of at most $max"
EOS

# five_repo DIR [config lines...]: five runs built, then approved by a
# person one at a time, each followed by a tick of its own (overlapping
# ticks) that carries it into the train while the cars ahead wait in their
# gates (hold-gate.sh): the train is W1..W5 in this order whatever order
# the workers reach it. Then the cars go and ticks run until the queue
# settles, a person approving the resolution.
five_repo() {
	_d=$1 && shift &&
	sluice_repo "$_d" "gates:" "  test: [sh, $FIXTURES/train/hold-gate.sh, $G]" "merge:" "  gates: [test]" \
		"  train_depth: 4" "$@" "queue:" "  jobs: 5" \
		"reviewer:" "  mode: manual" &&
	mkdir "$_d/plugins" && : >"$_d/plugins/.keep" && echo 10 >"$_d/max.txt" && cp "$TRASH/check.sh" "$_d/" &&
	git -C "$_d" add plugins max.txt check.sh && git -C "$_d" commit -q -m "plugins, at most 10" &&
	git -C "$_d" rev-parse main >"$_d.base" &&
	for i in 1 2 3 4 5; do wo "$_d" W$i || return 1; done &&
	sluice -C "$_d" check >/dev/null &&
	sluice -C "$_d" tick >tick.out 2>&1 &&
	: >"$G/hold-all" && : >"$G/gates.log" && rm -f "$TRASH/ticks" &&
	train_join_in_order "$_d" "$G" W1 W2 W3 W4 W5 &&
	sluice -C "$_d" runs >runs.held &&
	rm "$G/hold-all" &&
	for p in $(cat "$TRASH/ticks"); do { wait $p || true; } || return 1; done &&
	settle "$_d" &&
	_n=0 &&
	while _a=$(sluice -C "$_d" runs --state awaiting_review | grep -E "^[0-9]{8}-" | cut -d" " -f1 | head -n 1) && [ -n "$_a" ]; do
		[ $_n -lt 5 ] && sluice -C "$_d" approve "$_a" >/dev/null && settle "$_d" &&
			_n=$((_n + 1)) || return 1
	done
}

# The order in which the work orders landed, oldest first, without W3.
landed_order() { # DIR
	git -C "$1" log --reverse --first-parent --merges --format=%B main | sed -n "s/^Work-Order: //p"
}

test_expect_success 'the third car fails on top of the others: they land in order, it resolves and lands' '
	rm -rf r "$G"/* && five_repo r &&
	gate_first_parents r "$(cat r.base)" "sh check.sh" &&
	landed_order r >order &&
	grep -v W3 order >order.others &&
	head -n 2 order.others >order.first &&
	printf "%s\n" W1 W2 >order.want &&
	test_cmp order.want order.first &&
	test "$(grep -n W3 order | cut -d: -f1)" -gt 2 &&
	landed_tested r "$G" &&
	for i in 1 2 3 4 5; do
		test "$(merges_of r W$i)" = 1 &&
		test "$(state_of r "$(run_of r W$i)")" = merged || return 1
	done &&
	train_records_hold r &&
	test "$(ls "$TRASH"/prompt-*)" = "$TRASH/prompt-W3.md" &&
	test "$(git -C r show main:max.txt)" = 10 &&
	r3=$(run_of r W3) &&
	c=r/.system/runs/$r3/conflict.json &&
	jq -e ".kind == \"semantic\" and ([.failedGates[].name] == [\"test\"])" $c >/dev/null &&
	for w in W1 W2; do
		jq -e --arg r "$(run_of r $w)" "[.rivalRuns | .. | strings] | index(\$r) != null" $c >/dev/null || return 1
	done
'

test_expect_success 'with merge.resolver: none the third waits in merge_conflict, named by gate and rivals' '
	rm -rf n "$TRASH"/prompt-* "$G"/* && five_repo n "  resolver: none" &&
	gate_first_parents n "$(cat n.base)" "sh check.sh" &&
	landed_order n >order &&
	head -n 2 order >order.first &&
	printf "%s\n" W1 W2 >order.want &&
	test_cmp order.want order.first &&
	test "$(wc -l <order)" = 4 &&
	landed_tested n "$G" &&
	for i in 1 2 4 5; do
		test "$(merges_of n W$i)" = 1 || return 1
	done &&
	test "$(merges_of n W3)" = 0 &&
	r3=$(run_of n W3) &&
	test "$(state_of n $r3)" = merge_conflict &&
	! ls "$TRASH"/prompt-* 2>/dev/null &&
	train_records_hold n &&
	sluice -C n runs --state merge_conflict >runs &&
	test_grep "$r3" runs &&
	sluice -C n status --json $r3 >st &&
	jq -r ".reason // .runs[0].reason // empty" st >reason &&
	test_grep "gate test\|gates: test\|(test)" reason &&
	test_grep "W2" reason &&
	c=n/.system/runs/$r3/conflict.json &&
	jq -e ".kind == \"semantic\"" $c >/dev/null &&
	jq -e "[.failedGates[].name] == [\"test\"]" $c >/dev/null &&
	jq -e ".failedGates[0].output | test(\"too many plugins\")" $c >/dev/null
'

# A car red on top of a car not known good (W4 on W3, before W3's own
# result) stays in its place and is built again on the last good car once
# W3 is red: W5 does not overtake it (DESIGN.md 7b).
test_expect_success 'the cars behind the red one land in their order: W4 before W5' '
	for d in r n; do
		landed_order $d | grep -v W3 >order.others &&
		printf "%s\n" W1 W2 W4 W5 >order.want &&
		test_cmp order.want order.others || return 1
	done
'

# As a textual conflict shows the conflicted files, a semantic one shows
# the failed gate and the end of its output, with the rivals.
test_expect_success 'sluice show of the waiting run shows the semantic conflict: gate, output, rivals' '
	r3=$(run_of n W3) &&
	sluice -C n show $r3 >show &&
	sed -n "/^conflict/,/^worktree/p" show >show.conflict &&
	grep -qi "semantic" show.conflict &&
	test_grep "test" show.conflict &&
	test_grep "too many plugins" show.conflict &&
	test_grep "$(run_of n W1)" show.conflict &&
	test_grep "$(run_of n W2)" show.conflict
'

test_done
