#!/bin/sh
# What an attempt used, as its builder writes it to $SLUICE_USAGE_FILE
# (docs/budgets.md): recorded once per run, attempt and role; a file that is
# no usage leaves the run going and the log naming the file; a retry is a
# second row; a tick killed after the builder ran keeps that attempt's
# figures, and the attempt the next tick runs is a row of its own.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool sqlite3 setsid

cat >"$BUILDERS/U.sh" <<'EOS'
echo u >u.txt
printf '%s\n' '{"input_tokens": 1200, "output_tokens": 340, "cache_read_tokens": 5000,' \
	'"cache_write_tokens": 70, "cost_usd": 0.125, "model": "m-large"}' >"$SLUICE_USAGE_FILE"
EOS
cat >"$BUILDERS/G.sh" <<'EOS'
echo g >g.txt
echo 'not { json' >"$SLUICE_USAGE_FILE"
EOS
cat >"$BUILDERS/W.sh" <<'EOS'
echo w >w.txt
echo '{"input_tokens": "many"}' >"$SLUICE_USAGE_FILE"
EOS
# R: red gate on attempt 1, green on 2; each attempt says its own cost
cat >"$BUILDERS/R.sh" <<'EOS'
echo "$SLUICE_ATTEMPT" >"r$SLUICE_ATTEMPT.txt"
printf '{"output_tokens": %d, "cost_usd": %d.5}\n' "$SLUICE_ATTEMPT" "$SLUICE_ATTEMPT" >"$SLUICE_USAGE_FILE"
EOS

rows() { # DIR RUN
	sqlite3 "$1/.system/sluice.db" "SELECT attempt, role, IFNULL(model, '-'), IFNULL(input_tokens, '-'), IFNULL(output_tokens, '-'), IFNULL(cache_read_tokens, '-'), IFNULL(cache_write_tokens, '-'), IFNULL(cost_usd, '-'), estimate FROM usage WHERE run_id = '$2' ORDER BY attempt, role"
}

test_expect_success 'the builder sees $SLUICE_USAGE_FILE inside its run folder' '
	echo "echo \"\$SLUICE_USAGE_FILE\" >\"$TRASH/usage-path\"; echo e >e.txt" >"$BUILDERS/E.sh" &&
	sluice_repo e "$(approve_reviewer_config)" && wo e E && settle e &&
	run=$(run_of e E) &&
	test "$(cat "$TRASH/usage-path")" = "$TRASH/e/.system/runs/$run/attempts/1/usage.json" &&
	test "$(sqlite3 e/.system/sluice.db "SELECT COUNT(*) FROM usage")" = 0
'

test_expect_success 'the figures the builder wrote are recorded, once, with the wall time' '
	sluice_repo r "$(approve_reviewer_config)" && wo r U && settle r &&
	run=$(run_of r U) && test "$(state_of r $run)" = merged &&
	test "$(rows r $run)" = "1|builder|m-large|1200|340|5000|70|0.125|0" &&
	test "$(sqlite3 r/.system/sluice.db "SELECT wall_ms >= 0 FROM usage")" = 1
'

test_expect_success 'a usage file that is not JSON: the run goes on, the log names the file' '
	sluice_repo g "$(approve_reviewer_config)" && wo g G && settle g &&
	run=$(run_of g G) && test "$(state_of g $run)" = merged &&
	test "$(rows g $run)" = "" &&
	sluice -C g log $run >log &&
	test_grep "usage file ignored: .*/runs/$run/attempts/1/usage.json. is not valid JSON" log
'

test_expect_success 'a usage file with a wrong type: nothing recorded, the log says what' '
	sluice_repo w "$(approve_reviewer_config)" && wo w W && settle w &&
	run=$(run_of w W) && test "$(state_of w $run)" = merged &&
	test "$(rows w $run)" = "" &&
	sluice -C w log $run >log &&
	test_grep "usage file ignored: .*/runs/$run/attempts/1/usage.json.: .input_tokens. is not a whole number" log
'

test_expect_success 'a retry records the second attempt separately' '
	sluice_repo t "gates:" "  two: [sh, -c, \"test -f r2.txt\"]" "retry:" "  - not: gate.two" "  - exit: 3" \
		"$(approve_reviewer_config)" &&
	wo t R && settle t &&
	run=$(run_of t R) && test "$(state_of t $run)" = merged &&
	test "$(rows t $run | tr "\n" " ")" = "1|builder|-|-|1|-|-|1.5|0 2|builder|-|-|2|-|-|2.5|0 "
'

for point in build.after_builder build.after_snapshot; do
	test_expect_success "a tick killed at $point: each attempt counted once" "
		rm -rf k && sluice_repo k \"\$(approve_reviewer_config)\" && wo k U &&
		FAULT_GROUP=1 fault_fire $point out -C k tick &&
		settle k &&
		run=\$(run_of k U) && test \"\$(state_of k \$run)\" = merged &&
		rows k \$run >rows &&
		printf '%s\\n' '1|builder|m-large|1200|340|5000|70|0.125|0' \\
			'2|builder|m-large|1200|340|5000|70|0.125|0' >expect &&
		test_cmp expect rows
	"
done

test_done
