#!/bin/sh
# sluice watch (issue 31, docs/watch.md): the watch gates run on the
# target's tip in a checkout of their own; a red one runs again before it
# is believed; red twice, the first-parent commits since its last green
# result are bisected and the first red one named: a run's landing (told in
# its log) or a person's commit. A flaky gate starts no bisection.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool jq

for w in A B C; do
	echo "echo $w >$w.txt" >"$BUILDERS/$w.sh"
done
# B breaks the slow suite, which the merge gates do not run.
echo "echo broken >>B.txt" >>"$BUILDERS/B.sh"

# The slow suite: red when any file says broken; each run logged with its commit.
cat >"$TRASH/e2e.sh" <<EOS
echo "\$SLUICE_COMMIT" >>"$TRASH/e2e.runs"
! grep -l broken *.txt 2>/dev/null
EOS
# Flaky: red on its first run of each commit, green on the next.
cat >"$TRASH/flaky.sh" <<EOS
if grep -qx "\$SLUICE_COMMIT" "$TRASH/flaky.seen" 2>/dev/null; then exit 0; fi
echo "\$SLUICE_COMMIT" >>"$TRASH/flaky.seen"
exit 1
EOS

test_expect_success 'setup: green at the start, then three runs land, the second breaks e2e' '
	sluice_repo r "queue:" "  jobs: 1" "watch:" "  gates:" "    e2e: [sh, $TRASH/e2e.sh]" \
		"$(approve_reviewer_config)" &&
	sluice -C r watch >out &&
	test_grep "^watch e2e: green on " out &&
	for w in A B C; do
		wo r $w && settle r &&
		test "$(state_of r "$(run_of r $w)")" = merged || return 1
	done
'

test_expect_success 'the watch goes red, is believed on its run again, and the bisection names B in two tests' '
	: >"$TRASH/e2e.runs" &&
	test_expect_failure_code 1 sluice -C r watch --json >watch.json &&
	jq -e ".gates[0] | .verdict == \"red\" and .landings == 3 and .tests <= 2" watch.json &&
	schema_validate watch.schema.json watch.json &&
	test "$(jq -r ".gates[0].culprit_run" watch.json)" = "$(run_of r B)" &&
	test "$(jq -r ".gates[0].culprit_work_order" watch.json)" = B &&
	git -C r log -1 --format=%B "$(jq -r ".gates[0].culprit" watch.json)" >msg &&
	test_grep "^Sluice-Run: $(run_of r B)" msg &&
	test "$(sed -n 1p "$TRASH/e2e.runs")" = "$(git -C r rev-parse main)" &&
	test "$(sed -n 2p "$TRASH/e2e.runs")" = "$(git -C r rev-parse main)" &&
	sluice -C r log "$(run_of r B)" >log &&
	test_grep "watch gate .e2e. went red on .*names this run.s landing" log
'

test_expect_success 'the text output names the landing, its run and work order' '
	test_expect_failure_code 1 sluice -C r watch >out &&
	test_grep "^watch e2e: red on " out &&
	test_grep "first red: .*, the landing of run $(run_of r B) (work order B)" out
'

test_expect_success 'sluice status shows the newest result, and the landing named' '
	b=$(run_of r B) &&
	sluice -C r status >st &&
	test_grep "^watch: e2e red on $(git -C r rev-parse --short=12 main) (first red [0-9a-f]*: run $b) (reverted by B-revert: ready) (sluice watch)$" st &&
	sluice -C r status --json >st.json &&
	schema_validate status.schema.json st.json &&
	jq -e --arg b "$b" ".watch[0] | .gate == \"e2e\" and .verdict == \"red\" and .culprit_run == \$b" st.json
'

test_expect_success 'a person.s commit as the culprit' '
	sluice_repo p "watch:" "  gates:" "    e2e: [sh, $TRASH/e2e.sh]" "$(approve_reviewer_config)" &&
	sluice -C p watch >out &&
	echo broken >p/person.txt && git -C p add person.txt && git -C p commit -q -m "a person breaks it" &&
	echo fine >p/later.txt && git -C p add later.txt && git -C p commit -q -m "a later commit" &&
	test_expect_failure_code 1 sluice -C p watch --json >watch.json &&
	jq -e ".gates[0] | .culprit_run == null and .culprit_subject == \"a person breaks it\"" watch.json &&
	test_expect_failure_code 1 sluice -C p watch >out &&
	test_grep "a person.s commit (no run landed it): a person breaks it" out
'

test_expect_success 'a flaky watch gate: red then green on the same commit, no bisection, exit 0' '
	sluice_repo f "watch:" "  gates:" "    flaky: [sh, $TRASH/flaky.sh]" &&
	sluice -C f watch --json >watch.json &&
	jq -e ".gates[0] | .verdict == \"flaky\" and .tests == 0 and .culprit == null" watch.json &&
	schema_validate watch.schema.json watch.json &&
	sluice -C f status --json | jq -e ".watch[0].verdict == \"flaky\"" &&
	test "$(wc -l <"$TRASH/flaky.seen")" = 1
'

test_expect_success 'no watch gates: says so; --json an empty list' '
	sluice_repo z &&
	sluice -C z status >st && test_grep -v "^watch:" st &&
	test "$(sluice -C z status --json | jq -c .watch)" = "[]" &&
	sluice -C z watch >out &&
	test_grep "^no watch gates: set watch.gates" out &&
	sluice -C z watch --json >z.json &&
	test "$(jq -c .gates z.json)" = "[]" &&
	schema_validate watch.schema.json z.json
'

test_expect_success 'never green before: red, nothing to bisect; a gate not in watch.gates is a usage error' '
	sluice_repo n "watch:" "  gates:" "    bad: [\"false\"]" &&
	test_expect_failure_code 1 sluice -C n watch >out &&
	test_grep "never green before: nothing to bisect" out &&
	test_expect_failure_code 2 sluice -C n watch --gate nope >out 2>&1 &&
	test_grep "no watch gate .nope. in watch.gates" out
'

test_expect_success 'the reviewer token never reaches a watch gate; two watches at once: one waits its turn, refused' '
	sluice_repo t "watch:" "  gates:" "    envs: [sh, -c, \"env >\\\"$TRASH/gate.env\\\"\"]" \
		"reviewer:" "  mode: http" "  url: http://127.0.0.1:9/" "  token_env: T1341_TOKEN" &&
	T1341_TOKEN=secret-t1341-never-in-a-gate sluice -C t watch >out &&
	test_grep "^SLUICE_WATCH_GATE=envs$" "$TRASH/gate.env" &&
	test_grep -v "secret-t1341" "$TRASH/gate.env" &&
	: >t/.system/watch.lock &&
	exec 9<t/.system/watch.lock && flock -n 9 &&
	test_expect_failure_code 1 sluice -C t watch >out 2>err &&
	exec 9<&- &&
	test_grep "sluice watch: gate .envs.: " err
'

test_expect_success 'the checkout is gone after each run; no git worktree is left' '
	test ! -e r/.system/watch/checkout &&
	git -C r worktree list >wt &&
	test_grep -v "watch/checkout" wt &&
	ls r/.system/watch/logs | grep -q "^e2e-"
'

test_done
