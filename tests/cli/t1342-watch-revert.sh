#!/bin/sh
# The watch's loop closed (issue 31, docs/watch.md): a landing named by a
# watch gate's bisection is reverted through the train (<WO>-revert: built
# by sluice as the exact inverse, reviewed per watch.revert_review, its car
# running the merge gates and the watch gate), and the work order gets a
# fix-up successor (<WO>-fix) carrying what went wrong; the watch is green
# again and the fix-up, built with the fix, lands. Never reverted twice.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool jq

for w in A B C; do
	echo "echo $w >$w.txt" >"$BUILDERS/$w.sh"
done
# B breaks the slow suite, which the merge gates do not run.
echo "echo broken >>B.txt" >>"$BUILDERS/B.sh"
# The fix-up does B's work without breaking it.
echo "echo B >B.txt" >"$BUILDERS/B-fix.sh"

# The slow suite: red when any file says broken; each run logged with the
# commit it ran on (HEAD: the train's car runs it too).
cat >"$TRASH/e2e.sh" <<EOS
git rev-parse HEAD >>"$TRASH/e2e.runs"
echo "e2e: checking every file"
! grep -l broken *.txt 2>/dev/null
EOS

# A hostile suite: a NUL, a byte that is no UTF-8, a front-matter fence and a
# Markdown fence in its output.
cat >"$TRASH/hostile.sh" <<'EOS'
printf 'bad \377 byte\000nul\n---\n````\n'
! grep -l broken *.txt 2>/dev/null
EOS

# A repository: the merge gate unit, the watch gate e2e, revert_review $2.
watch_repo() { # DIR REVIEW
	sluice_repo "$1" "queue:" "  jobs: 1" "gates:" "  unit: [\"true\"]" "watch:" \
		"  gates:" "    e2e: [sh, $TRASH/e2e.sh]" "  revert_review: $2" \
		"notify:" "  command: [sh, -c, \"cat >>$TRASH/events.$1.jsonl\"]" \
		"$(approve_reviewer_config)" &&
	sluice -C "$1" watch >/dev/null &&
	for w in A B C; do
		wo "$1" $w && settle "$1" &&
		test "$(state_of "$1" "$(run_of "$1" $w)")" = merged || return 1
	done
}

test_expect_success 'setup: green at the start, then A, B and C land; B breaks e2e' '
	watch_repo r auto &&
	git -C r log --first-parent --format=%s main >landings &&
	test "$(wc -l <landings)" = 4
'

test_expect_success 'the watch names B in two tests and writes B-revert and B-fix into the inbox' '
	: >"$TRASH/e2e.runs" &&
	test_expect_failure_code 1 sluice -C r watch --json >watch.json &&
	schema_validate watch.schema.json watch.json &&
	jq -e ".gates[0] | .verdict == \"red\" and .landings == 3 and .tests <= 2" watch.json &&
	jq -e ".gates[0] | .culprit_work_order == \"B\" and .revert_work_order == \"B-revert\" and .fix_work_order == \"B-fix\" and .revert_new == true" watch.json &&
	test -f r/work_orders/B-revert.md && test -f r/work_orders/B-fix.md &&
	sluice -C r check >check.out &&
	b=$(run_of r B) &&
	culprit=$(jq -r ".gates[0].culprit" watch.json) &&
	git -C r log -1 --format=%B $culprit >msg && test_grep "^Sluice-Run: $b" msg &&
	test_grep "^revert: {\"commit\": \"$culprit\", \"run\": \"$b\", \"gate\": \"e2e\"}$" r/work_orders/B-revert.md &&
	test_grep "^priority: urgent$" r/work_orders/B-revert.md &&
	sluice -C r log $b >log &&
	test_grep "reverted by work order B-revert" log &&
	grep "\"event\": *\"watch_red\"" "$TRASH/events.r.jsonl" >red.jsonl &&
	test "$(wc -l <red.jsonl)" = 1 &&
	schema_validate notify-event.schema.json red.jsonl &&
	jq -e --arg b "$b" --arg tip "$(git -C r rev-parse main)" ".run == \$b and .work_order == \"B\" and .gate == \"e2e\" and .commit == \$tip and .from == null" red.jsonl &&
	jq -r .reason red.jsonl | grep -q "reverted by work order B-revert"
