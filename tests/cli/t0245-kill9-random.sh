#!/bin/sh
# kill -9 at random moments: ticks are started and killed (with everything
# they started) after a random delay, over and over, until every work order
# merged. Then: exactly one merge commit per work order, every run merged,
# the user's uncommitted edit of the checked-out target byte for byte, and
# `sluice audit` holds. The delays come from a seeded sequence so that a
# failure can be replayed (SLUICE_KILL_SEED).
. "$(dirname "$0")/lib.sh"

# By default (scripts/test.sh, ctest) a bounded run: seed 1, at most 25
# killed ticks. The kill moments still depend on timing, but every moment
# must keep the same promises, so any failure is a bug: replay it with its
# seed. The stress mode (SLUICE_TEST_STRESS=1 ./scripts/test.sh, or
# SLUICE_TEST_STRESS=1 ctest -R t0245) takes a new seed each time and up to
# 60 kills (SLUICE_KILL_COUNT): it found the crash-recovery bugs fixed on
# 2026-11-22 (the last: a killed worker's unreaped zombie counted as alive).
# The kill tests at every named fault point are t0750-t0753, at every stage
# t0240.
test_skip_unless_tool setsid
if [ "${SLUICE_TEST_STRESS:-0}" = 1 ]; then
	SEED=${SLUICE_KILL_SEED:-$$}
	KILLS=${SLUICE_KILL_COUNT:-60}
else
	SEED=${SLUICE_KILL_SEED:-1}
	KILLS=${SLUICE_KILL_COUNT:-25}
fi
WOS="1 2 3 4 5 6 7 8 9 10 11 12"
echo "# seed $SEED, at most $KILLS killed ticks"

test_expect_success 'setup: 12 work orders, two pairs touching the same lines, a dirty checkout' '
	fault_repo repo "$(approve_reviewer_config)" &&
	for i in $WOS; do
		case $i in
		1 | 2) edit="sed -i 5s/.*/five-by-$i/ lines.txt" ;;
		3 | 4) edit="sed -i 15s/.*/fifteen-by-$i/ lines.txt" ;;
		*) edit="echo $i >file$i.txt" ;;
		esac &&
		printf "%s\n" "$edit" "echo built $i >\"\$SLUICE_RUN_DIR/summary.md\"" >"$BUILDERS/R$i.sh" &&
		wo repo R$i || return 1
	done
'

test_expect_success 'ticks killed at random moments end with every work order merged once' '
	kill_ticks repo "$SEED" "$KILLS" 120 12 "--jobs 2" >&3 &&
	# then ticks as cron would run them, until the queue settles
	settle repo &&
	sluice -C repo runs >runs &&
	test "$(grep -c " merged " runs)" = 12 &&
	test "$(wc -l <runs)" = 12 &&
	fault_check repo "$(for i in $WOS; do printf "R%s " $i; done)" ""
' 3>&1

test_done
