#!/bin/sh
# Where the spend went (docs/budgets.md, "Where they show"): `sluice report`
# and the desk's queue page have a table "What agents cost": the work
# orders merged and failed (their cost, and per work order; a rejected one
# is a failed one, F1 and R1 here), what the
# rejected runs and the conflicts' resolutions cost, and the whole, from the
# costs the builders reported. Nothing recorded: no table.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool curl

# usage USD: a builder line that reports USD spent
usage() {
	printf 'echo "{\\"cost_usd\\": %s}" >"$SLUICE_USAGE_FILE"\n' "$1"
}
{ echo "echo m >m.txt" && usage 0.25; } >"$BUILDERS/M1.sh"
{ echo "echo f >fail.txt" && usage 1; } >"$BUILDERS/F1.sh"
{ echo "echo r >reject.txt" && usage 0.50; } >"$BUILDERS/R1.sh"
# the resolution of K1 and K2's conflict: both sides kept, $0.75
{
	echo "git diff --name-only --diff-filter=U | while read -r f; do"
	echo "	sed -i -e '/^<<<<<<< /d' -e '/^=======\$/d' -e '/^>>>>>>> /d' \"\$f\""
	echo "done"
	usage 0.75
} >"$BUILDERS/resolve.sh"
# the reviewer rejects a diff that adds reject.txt, and approves the rest
cat >"$TRASH/reviewer.sh" <<'EOS'
if grep -q reject.txt; then
	echo '{"verdict": "reject", "comments": "no reject.txt here", "reviewer": "bot"}'
else
	echo '{"verdict": "approve", "reviewer": "bot"}'
fi
EOS

test_expect_success 'no usage recorded: no table in the report' '
	sluice_repo e &&
	sluice -C e report >empty.html &&
	test_grep -v "What agents cost" empty.html
'

test_expect_success 'merged, failed, rejected and a resolved conflict: the report says each' '
	meeting_builders K1 K2 "echo %s >same.txt; echo \"{\\\"cost_usd\\\": 1}\" >\"\$SLUICE_USAGE_FILE\"" &&
	sluice_repo r "queue:" "  jobs: 2" "gates:" "  nofail: [sh, -c, \"test ! -e fail.txt\"]" \
		"reviewer:" "  mode: command" "  command: [sh, $TRASH/reviewer.sh]" &&
	wo r K1 && wo r K2 && settle r &&
	wo r M1 && wo r F1 && wo r R1 && settle r &&
	for w in K1 K2 M1; do
		test "$(state_of r "$(run_of r $w)")" = merged || return 1
	done &&
	test "$(state_of r "$(run_of r F1)")" = failed &&
	test "$(state_of r "$(run_of r R1)")" = rejected &&
	sluice -C r report >report.html &&
	test_grep "<h2>What agents cost</h2>" report.html &&
	test_grep "<tr><td>merged</td><td>3</td><td>\$3.00</td><td>\$1.00</td></tr>" report.html &&
	test_grep "<tr><td>spent on rejected runs</td><td></td><td>\$0.50</td>" report.html &&
	test_grep "<tr><td>spent resolving conflicts</td><td></td><td>\$0.75</td>" report.html &&
	test_grep "<tr><td>all attempts</td><td></td><td>\$4.50</td>" report.html &&
	test_grep "<tr><td>failed</td><td>2</td><td>\$1.50</td><td>\$0.75</td></tr>" report.html
'

test_expect_success 'the desk shows the same table on its queue page' '
	desk_up r && test_when_finished "kill $(cat "$TRASH/desk.pid")" &&
	desk_page / >desk.html &&
	test_grep "<h2>What agents cost</h2>" desk.html &&
	test_grep "<tr><td>merged</td><td>3</td><td>\$3.00</td><td>\$1.00</td></tr>" desk.html
'

test_done
