#!/bin/sh
# The rival of a merge conflict is whoever last changed the conflicting lines
# on the target (git blame of the conflicted hunks, each commit mapped to the
# landing that brought it), not the latest landed run that touched the file:
# run A rewrote lines 10-12 of f.c, run B then changed line 900 (both landed),
# run C conflicts on lines 10-12: its rival is A. A person's direct commit that
# changed the lines is named as such, with its author and subject. The
# resolve prompt, conflict.json and `sluice show` name every such rival.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool python3

test_expect_success 'setup: builders for lines 10-12 and line 900 of f.c' '
	echo "sed -i \"10,12s/.*/& rewritten by A/\" f.c" >"$BUILDERS/A.sh" &&
	echo "sed -i \"900s/.*/& changed by B/\" f.c" >"$BUILDERS/B.sh" &&
	echo "sed -i \"10,12s/.*/& changed by C/\" f.c" >"$BUILDERS/C.sh" &&
	cp "$BUILDERS/C.sh" "$BUILDERS/D.sh" &&
	cp "$BUILDERS/B.sh" "$BUILDERS/E.sh"
'

# rival_repo DIR [config lines]: f.c of 1000 lines; work orders A, B, C built
# on the same base (a person approves them), then A lands, then B, then C.
rival_repo() {
	_d=$1 && shift &&
	sluice_repo "$_d" "queue:" "  jobs: 3" "$@" &&
	seq 1 1000 | sed "s/^/int line_/; s/$/;/" >"$_d/f.c" &&
	git -C "$_d" add f.c && git -C "$_d" commit -q -m "f.c" &&
	sluice -C "$_d" check >/dev/null &&
	wo "$_d" A && wo "$_d" B && wo "$_d" C &&
	settle "$_d" &&
	for w in A B C; do
		sluice -C "$_d" approve "$(run_of "$_d" $w)" >/dev/null &&
		settle "$_d" || return 1
	done
}

test_expect_success 'run C conflicts with A on lines 10-12, after B changed line 900' '
	rival_repo rv "merge:" "  resolver: none" &&
	a=$(run_of rv A) && b=$(run_of rv B) && c=$(run_of rv C) &&
	test "$(state_of rv $a)" = merged &&
	test "$(state_of rv $b)" = merged &&
	test "$(state_of rv $c)" = merge_conflict &&
	echo "$a" >a.id && echo "$b" >b.id && echo "$c" >c.id
'

test_expect_success 'conflict.json: conflictingRun is A, conflictingRuns holds A alone' '
	c=$(cat c.id) && a=$(cat a.id) &&
	python3 - rv/.system/runs/$c/conflict.json "$a" <<-\EOP
	import json, sys
	c = json.load(open(sys.argv[1]))
	assert c["conflictingRun"]["id"] == sys.argv[2], c["conflictingRun"]["id"]
	ids = [r.get("id") for r in c["conflictingRuns"]]
	assert ids == [sys.argv[2]], ids
	assert c["conflictingRuns"][0]["workOrder"]["id"] == "A"
	assert "rewritten by A" in c["conflictingRuns"][0]["diff"]
	EOP
'

test_expect_success 'the run names A as its rival; show names A, not B' '
	c=$(cat c.id) && a=$(cat a.id) && b=$(cat b.id) &&
	sluice -C rv status --json $c >st &&
	test_grep "\"conflict_with_run_id\": \"$a\"" st &&
	sluice -C rv show $c >out &&
	test_grep "run $a (A " out &&
	test_grep -v "$b" out &&
	sluice -C rv show --json $c >out.json &&
	python3 - out.json "$a" <<-\EOP
	import json, sys
	c = json.load(open(sys.argv[1]))["conflict"]
	assert [r.get("run") for r in c["rivals"]] == [sys.argv[2]], c["rivals"]
	assert c["rival"]["run"] == sys.argv[2]
	EOP
'

test_expect_success 'a person'"'"'s commit that changed the lines is the rival, named as such' '
	sluice_repo pc "merge:" "  resolver: none" &&
	seq 1 1000 | sed "s/^/int line_/; s/$/;/" >pc/f.c &&
	git -C pc add f.c && git -C pc commit -q -m "f.c" &&
	wo pc D && wo pc E &&
	settle pc &&
	sed -i "10,12s/.*/& fixed by hand/" pc/f.c &&
	(cd pc && GIT_AUTHOR_NAME="Pat Person" GIT_AUTHOR_EMAIL=pat@example.com \
		git commit -q -am "fix the first lines by hand") &&
	sluice -C pc approve "$(run_of pc E)" >/dev/null && settle pc &&
	d=$(run_of pc D) && e=$(run_of pc E) &&
	sluice -C pc approve $d >/dev/null && settle pc &&
	test "$(state_of pc $e)" = merged &&
	test "$(state_of pc $d)" = merge_conflict &&
	sluice -C pc show $d >out &&
	test_grep "with commit [0-9a-f]* by Pat Person <pat@example.com>, not a sluice run" out &&
	test_grep "fix the first lines by hand" out &&
	test_grep -v "$e" out &&
	python3 - pc/.system/runs/$d/conflict.json <<-\EOP
	import json, sys
	c = json.load(open(sys.argv[1]))
	assert c["conflictingRun"] is None, c["conflictingRun"]
	r = c["conflictingRuns"]
	assert len(r) == 1 and r[0]["person"]["author"] == "Pat Person <pat@example.com>", r
	assert r[0]["person"]["subject"] == "fix the first lines by hand", r
	assert "fixed by hand" in r[0]["diff"]
	EOP