'

test_expect_success 'the fix-up carries the work order, its diff, the failure and the bisection' '
	f=r/work_orders/B-fix.md &&
	test_grep "^depends_on: \[\"B-revert\"\]$" $f &&
	test_grep "^fixes: \"B\"$" $f &&
	test_grep "The watch gate .e2e. passes" $f &&
	test_grep "^Do the work of B\.$" $f &&
	test_grep "^+broken$" $f &&
	test_grep "^e2e: checking every file$" $f &&
	test_grep "^B.txt$" $f &&
	test_grep "(the tip): red, and red again" $f &&
	test_grep "(run $(run_of r B)): red, and red again" $f &&
	sluice -C r queue --explain >q &&
	test_grep "^waiting .* B-fix " q &&
	test_grep "waits on B-revert" q
'

test_expect_success 'a watch before the revert lands: red, not bisected again, no second revert' '
	: >"$TRASH/e2e.runs" &&
	test_expect_failure_code 1 sluice -C r watch >out &&
	test_grep "not bisected again: the revert of the culprit named before, work order B-revert" out &&
	sluice -C r status >st &&
	test_grep "^watch: e2e red on .* (first red [0-9a-f]*: run $(run_of r B)) (reverted by B-revert: ready) (sluice watch)$" st &&
	test_grep "first red: .*, the landing of run $(run_of r B) (work order B)" out &&
	test "$(wc -l <"$TRASH/e2e.runs")" = 2 &&
	test "$(ls r/work_orders | grep -c revert)" = 1 &&
	test "$(sqlite3 r/.system/sluice.db "SELECT count(*) FROM watch_reverts")" = 1 &&
	test "$(grep -c "\"event\": *\"watch_red\"" "$TRASH/events.r.jsonl")" = 1
'

test_expect_success 'the revert: built by sluice, approved as an exact revert, lands with unit and e2e on its car' '
	settle r &&
	rv=$(run_of r B-revert) &&
	test "$(state_of r $rv)" = merged &&
	b=$(run_of r B) &&
	landing=$(git -C r log --first-parent --format=%H --grep="^Sluice-Run: $b\$" main) &&
	test -n "$landing" &&
	sluice -C r show $rv >show &&
	test_grep "sluice (exact revert)" show &&
	test_grep "revert of $landing" r/.system/runs/$rv/builder.log &&
	test "$(sqlite3 r/.system/sluice.db "SELECT base_commit || \" \" || approved_tree FROM runs WHERE id = \"$rv\"")" = "$landing $(git -C r rev-parse $landing^1^{tree})" &&
	git -C r diff $landing $landing^1 >want.patch &&
	grep "^[-+]" want.patch >want && grep "^[-+]" r/.system/runs/$rv/diff.patch >got &&
	test_cmp want got &&
	jq -e "[.[] | select(.passed) | .name] == [\"unit\", \"watch.e2e\"]" r/.system/runs/$rv/train/gates.json &&
	car=$(git -C r rev-parse main~1) &&
	grep -qx "$car" "$TRASH/e2e.runs"
'

test_expect_success 'the fix-up ran after the revert, with the fix, and landed' '
	fx=$(run_of r B-fix) &&
	test "$(state_of r $fx)" = merged &&
	git -C r show main:B.txt >b.txt && test "$(cat b.txt)" = B &&
	git -C r show main:A.txt >/dev/null && git -C r show main:C.txt >/dev/null &&
	grep -q "^+broken$" r/.system/runs/$fx/attempts/1/prompt.md
