#!/bin/sh
# kill -9 at random moments: ticks are started and killed (with everything
# they started) after a random delay, over and over, until every work order
# merged. Then: exactly one merge commit per work order, every run merged,
# and `sluice audit` holds. The delays come from a seeded sequence so that a
# failure can be replayed (SLUICE_KILL_SEED).
. "$(dirname "$0")/lib.sh"

# A stress test, run on demand (SLUICE_TEST_STRESS=1 ./scripts/test.sh, or
# SLUICE_TEST_STRESS=1 ctest -R t0245): it found the crash-recovery bugs fixed
# on 2026-11-22 (the last: a killed worker's unreaped zombie counted as
# alive); 62 seeds in a row passed after that. It stays out of the default run
# because its kill moments depend on timing; the deterministic kill tests of
# every stage are t0240.
[ "${SLUICE_TEST_STRESS:-0}" = 1 ] || test_skip_all "stress test; set SLUICE_TEST_STRESS=1 to run it"

SEED=${SLUICE_KILL_SEED:-$$}
echo "# seed $SEED"

test_expect_success 'setup: 8 work orders, two pairs touching the same lines' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	seq 1 20 >repo/lines.txt && git -C repo add lines.txt && git -C repo commit -q -m lines &&
	for i in 1 2 3 4 5 6 7 8; do
		case $i in
		1 | 2) edit="sed -i 5s/.*/five-by-$i/ lines.txt" ;;
		3 | 4) edit="sed -i 15s/.*/fifteen-by-$i/ lines.txt" ;;
		*) edit="echo $i >file$i.txt" ;;
		esac
		printf "%s\n" "$edit" "echo built $i >\"\$SLUICE_RUN_DIR/summary.md\"" >"$BUILDERS/R$i.sh" &&
		wo repo R$i || return 1
	done
'

test_expect_success 'ticks killed at random moments end with every work order merged once' '
	n=0 && rnd=$SEED &&
	while [ $n -lt 60 ]; do
		n=$((n + 1))
		rnd=$(( (rnd * 1103515245 + 12345) % 2147483648 ))
		delay_ms=$(( rnd % 400 ))
		rm -f tick.sid
		setsid sh -c "echo \$\$ >tick.sid; exec \"$SLUICE\" -C repo tick --jobs 2 >>ticks.out 2>&1" &
		i=0
		while [ ! -s tick.sid ] && [ $i -lt 100 ]; do sleep 0.01; i=$((i + 1)); done
		sleep "$(printf "0.%03d" $delay_ms)"
		pkill -KILL -s "$(cat tick.sid)" 2>/dev/null
		wait
		if [ "$(sluice -C repo runs --state merged | wc -l)" = 8 ]; then break; fi
	done &&
	echo "# $n killed ticks" &&
	# then ticks as cron would run them (locks of killed processes age out
	# after 10 s): at most 20 more, a second apart
	n=0 &&
	while [ $n -lt 20 ]; do
		sluice -C repo tick >>ticks.out 2>&1 || return 1
		[ "$(sluice -C repo runs --state merged | wc -l)" = 8 ] && break
		n=$((n + 1))
		sleep 1
	done &&
	sluice -C repo tick >>ticks.out 2>&1 &&
	sluice -C repo runs >runs &&
	test "$(grep -c " merged " runs)" = 8 &&
	test "$(wc -l <runs)" = 8 &&
	for i in 1 2 3 4 5 6 7 8; do
		test "$(git -C repo log --merges --grep "^Work-Order: R$i\$" --oneline main | wc -l)" = 1 ||
			{ echo "R$i merged $(git -C repo log --merges --grep "^Work-Order: R$i\$" --oneline main | wc -l) times"; return 1; }
	done &&
	sluice -C repo audit &&
	test -z "$(git -C repo branch --list "run/*")" &&
	test -z "$(ls -d repo/.system/runs/*/worktree 2>/dev/null)"
'

test_done
