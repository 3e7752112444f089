#!/bin/sh
# Urgent first (docs/config.md, "Freezes" and "The merge train"): a work
# order with priority: urgent is scheduled first and its car goes ahead of
# every car not landing yet, tested before the car it passed is tested
# again; it lands through a freeze only when the freeze allows urgent work
# (sluice freeze --allow-urgent, allow_urgent: true on a window).
. "$(dirname "$0")/lib.sh"

echo 'echo w >w.txt' >"$BUILDERS/W1.sh"
echo 'echo u >u.txt' >"$BUILDERS/U.sh"
echo 'echo v >v.txt' >"$BUILDERS/V.sh"

test_expect_success 'urgent is listed first in the queue as "urgent", and in its schema as priority 0' '
	sluice_repo q &&
	wo q W1 && wo q U "priority: urgent" &&
	sluice -C q check >out 2>&1 &&
	sluice -C q queue --json >qj &&
	test "$(jq -r ".work_orders[0].id" qj)" = U &&
	test "$(jq -r ".work_orders[0].priority" qj)" = 0 &&
	sluice -C q queue >qt &&
	test_grep "^ready  *urgent  U " qt &&
	test_grep "^ready  *3  W1 " qt &&
	wo q BAD "priority: soon" &&
	sluice -C q queue --explain >out 2>&1 &&
	test_grep "priority .soon. is not an integer; .*or urgent" out
'

test_expect_success 'frozen: an urgent car goes ahead of a green car, is tested first, neither lands' '
	sluice_repo r "gates:" "  test: [sh, -c, \"echo \$SLUICE_RUN_DIR >>$TRASH/gate-runs\"]" \
		"merge:" "  train_depth: 2" "$(approve_reviewer_config)" &&
	sluice -C r freeze -m release >/dev/null &&
	wo r W1 && sluice -C r tick >out 2>&1 &&
	w=$(run_of r W1) && test "$(state_of r $w)" = approved &&
	sluice -C r status --json $w | jq -r .reason | grep -q "car 1 of 1, .*wait: frozen (release)" &&
	tip=$(git -C r rev-parse main) &&
	wo r U "priority: urgent" && sluice -C r tick >out 2>&1 &&
	u=$(run_of r U) && test "$(state_of r $u)" = approved &&
	test "$(git -C r rev-parse main)" = "$tip" &&
	sluice -C r status --json $u | jq -r .reason | grep -q "car 1 of 2, .*wait: frozen (release)" &&
	sluice -C r status --json $w | jq -r .reason | grep -q "rebuilt on top of U" &&
	grep "/train\$" gate-runs | sed "s|.*/runs/\([^/]*\)/train|\1|" >trains &&
	printf "%s\n" $w $u >want && test_cmp want trains &&
	test "$(sqlite3 r/.system/sluice.db "SELECT status FROM train_cars WHERE run_id = '"'"'$u'"'"'")" = green &&
	sluice -C r tick >out 2>&1 &&
	grep "/train\$" gate-runs | sed "s|.*/runs/\([^/]*\)/train|\1|" >trains &&
	printf "%s\n" $w $u $w >want && test_cmp want trains &&
	test "$(git -C r rev-parse main)" = "$tip" &&
	sluice -C r status --json $w | jq -r .reason | grep -q "car 2 of 2, green .*; waits for U to land"
'

test_expect_success 'a freeze that allows urgent work: the urgent car lands, the other waits' '
	u=$(run_of r U) && w=$(run_of r W1) &&
	sluice -C r freeze --allow-urgent -m release >/dev/null &&
	sluice -C r tick >out 2>&1 &&
	test "$(state_of r $u)" = merged &&
	test "$(state_of r $w)" = approved &&
	sluice -C r status --json $w | jq -r .reason | grep -q "wait: frozen (release)" &&
	sluice -C r show $u >show && test_grep "urgent, through the freeze: release" show &&
	test "$(git -C r log --first-parent --merges --format=%s main | grep -c "^Merge U")" = 1 &&
	test "$(git -C r log --first-parent --merges --format=%s main | grep -c "^Merge W1")" = 0
'

test_expect_success 'unfrozen, the other lands after it, tested on it; audit holds' '
	w=$(run_of r W1) &&
	sluice -C r unfreeze >/dev/null && sluice -C r tick >out 2>&1 &&
	test "$(state_of r $w)" = merged &&
	git -C r log --first-parent --merges --format=%s main >landed &&
	test "$(sed -n 1p landed)" = "Merge W1: Work order W1" &&
	test "$(sed -n 2p landed)" = "Merge U: Work order U" &&
	test "$(jq -r .green r/.system/runs/$w/train.json)" = true &&
	sluice -C r audit
'

test_expect_success 'a window with allow_urgent: true lets urgent work land, not the rest' '
	d0=$(date -u +%a | tr A-Z a-z) && d1=$(date -u -d "+1 days" +%a | tr A-Z a-z) &&
	sluice_repo s "gates:" "  test: [\"true\"]" "$(approve_reviewer_config)" \
		"merge:" "  freeze:" \
		"    - {days: [$d0, $d1], from: \"00:00\", to: \"24:00\", reason: weekend, allow_urgent: true}" &&
	wo s V && wo s U "priority: urgent" &&
	sluice -C s tick >out 2>&1 &&
	test "$(state_of s $(run_of s U))" = merged &&
	test "$(state_of s $(run_of s V))" = approved &&
	sluice -C s status --json $(run_of s V) | jq -r .reason | grep -q "wait: frozen (weekend)" &&
	sluice -C s freeze -m "no urgent either" >/dev/null &&
	echo "echo u2 >u2.txt" >"$BUILDERS/U2.sh" && wo s U2 "priority: urgent" &&
	sluice -C s tick >out 2>&1 &&
	test "$(state_of s $(run_of s U2))" = approved &&
	sluice -C s status --json $(run_of s U2) | jq -r .reason | grep -q "wait: frozen (no urgent either)"
'

test_done