'

test_expect_success 'the watch is green again; sluice audit checks the revert like any landing' '
	sluice -C r watch >out &&
	test_grep "^watch e2e: green on $(git -C r rev-parse --short=12 main)" out &&
	sluice -C r audit >audit.out &&
	test_grep "^audit: 5 merged runs, .*: all hold$" audit.out &&
	test_grep "^audit: 5 landings with a green gate record" audit.out
'

test_expect_success 'show, status and the desk say what the watch did: culprit, revert, fix-up' '
	b=$(run_of r B) && rv=$(run_of r B-revert) && fx=$(run_of r B-fix) &&
	sluice -C r show $b >show &&
	test_grep "^watch: this landing ([0-9a-f]*) broke the watch gate .e2e.; reverted by work order B-revert (done), done again by B-fix (done)$" show &&
	sluice -C r show $rv >show &&
	test_grep "^watch: the revert of [0-9a-f]*, the landing of run $b (work order B), which broke the watch gate .e2e.; B-fix does that work again (done)$" show &&
	sluice -C r show $fx >show &&
	test_grep "^watch: the fix-up of work order B, whose landing [0-9a-f]* (run $b) broke the watch gate .e2e.; it starts once the revert B-revert has landed (done)$" show &&
	sluice -C r show --json $b >show.json &&
	schema_validate show.schema.json show.json &&
	jq -e ".watch[0] | .role == \"culprit\" and .revert_state == \"done\" and .gate == \"e2e\"" show.json &&
	sluice -C r status --json >st.json &&
	schema_validate status.schema.json st.json &&
	jq -e ".watch[0].verdict == \"green\"" st.json &&
	desk_up r && test_when_finished "kill $(cat "$TRASH/desk.pid")" &&
	desk_page /runs/$b >page.html &&
	test_grep "<ul id=\"watch\">" page.html &&
	test_grep "reverted by work order B-revert" page.html &&
	desk_page /runs/$rv >page.html &&
	test_grep "href=\"/runs/$b\">the culprit.s run</a>" page.html &&
	desk_page / >front.html &&
	test_grep "<table id=\"watch-reverts\">" front.html &&
	test_grep "<td>B-revert done</td><td>B-fix done</td>" front.html &&
	sluice -C r report >report.html &&
	test_grep "<table id=\"watch-runs\">" report.html &&
	test_grep "<td>bisection step</td><td>red</td>" report.html &&
	test_grep "<td>B-revert done</td><td>B-fix done</td>" report.html
'

test_expect_success 'a new revision of B breaks it again: B-revert-2 and B-fix-2, the first revert kept' '
	echo "echo B2 >B.txt" >"$BUILDERS/B-fix-2.sh" &&
	echo "One more time." >>r/work_orders/B.md &&
	settle r &&
	b2=$(run_of r B) &&
	test "$(state_of r $b2)" = merged &&
	test_expect_failure_code 1 sluice -C r watch --json >w2.json &&
	jq -e --arg b "$b2" ".gates[0] | .culprit_run == \$b and .revert_work_order == \"B-revert-2\" and .fix_work_order == \"B-fix-2\"" w2.json &&
	test_grep "^depends_on: \[\"B-revert-2\"\]$" r/work_orders/B-fix-2.md &&
	settle r &&
	test "$(state_of r "$(run_of r B-revert-2)")" = merged &&
	test "$(state_of r "$(run_of r B-fix-2)")" = merged &&
	sluice -C r watch >out &&
	test "$(sqlite3 r/.system/sluice.db "SELECT count(*) FROM watch_reverts")" = 2
'

