#!/bin/sh
# sluice show: the dossier of a merged run, of a merge_conflict run, of one awaiting review.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool python3

run_of() { # WO-ID: the newest run of a work order (in the current repository)
	sluice runs --wo "$1" --json | sed -n 's/^    "id": "\(.*\)",$/\1/p' | head -n 1
}

validate() { # SCHEMA FILE: validate against schema/SCHEMA; skips without python3-jsonschema
	python3 -c "import jsonschema" 2>/dev/null || test_skip "python3-jsonschema not installed"
	python3 -c "import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))" \
		"$SLUICE_SOURCE_DIR/schema/$1" "$2"
}

# The reviewer fails (exit 1, the run stays reviewing) for WO-1 until $TRASH/go1
# exists and for WO-2 until $TRASH/go2: both are built on the same base, then
# WO-1 merges first and WO-2 conflicts, whatever the timing of the workers.
write_reviewer() {
	cat >"$TRASH/reviewer.sh" <<-EOF
	#!/bin/sh
	req=\$(cat)
	case "\$req" in *'"id": "WO-1"'*|*'"id":"WO-1"'*) test -f "$TRASH/go1" || exit 1;; esac
	case "\$req" in *'"id": "WO-2"'*|*'"id":"WO-2"'*) test -f "$TRASH/go2" || exit 1;; esac
	echo '{"verdict":"approve","reviewer":"bot","criteria":[{"criterion":"writes same.txt","met":true,"note":"fine"}]}'
	EOF
	chmod +x "$TRASH/reviewer.sh"
}

test_expect_success 'setup: two work orders that write the same file; a reviewer with criteria' '
	write_reviewer && test_repo repo && (cd repo && sluice init >/dev/null &&
	cat >>.system/config.yaml <<-EOF &&
	builder:
	  command: [sh, -c, "echo \"\$SLUICE_WORK_ORDER_ID\" >same.txt; echo \"built \$SLUICE_WORK_ORDER_ID\" >\"\$SLUICE_RUN_DIR/summary.md\""]
	gates:
	  test:
	    command: [sh, -c, "echo testing; test -f same.txt"]
	reviewer:
	  mode: command
	  command: [$TRASH/reviewer.sh]
	merge:
	  resolver: none
	EOF
	sluice check >/dev/null &&
	for i in 1 2; do
		printf -- "---\nid: WO-$i\ntitle: Same file $i\n---\nWrite it.\n" >work_orders/WO-$i.md || exit 1
	done &&
	sluice tick >/dev/null 2>&1 &&
	touch ../go1 && sluice tick >/dev/null 2>&1 &&
	touch ../go2 && sluice tick >/dev/null &&
	sluice runs --state merged --json | grep -q "\"WO-1\"" &&
	sluice runs --state merge_conflict --json | grep -q "\"WO-2\"")
'

test_expect_success 'show a merged run: work order, timeline, attempts, verdict, diff, merge, artifacts' '
	(cd repo && r=$(run_of WO-1) && sluice show $r >../out &&
	 test_grep "^run $r  merged$" ../out &&
	 test_grep "^work order WO-1 \"Same file 1\" (work_orders/WO-1.md), done" ../out &&
	 test_grep "approved -> merging  landing the tested merge [0-9a-f]\{12\} on main" ../out &&
	 test_grep "^  1 build: ok (builder exit 0), head [0-9a-f]\{12\}$" ../out &&
	 test_grep "^    prompt: .*/.system/runs/$r/attempts/1/prompt.md$" ../out &&
	 test_grep "^gate test: passed$" ../out &&
	 test_grep "^verdict: approve by bot$" ../out &&
	 test_grep "^  \[met\] writes same.txt - fine$" ../out &&
	 test_grep "^diff: 1 file changed, 1 insertion(+), 0 deletions(-)$" ../out &&
	 test_grep "^  same.txt | +1 -0$" ../out &&
	 test_grep "^merge: $(git rev-parse main) into refs/heads/main" ../out &&
	 test_grep "^worktree: none" ../out &&
	 for f in work_order.md diff.patch review.json merge.json gates/test.log builder.log; do
		test_grep "^  $PWD/.system/runs/$r/$f$" ../out || exit 1
	 done)
'

test_expect_success 'show a merge_conflict run: the rival, its summary, markers, what to type next' '
	(cd repo && r=$(run_of WO-2) && rival=$(run_of WO-1) && sluice show $r >../out &&
	 test_grep "^conflict in 1 file: same.txt$" ../out &&
	 test_grep "^  with run $rival (WO-1 \"Same file 1\"), merged " ../out &&
	 test_grep "^  its summary: built WO-1$" ../out &&
	 test_grep "^<<<<<<< main$" ../out && test_grep "^>>>>>>> run/WO-2-" ../out &&
	 test_grep "^worktree: $PWD/.system/runs/$r/worktree$" ../out &&
	 test_grep "^next: cd $PWD/.system/runs/$r/worktree && git merge main; fix the conflicted files; git commit -a --no-edit; then: sluice retry $r, or sluice abandon $r$" ../out &&
	 test_grep "^  $PWD/.system/runs/$r/conflict.json$" ../out)
'

test_expect_success 'show --json: one document with every part' '
	(cd repo && sluice show --json $(run_of WO-2) >../out.json) &&
	python3 -c "
import json, sys
d = json.load(open(\"out.json\"))
for k in (\"run\", \"work_order\", \"timeline\", \"attempts\", \"gates\", \"verdict\", \"diffstat\",
          \"conflict\", \"merge\", \"worktree\", \"next\", \"artifacts_dir\", \"artifacts\", \"removed_by_gc\"):
    assert k in d, k
assert d[\"run\"][\"state\"] == \"merge_conflict\"
assert d[\"conflict\"][\"files\"] == [\"same.txt\"]
assert d[\"conflict\"][\"rival\"][\"work_order\"] == \"WO-1\"
assert d[\"attempts\"][0][\"review\"][\"criteria\"][0][\"met\"] is True
assert d[\"timeline\"][0][\"to\"] == \"queued\" and d[\"timeline\"][-1][\"to\"] == \"merge_conflict\"
assert all(e[\"after_ms\"] >= 0 for e in d[\"timeline\"])
assert d[\"merge\"] is None and d[\"removed_by_gc\"] is False
" &&
	validate show.schema.json out.json &&
	(cd repo && sluice show --json $(run_of WO-1) >../merged.json) && validate show.schema.json merged.json
'

test_expect_success 'show a run awaiting review says how to approve it' '
	(cd repo && sed -i "s/^  mode: command$/  mode: manual/" .system/config.yaml &&
	printf -- "---\nid: WO-3\ntitle: Third\n---\n" >work_orders/WO-3.md &&
	sluice tick >/dev/null && r=$(run_of WO-3) && sluice show $r >../out &&
	test_grep "^next: read review-request.json (the diff: sluice diff $r), then: sluice approve $r, sluice request-changes $r -m TEXT, or sluice reject $r -m TEXT$" ../out)
'

test_expect_success 'show: unknown run and usage errors' '
	(cd repo && test_expect_failure_code 1 sluice show nosuchrun 2>../err &&
	 test_expect_failure_code 2 sluice show 2>>../err) &&
	test_grep "nosuchrun" err
'

test_done
