#!/bin/sh
# sluice show and sluice report for the merge train (issue 12): a run's car
# while it is in the train, the gate record it landed with, and a semantic
# conflict shown like a textual one (its kind, the failing gate and its
# output, the rival runs).
. "$(dirname "$0")/lib.sh"

validate() { # SCHEMA FILE: validate against schema/SCHEMA; skips without python3-jsonschema
	python3 -c "import jsonschema" 2>/dev/null || test_skip "python3-jsonschema not installed"
	python3 -c "import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))" \
		"$SLUICE_SOURCE_DIR/schema/$1" "$2"
}

# A key of a JSON document, with python3: jget FILE EXPR (EXPR on the parsed d)
jget() {
	python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1"
}

# The merge gate `test` fails when X1.txt and X2.txt are both there.
train_repo() { # DIR
	sluice_repo "$1" "gates:" \
		"  test: [sh, -c, 'if test -e X1.txt && test -e X2.txt; then echo X1 and X2 break the build together; exit 1; fi']" \
		"merge:" "  gates: [test]" "  resolve_attempts: 0" "queue:" "  jobs: 2" \
		"$(approve_reviewer_config)"
}

json_of() { # DIR RUN KEY
	"$SLUICE" -C "$1" status --json "$2" | sed -n "s/^ *\"$3\": \"\(.*\)\",\{0,1\}\$/\1/p" | head -n 1
}

test_expect_success 'setup: X1 and X2 break the gate together; one lands, the other is red' '
	train_repo repo &&
	meeting_builders X1 X2 "echo x >%s.txt" &&
	wo repo X1 && wo repo X2 &&
	settle repo &&
	x1=$(run_of repo X1) && x2=$(run_of repo X2) &&
	if test "$(state_of repo $x1)" = merged; then g=$x1 b=$x2; else g=$x2 b=$x1; fi &&
	test "$(state_of repo $g)" = merged && test "$(state_of repo $b)" = merge_conflict &&
	echo $g >green.id && echo $b >red.id
'

test_expect_success 'show of a run that landed through the train: its gate record' '
	g=$(cat green.id) && m=$(json_of repo $g merge_commit) &&
	sluice -C repo show $g >out &&
	test_grep "^train: landed through the merge train, green; the tested commit $(echo $m | cut -c1-12) is the merge commit$" out &&
	test_grep "^  merge gate test: passed in " out &&
	test_grep "^  tested at 20[0-9-]*T[0-9:.]*Z, gates took " out &&
	sluice -C repo show --json $g >g.json &&
	validate show.schema.json g.json &&
	test "$(jget g.json "d[\"train\"][\"source\"]")" = train.json &&
	test "$(jget g.json "d[\"train\"][\"commit\"]")" = $m &&
	test "$(jget g.json "d[\"train\"][\"green\"]")" = True &&
	test "$(jget g.json "d[\"train\"][\"gates\"][0][\"name\"]")" = test
'

test_expect_success 'show of the semantic conflict: the kind, the failing gate, its output, the rival' '
	g=$(cat green.id) && b=$(cat red.id) &&
	sluice -C repo show $b >out &&
	test_grep "^conflict (semantic): the merge gates failed on the merge: gate test (exit 1)$" out &&
	test_grep "^  rival runs ahead of it: .*$g" out &&
	test_grep "^  output of gate test (its end):$" out &&
	test_grep "X1 and X2 break the build together" out &&
	test_grep -v "^conflict in " out &&
	test_grep "^next: cd .* && git merge --no-commit main; make the merge gates pass; git commit -a --no-edit; then: sluice retry $b" out &&
	sluice -C repo show --json $b >b.json &&
	validate show.schema.json b.json &&
	test "$(jget b.json "d[\"conflict\"][\"kind\"]")" = semantic &&
	test "$(jget b.json "d[\"conflict\"][\"failed_gates\"][0][\"name\"]")" = test &&
	test "$(jget b.json "d[\"conflict\"][\"failed_gates\"][0][\"exit_code\"]")" = 1 &&
	jget b.json "d[\"conflict\"][\"failed_gates\"][0][\"output\"]" >output &&
	test_grep "X1 and X2 break the build together" output &&
	jget b.json "\" \".join(d[\"conflict\"][\"rival_runs\"])" >rivals &&
	test_grep "$g" rivals
'

test_expect_success 'a textual conflict says its kind in show --json' '
	sluice_repo tx "$(approve_reviewer_config)" &&
	meeting_builders T1 T2 "echo %s >same.txt" &&
	wo tx T1 && wo tx T2 && echo "queue:" >>tx/.system/config.yaml &&
	echo "  jobs: 2" >>tx/.system/config.yaml &&
	echo "merge:" >>tx/.system/config.yaml && echo "  resolve_attempts: 0" >>tx/.system/config.yaml &&
	settle tx &&
	for w in T1 T2; do
		r=$(run_of tx $w) &&
		if test "$(state_of tx $r)" = merge_conflict; then echo $r >tx.id; fi || return 1
	done &&
	sluice -C tx show $(cat tx.id) >out &&
	test_grep "^conflict in 1 file: same.txt$" out &&
	sluice -C tx show --json $(cat tx.id) >t.json && validate show.schema.json t.json &&
	test "$(jget t.json "d[\"conflict\"][\"kind\"]")" = textual
'

test_expect_success 'show of a run in the train: its car, status, base and gates' '
	train_repo car &&
	echo "echo c1 >c1.txt" >"$BUILDERS/C1.sh" &&
	wo car C1 &&
	fault_fire train.after_result fault.out -C car tick &&
	r=$(run_of car C1) &&
	test "$(state_of car $r)" = approved &&
	sluice -C car show $r >out &&
	test_grep "^train: car 1 of 1, green$" out &&
	test_grep "^  on the tip of the target$" out &&
	test_grep "^  base $(git -C car rev-parse main | cut -c1-12)  commit [0-9a-f]\{12\}  tree [0-9a-f]\{12\}$" out &&
	test_grep "^  merge gate test: passed in " out &&
	sluice -C car show --json $r >c.json && validate show.schema.json c.json &&
	test "$(jget c.json "d[\"train\"][\"source\"]")" = store &&
	test "$(jget c.json "d[\"train\"][\"position\"]")" = 1 &&
	test "$(jget c.json "d[\"train\"][\"status\"]")" = green &&
	sluice -C car report >page.html &&
	test_grep "<td>car 1 of 1, green on the tip (gates [0-9.]*s)</td>" page.html
'

test_expect_success 'report: the gate time of landed runs and the train column' '
	g=$(cat green.id) &&
	sluice -C repo report >page.html &&
	test_grep "<th>merge train</th>" page.html &&
	test_grep "landed green, gates [0-9.]*s" page.html &&
	settle car &&
	sluice -C car report >page2.html &&
	test_grep "landed green, gates " page2.html &&
	test_grep -v "<td>car 1 of 1" page2.html
'

test_done