test_expect_success 'watch.revert_review person: the revert waits for a person, who approves it' '
	watch_repo p person &&
	test_expect_failure_code 1 sluice -C p watch >out &&
	test_grep "revert: work order B-revert is in the inbox (reviewed per watch.revert_review: person" out &&
	settle p &&
	rv=$(run_of p B-revert) &&
	test "$(state_of p $rv)" = awaiting_review &&
	sluice -C p show $rv >show &&
	test_grep "a revert of [0-9a-f]* waits for a person (watch.revert_review: person)" show &&
	sluice -C p approve $rv &&
	settle p &&
	test "$(state_of p $rv)" = merged &&
	test "$(state_of p "$(run_of p B-fix)")" = merged &&
	sluice -C p watch >out
'

test_expect_success 'a revert that no longer applies waits for a person in merge_conflict' '
	sluice_repo c "queue:" "  jobs: 1" "watch:" "  gates:" "    e2e: [sh, $TRASH/e2e.sh]" \
		"  revert_review: auto" "$(approve_reviewer_config)" &&
	echo "echo fine >S.txt" >"$BUILDERS/S0.sh" &&
	echo "echo broken >S.txt" >"$BUILDERS/S1.sh" &&
	echo "echo broken and more >S.txt" >"$BUILDERS/S2.sh" &&
	wo c S0 && settle c &&
	sluice -C c watch >/dev/null &&
	wo c S1 && settle c && wo c S2 && settle c &&
	test_expect_failure_code 1 sluice -C c watch --json >w.json &&
	jq -e ".gates[0].culprit_work_order == \"S1\"" w.json &&
	settle c &&
	rv=$(run_of c S1-revert) &&
	test "$(state_of c $rv)" = merge_conflict &&
	sluice -C c show $rv >show &&
	test_grep "the revert no longer applies" show &&
	test "$(sluice -C c queue --json | jq -r ".work_orders[] | select(.id == \"S1-fix\") | .state")" = waiting
'

test_expect_success 'a person.s commit is named, never reverted' '
	sluice_repo h "watch:" "  gates:" "    e2e: [sh, $TRASH/e2e.sh]" &&
	sluice -C h watch >/dev/null &&
	echo broken >h/p.txt && git -C h add p.txt && git -C h commit -q -m "a person breaks it" &&
	test_expect_failure_code 1 sluice -C h watch >out &&
	test_grep "a person.s commit is named, never reverted" out &&
	{ test ! -d h/work_orders || test -z "$(ls h/work_orders)"; }
'

test_expect_success 'a revert a person wrote: built the same, but a person approves it even with auto' '
	sluice_repo m "watch:" "  revert_review: auto" "$(approve_reviewer_config)" &&
	echo "echo L >L.txt" >"$BUILDERS/L.sh" &&
	wo m L && settle m &&
	landing=$(git -C m rev-parse main) &&
	wo m L-undo "revert: {commit: $landing}" &&
	settle m &&
	rv=$(run_of m L-undo) &&
	test "$(state_of m $rv)" = awaiting_review &&
	sluice -C m show $rv >show &&
	test_grep "watch.revert_review: auto, but the watch did not make this revert" show &&
	sluice -C m approve $rv && settle m &&
	test "$(state_of m $rv)" = merged &&
	test_expect_failure_code 128 git -C m show main:L.txt 2>/dev/null
'

test_expect_success 'bad revert: fields get a clear error; a commit not on the target fails the run' '
	sluice_repo v "$(approve_reviewer_config)" &&
	wo v R1 "revert: {commit: abc}" &&
	test_expect_failure_code 1 sluice -C v check >out &&
	test_grep "R1.md:.*revert.commit .abc. is not a full commit id" out &&
	wo v R1 "revert: {commit: $(printf "%040d" 0 | tr 0 a), path: x}" &&
	test_expect_failure_code 1 sluice -C v check >out &&
	test_grep "unknown key .path. in revert" out &&
	git -C v commit -q --allow-empty -m side-commit &&
	side=$(git -C v rev-parse HEAD) && git -C v reset -q --hard HEAD^ &&
	wo v R1 "revert: {commit: $side}" &&
	settle v &&
	test "$(state_of v "$(run_of v R1)")" = failed &&
	sluice -C v show "$(run_of v R1)" >show &&
	test_grep "is not on .main.; nothing to revert" show
