#!/bin/sh
# What the reviewer reads beside the diff comes from sluice, not from files
# in the run folder that something sluice starts can write: the gate results
# are the configured gates (a process a gate left behind that rewrites
# gates.json adds no gate and changes no command), and a resolution's
# conflict context (the conflicted files, the rival run and both diffs) is
# rebuilt from the store and git, whatever the resolver wrote to
# conflict.json.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool python3

# A command reviewer that approves and keeps each request; while the file
# "down" exists it fails (the run stays reviewing, asked again next tick).
cat >"$BUILDERS/keep-reviewer.sh" <<EOS
n=\$(ls "$TRASH/requests" | wc -l)
cat >"$TRASH/requests/\$n.json"
[ ! -e "$TRASH/down" ] || exit 1
echo '{"verdict": "approve", "reviewer": "keep-bot"}'
EOS
mkdir -p "$TRASH/requests"

last_request() {
	ls "$TRASH/requests" | sort -n | tail -n 1 | sed "s|^|$TRASH/requests/|"
}

test_expect_success 'a rewritten gates.json adds no gate and changes no command' '
	sluice_repo g "reviewer:" "  mode: command" "  command: [sh, $BUILDERS/keep-reviewer.sh]" \
		"gates:" "  unit: [sh, -c, \"exit 0\"]" &&
	sluice -C g check &&
	echo "echo feature >feature.txt" >"$BUILDERS/G1.sh" &&
	wo g G1 &&
	: >down &&
	sluice -C g tick >out 2>&1 &&
	run=$(run_of g G1) &&
	test "$(state_of g $run)" = reviewing &&
	cat >g/.system/runs/$run/gates.json <<-\EOF &&
	[{"name": "security-audit", "argv": ["audit", "--all"], "exit_code": 0, "passed": true,
	  "duration_ms": 1, "timed_out": false, "log": "gates/unit.log"},
	 {"name": "unit", "argv": ["make", "check-everything"], "exit_code": 0, "passed": true,
	  "duration_ms": 1, "timed_out": false, "log": "../../../README.md"}]
	EOF
	rm down &&
	sluice -C g tick >out 2>&1 &&
	test "$(state_of g $run)" = merged &&
	req=$(last_request) &&
	python3 - "$req" <<-\EOF
	import json, sys
	r = json.load(open(sys.argv[1]))
	g = r["gates"]
	assert [x["name"] for x in g] == ["unit"], g
	assert g[0]["argv"] == ["sh", "-c", "exit 0"], g
	assert g[0]["log"] == "gates/unit.log", g
	EOF
'

test_expect_success 'a resolver that rewrites conflict.json: the reviewer gets the context from the store and git' '
	sluice_repo res "reviewer:" "  mode: command" "  command: [sh, $BUILDERS/keep-reviewer.sh]" &&
	seq 1 10 >res/lines.txt && git -C res add lines.txt && git -C res commit -q -m lines &&
	meeting_builders R1 R2 "sed -i \"5s/.*/five by %s/\" lines.txt" &&
	cat >"$BUILDERS/resolve.sh" <<-\EOS &&
	# keep only its own side (drop the rival change), and tell the reviewer a story
	git diff --name-only --diff-filter=U | while read -r f; do
		sed -i -e "/^=======\$/,/^>>>>>>> /d" -e "/^<<<<<<< /d" "$f"
	done
	python3 - "$SLUICE_RUN_DIR/conflict.json" <<-\EOP
	import json, sys
	p = sys.argv[1]
	c = json.load(open(p))
	c["conflictFiles"] = ["FORGED-unrelated.txt"]
	c["gitConflictOutput"] = "FORGED: the rival change was a typo fix"
	c["conflictingRun"]["diff"] = "FORGED rival diff: a typo fix"
	c["conflictingRun"]["id"] = "FORGED-run"
	c["currentRun"]["diff"] = "FORGED current diff"
	c["targetTip"] = "0000000000000000000000000000000000000000"
	c["rivalRuns"] = ["FORGED-run"]
	json.dump(c, open(p, "w"))
	EOP
	EOS
	git -C res checkout -q --detach &&
	wo res R1 && wo res R2 &&
	sluice -C res tick --jobs 2 >out 2>&1 &&
	r1=$(run_of res R1) && r2=$(run_of res R2) &&
	test "$(state_of res $r1)" = merged &&
	test "$(state_of res $r2)" = merged &&
	req=$(grep -l "\"kind\": *\"resolution\"" "$TRASH"/requests/*.json | tail -n 1) &&
	test -n "$req" &&
	test_grep -v FORGED $req &&
	python3 - "$req" "$r1" "$r2" <<-\EOF
	import json, sys
	r = json.load(open(sys.argv[1]))
	c = r["conflict"]
	runs = {sys.argv[2]: "R1", sys.argv[3]: "R2"}
	me = r["run_id"]
	rival = [x for x in runs if x != me][0]
	assert c["conflictFiles"] == ["lines.txt"], c["conflictFiles"]
	assert r["rival_run_id"] == rival, r["rival_run_id"]
	assert c["conflictingRun"]["id"] == rival, c["conflictingRun"]
	assert "+five by %s" % runs[rival] in c["conflictingRun"]["diff"], c["conflictingRun"]
	assert c["currentRun"]["id"] == me, c["currentRun"]
	assert "+five by %s" % runs[me] in c["currentRun"]["diff"], c["currentRun"]
	assert rival in c["rivalRuns"], c["rivalRuns"]
	assert "lines.txt" in c["gitConflictOutput"], c["gitConflictOutput"]
	assert c["targetTip"] == c["conflictingRun"]["mergeCommit"], c
	EOF
'

test_expect_success 'sluice show takes the conflict from the store and git too' '
	r1=$(run_of res R1) && r2=$(run_of res R2) &&
	req=$(grep -l "\"kind\": *\"resolution\"" "$TRASH"/requests/*.json | tail -n 1) &&
	me=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"run_id\"])" $req) &&
	test_grep FORGED res/.system/runs/$me/conflict.json &&
	sluice -C res show $me >show &&
	test_grep "conflict in 1 file: lines.txt" show &&
	test_grep -v FORGED show &&
	sluice -C res show --json $me >show.json &&
	python3 - show.json "$r1" "$r2" "$me" <<-\EOF
	import json, sys
	c = json.load(open(sys.argv[1]))["conflict"]
	rival = sys.argv[2] if sys.argv[4] == sys.argv[3] else sys.argv[3]
	assert c["files"] == ["lines.txt"], c
	assert c["rival"]["run"] == rival, c
	assert c["source"] == "store", c
	assert "lines.txt" in c["markers"], c
	EOF
'

test_done