'

test_expect_success 'every rival is named: run A on lines 10-12 and a person'"'"'s commit on line 500' '
	echo "sed -i -e \"10,12s/.*/& changed by G/\" -e \"500s/.*/& changed by G/\" f.c" >"$BUILDERS/G.sh" &&
	sluice_repo mx "merge:" "  resolver: none" &&
	seq 1 1000 | sed "s/^/int line_/; s/$/;/" >mx/f.c &&
	git -C mx add f.c && git -C mx commit -q -m "f.c" &&
	wo mx A && wo mx G &&
	settle mx &&
	a=$(run_of mx A) && g=$(run_of mx G) &&
	sluice -C mx approve $a >/dev/null && settle mx &&
	sed -i "500s/.*/& fixed by hand/" mx/f.c &&
	(cd mx && GIT_AUTHOR_NAME="Pat Person" GIT_AUTHOR_EMAIL=pat@example.com \
		git commit -q -am "fix line 500 by hand") &&
	sluice -C mx approve $g >/dev/null && settle mx &&
	test "$(state_of mx $g)" = merge_conflict &&
	sluice -C mx show $g >out &&
	test_grep "with run $a (A " out &&
	test_grep "it last changed 3 conflicting lines, from f.c:10" out &&
	test_grep "with commit [0-9a-f]* by Pat Person <pat@example.com>, not a sluice run: fix line 500 by hand" out &&
	test_grep "it last changed 1 conflicting line, from f.c:500" out &&
	python3 - mx/.system/runs/$g/conflict.json "$a" <<-\EOP
	import json, sys
	c = json.load(open(sys.argv[1]))
	r = c["conflictingRuns"]
	assert [x["id"] for x in r] == [sys.argv[2], None], r
	assert r[1]["person"]["subject"] == "fix line 500 by hand"
	assert r[0]["lines"] == {"path": "f.c", "line": 10, "lines": 3, "by": "lines"}, r[0]["lines"]
	assert r[1]["lines"]["line"] == 500
	assert c["conflictingRun"]["id"] == sys.argv[2]
	assert c["rivalRuns"] == [sys.argv[2]]
	EOP
'

# desk NAME DIR: `sluice serve` of DIR on loopback (ended with the script);
# its port and token in $TRASH/NAME.port, NAME.token.
desk() {
	"$SLUICE" -C "$2" serve >"$TRASH/$1.out" 2>&1 &
	echo $! >"$TRASH/$1.pid" &&
	wait_until "grep -q http:// \"$TRASH/$1.out\" || ! kill -0 $(cat "$TRASH/$1.pid")" 120 &&
	_u=$(grep -o "http://[^ ]*" "$TRASH/$1.out" | head -n 1) &&
	[ -n "$_u" ] &&
	echo "$_u" | sed "s|http://127.0.0.1:\([0-9]*\)/.*|\1|" >"$TRASH/$1.port" &&
	echo "${_u##*=}" >"$TRASH/$1.token"
}
page() { # NAME PATH
	curl -s -u "sluice:$(cat "$TRASH/$1.token")" "http://127.0.0.1:$(cat "$TRASH/$1.port")$2"
}

test_expect_success 'the desk'"'"'s conflict page shows A, and the person'"'"'s commit, as the rivals' '
	test_skip_unless_tool curl &&
	test_when_finished "kill \$(cat $TRASH/d1.pid) \$(cat $TRASH/d2.pid) 2>/dev/null" &&
	desk d1 rv && desk d2 pc &&
	c=$(cat c.id) && a=$(cat a.id) && b=$(cat b.id) &&
	page d1 /runs/$c/conflict >rv.html &&
	test_grep "href=\"/runs/$a\"" rv.html &&
	test_grep "<li><code>$a</code>: 3 lines from <code>f.c:10</code>" rv.html &&
	test_grep -v "$b" rv.html &&
	d=$(run_of pc D) &&
	page d2 /runs/$d/conflict >pc.html &&
	test_grep "a person&#39;s commit\|a person.s commit" pc.html &&
	test_grep "Pat Person" pc.html &&
	test_grep -v "$(run_of pc E)" pc.html
'

test_expect_success 'the resolve prompt carries A: its work order and its diff, not B' '
	cat >"$BUILDERS/resolve.sh" <<-EOS &&
	cp "\$SLUICE_PROMPT_FILE" "$TRASH/prompt-\$SLUICE_WORK_ORDER_ID.md"
	git diff --name-only --diff-filter=U | while read -r f; do
		sed -i -e "/^<<<<<<< /d" -e "/^=======\$/d" -e "/^>>>>>>> /d" "\$f"
	done
	echo "kept both sides" >"\$SLUICE_RUN_DIR/summary.md"
	EOS
	rival_repo rp &&
	a=$(run_of rp A) && b=$(run_of rp B) &&
	p="$TRASH/prompt-C.md" &&
	test -f "$p" &&
	test_grep "^Conflicting run (A" "$p" &&
	test_grep "^## Conflicting run: run $a" "$p" &&
	sed -n "/^## Conflicting run/,/^## Git/p" "$p" >rivals.md &&
	test_grep "rewritten by A" rivals.md &&
	test_grep -v "changed by B" rivals.md &&
	test_grep -v "Do the work of B" "$p" &&
	test_grep -v "$b" "$p"
'

test_done