'

test_expect_success 'watch.every 2: a tick watches after two landings, and the loop closes by ticks alone' '
	sluice_repo e "queue:" "  jobs: 1" "watch:" "  gates:" "    e2e: [sh, $TRASH/e2e.sh]" \
		"  every: 2" "  revert_review: auto" "$(approve_reviewer_config)" &&
	wo e A && sluice -C e tick >t1 &&
	test_grep "^tick: watch.every 2: 0 landings since the watch gate .e2e. last ran (or it never ran)$" t1 &&
	test_grep "^watch e2e: green on $(git -C e rev-parse --short=12 main)" t1 &&
	wo e B && sluice -C e tick >t2 &&
	test_grep -v "watch" t2 &&
	wo e C && sluice -C e tick >t3 &&
	test_grep "^tick: watch.every 2: 2 landings since" t3 &&
	test_grep "first red: .*, the landing of run $(run_of e B) (work order B)" t3 &&
	test_grep "revert: work order B-revert is in the inbox" t3 &&
	sluice -C e tick --json >t4.json &&
	schema_validate tick.schema.json t4.json &&
	jq -e ".merged == 2 and (.watch | length) == 1 and .watch[0].verdict == \"green\"" t4.json &&
	test "$(state_of e "$(run_of e B-fix)")" = merged
'

test_expect_success 'hostile output and a long id: the fix-up still parses, ids stay valid' '
	long=W$(printf "%059d" 0 | tr 0 x) &&
	echo "echo broken >L.txt" >"$BUILDERS/$long.sh" &&
	sluice_repo x "watch:" "  gates:" "    e2e: [sh, $TRASH/hostile.sh]" "$(approve_reviewer_config)" &&
	sluice -C x watch >/dev/null &&
	wo x "$long" && settle x &&
	test_expect_failure_code 1 sluice -C x watch --json >x.json &&
	rwo=$(jq -r ".gates[0].revert_work_order" x.json) && fwo=$(jq -r ".gates[0].fix_work_order" x.json) &&
	test ${#rwo} -le 64 && test ${#fwo} -le 64 &&
	case $rwo in *-revert) ;; *) false ;; esac &&
	case $fwo in *-fix) ;; *) false ;; esac &&
	sluice -C x check >check.out &&
	test_grep "bad ? byte?nul" "x/work_orders/$fwo.md" &&
	sluice -C x queue --json >q.json &&
	jq -e --arg f "$fwo" ".work_orders[] | select(.id == \$f) | .state == \"waiting\"" q.json
'

test_expect_success 'a person.s commit that carries a Sluice-Run trailer is a person.s: never reverted' '
	sluice_repo f "watch:" "  gates:" "    e2e: [sh, $TRASH/e2e.sh]" "  revert_review: auto" \
		"$(approve_reviewer_config)" &&
	wo f A && settle f &&
	sluice -C f watch >/dev/null &&
	echo broken >f/P.txt && git -C f add P.txt &&
	git -C f commit -q -m "a person breaks it" -m "Sluice-Run: $(run_of f A)" &&
	test_expect_failure_code 1 sluice -C f watch --json >f.json &&
	jq -e ".gates[0] | .culprit_run == null and .revert_work_order == null" f.json &&
	test ! -e f/work_orders/A-revert.md
'

test_expect_success 'a second landing breaks the gate after a revert landed: it is named, not the first' '
	sluice_repo s "queue:" "  jobs: 1" "watch:" "  gates:" "    e2e: [sh, $TRASH/e2e.sh]" \
		"  revert_review: auto" "$(approve_reviewer_config)" &&
	sluice -C s watch >/dev/null &&
	for w in A B C; do wo s $w && settle s || return 1; done &&
	test_expect_failure_code 1 sluice -C s watch >/dev/null &&
	settle s &&
	test "$(state_of s "$(run_of s B-revert)")" = merged &&
	echo "echo broken >D.txt" >"$BUILDERS/D.sh" &&
	wo s D && settle s &&
	test_expect_failure_code 1 sluice -C s watch --json >s.json &&
	jq -e --arg d "$(run_of s D)" ".gates[0] | .culprit_run == \$d and .revert_work_order == \"D-revert\"" s.json
'

test_expect_success 'a revert.s landing that breaks another gate is named, not reverted; worktree.mode read-only holds no revert back' '
	echo "echo broken >Q.txt" >"$BUILDERS/Q.sh" &&
	echo "echo fine >Q2.txt" >"$BUILDERS/Q-fix.sh" &&
	sluice_repo qq "queue:" "  jobs: 1" "worktree:" "  mode: read-only" "watch:" "  gates:" \
		"    e2e: [sh, $TRASH/e2e.sh]" "    hasq: [sh, -c, \"[ ! -f A.txt ] || [ -f Q.txt ]\"]" \
		"  revert_review: auto" "$(approve_reviewer_config)" &&
	sluice -C qq watch >/dev/null &&
	wo qq Q "worktree: read-write" && settle qq &&
	wo qq A "worktree: read-write" && settle qq &&
	sluice -C qq watch --gate hasq >/dev/null &&
	test_expect_failure_code 1 sluice -C qq watch --gate e2e >out &&
	test_grep "revert: work order Q-revert is in the inbox" out &&
	settle qq &&
	test "$(state_of qq "$(run_of qq Q-revert)")" = merged &&
	test_expect_failure_code 1 sluice -C qq watch --gate hasq >out &&
	test_grep "not reverted: it is itself a revert.s landing; a person decides" out &&
	test "$(ls qq/work_orders | grep -c revert)" = 1
'

test_expect_success 'a new revision of a revert that landed reverts nothing again' '
	echo "Once more." >>qq/work_orders/Q-revert.md &&
	settle qq &&
	rv=$(run_of qq Q-revert) &&
	test "$(state_of qq $rv)" = failed &&
	sluice -C qq show $rv >show &&
	test_grep "landed its revert of [0-9a-f]* already; write a new work order to revert again" show
'

test_expect_success 'a DEL in the work order and a diff over 256 KiB: the fix-up parses, the diff cut with a note' '
	printf "%s\n" "echo broken >big.txt" "seq 1 60000 >>big.txt" >"$BUILDERS/G.sh" &&
	sluice_repo g "watch:" "  gates:" "    e2e: [sh, $TRASH/e2e.sh]" "$(approve_reviewer_config)" &&
	sluice -C g watch >/dev/null &&
	wo g G "goal: \"do \\x7f it\"" && settle g &&
	test "$(state_of g "$(run_of g G)")" = merged &&
	test_expect_failure_code 1 sluice -C g watch >out &&
	sluice -C g check >check.out &&
	test_grep "(the first 262144 bytes of [0-9]*)" g/work_orders/G-fix.md &&
	test_grep "u007f" g/work_orders/G-fix.md
'

test_expect_success 'a file of the revert.s name already in the inbox, not read yet: the next name is taken' '
	sluice_repo k "watch:" "  gates:" "    e2e: [sh, $TRASH/e2e.sh]" "$(approve_reviewer_config)" &&
	sluice -C k watch >/dev/null &&
	wo k B && settle k &&
	printf "%s\n" "---" "id: B-revert" "title: [a person.s file" "---" >k/work_orders/B-revert.md &&
	test_expect_failure_code 1 sluice -C k watch --json >k.json &&
	jq -e ".gates[0] | .revert_work_order == \"B-revert-2\" and .fix_work_order == \"B-fix-2\"" k.json &&
	test_grep "^title: \[a person.s file$" k/work_orders/B-revert.md
'

test_done
