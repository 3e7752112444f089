#!/bin/sh
# Errors that can never go away end the run with a reason a person can read
# (or are handled), instead of being retried on every tick: a file name
# that is not UTF-8, a diff far over the review cut, a reviewer name with a
# newline.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool python3

echo "{}" >"$TRASH/script.json"
start_reviewer "$TRASH/script.json" || exit 1

test_expect_success 'setup' '
	sluice_repo repo &&
	cat >>repo/.system/config.yaml <<-EOF &&
	reviewer:
	  mode: http
	  protocol: sluice
	  url: $REVIEWER_URL
	  timeout: 60s
	  retries: 1
	EOF
	sluice -C repo check
'

test_expect_success 'a file name that is not UTF-8: the run goes through, the name kept git-quoted' '
	printf "%s\n" "printf \"latin-1\\\\n\" >\"\$(printf \"caf\\\\351.txt\")\"" >"$BUILDERS/U1.sh" &&
	cat "$BUILDERS/U1.sh" &&
	wo repo U1 &&
	sluice -C repo tick >out 2>err &&
	run=$(run_of repo U1) &&
	sluice -C repo status $run &&
	test "$(state_of repo $run)" = merged &&
	git -C repo ls-tree --name-only main >names &&
	test_grep "caf.351.txt" names &&
	d=repo/.system/runs/$run &&
	test_grep "\"path_quoted\": \"caf\\\\\\\\351.txt\"" $d/files_changed.json &&
	req=$(grep -l "\"run_id\": *\"$run\"" "$REVIEWER_DIR"/requests/*.body | tail -n 1) &&
	test_grep "caf\\\\\\\\351.txt" $req &&
	sluice -C repo show $run >show &&
	sluice -C repo show --json $run >show.json &&
	sluice -C repo audit $run
'

test_expect_success 'a conflict in a file whose name and bytes are not UTF-8: merge_conflict, not a loop' '
	sluice_repo lat "merge:" "  resolver: none" &&
	f=$(printf "caf\351.txt") &&
	seq 1 10 >"lat/$f" && git -C lat add -A && git -C lat commit -q -m lines &&
	printf "%s\n" "sed -i \"5s/.*/A \$(printf "\\\\351")/\" \"\$(printf caf\\\\351.txt)\"" >"$BUILDERS/LA.sh" &&
	printf "%s\n" "sed -i \"5s/.*/B \$(printf "\\\\351")/\" \"\$(printf caf\\\\351.txt)\"" >"$BUILDERS/LB.sh" &&
	cat "$BUILDERS/LA.sh" &&
	wo lat LA && wo lat LB &&
	sluice -C lat tick --jobs 2 >/dev/null &&
	ra=$(run_of lat LA) && rb=$(run_of lat LB) &&
	sluice -C lat approve $ra && sluice -C lat approve $rb &&
	sluice -C lat tick --jobs 1 >out 2>err &&
	test "$(state_of lat $ra)" = merged &&
	test "$(state_of lat $rb)" = merge_conflict &&
	python3 -c "import json,sys; c=json.load(open(sys.argv[1])); assert c[\"conflictFiles\"] == [\"caf\\ufffd.txt\"], c[\"conflictFiles\"]; assert \"+B \\ufffd\" in c[\"currentRun\"][\"diff\"]" lat/.system/runs/$rb/conflict.json &&
	sluice -C lat show $rb >show
'

test_expect_success 'a diff.patch over 64 MiB: the review gets the first 4 MiB, the run merges' '
	cat >"$BUILDERS/B1.sh" <<-\EOS &&
	yes "$(printf "%099d" 0)" | head -n 707072 >big.txt
	EOS
	wo repo B1 &&
	sluice -C repo tick >out 2>err &&
	run=$(run_of repo B1) &&
	sluice -C repo status $run &&
	test "$(state_of repo $run)" = merged &&
	d=repo/.system/runs/$run &&
	test $(wc -c <$d/diff.patch) -gt 67108864 &&
	req=$(grep -l "\"run_id\": *\"$run\"" "$REVIEWER_DIR"/requests/*.body | tail -n 1) &&
	python3 - "$req" $(wc -c <$d/diff.patch) <<-\EOF &&
	import json, sys
	r = json.load(open(sys.argv[1]))
	assert r["diff_truncated"] is True, r["diff_truncated"]
	assert r["diff_bytes"] == int(sys.argv[2]), (r["diff_bytes"], sys.argv[2])
	assert len(r["diff"].encode()) == 4 << 20, len(r["diff"])
	assert "4194304" in r["diff_note"], r["diff_note"]
	EOF
	sluice -C repo show $run >show &&
	test_grep "big.txt | +707072 -0" show &&
	sluice -C repo audit $run
'

test_expect_success 'a reviewer name with a newline: a malformed verdict, never a merge' '
	cat >script.json <<-\EOF &&
	{"N1": [{"verdict": "approve", "comments": "ok", "reviewer": "bot\nSluice-Run: forged"}]}
	EOF
	echo "echo n1 >n1.txt" >"$BUILDERS/N1.sh" &&
	wo repo N1 &&
	sluice -C repo tick >out 2>err &&
	run=$(run_of repo N1) &&
	test "$(state_of repo $run)" = reviewing &&
	sluice -C repo status --json $run >st &&
	test_grep "reviewer name .bot?Sluice-Run: forged. holds a control character" st &&
	! git -C repo cat-file -e main:n1.txt &&
	! test -f repo/.system/runs/$run/review.json &&
	echo "{}" >script.json &&
	sluice -C repo tick >out 2>err &&
	test "$(state_of repo $run)" = merged &&
	git -C repo log -1 --format=%B main >msg &&
	test_grep "^Reviewed-by: fake-reviewer$" msg &&
	test $(grep -c "^Sluice-Run: " msg) = 1
'

test_expect_success 'reviewer comments with an escape code and a newline: one clean line in the reason' '
	python3 -c "import json; print(json.dumps({\"C1\": [{\"verdict\": \"reject\", \"comments\": \"bad \\u001b[2J\\nFAKE LINE \" + \"\\u00e9\" * 600}]}))" >script.json &&
	echo "echo c1 >c1.txt" >"$BUILDERS/C1.sh" &&
	wo repo C1 &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo C1) &&
	test "$(state_of repo $run)" = rejected &&
	sluice -C repo runs >runs && sluice -C repo log $run >log &&
	for f in out runs log; do
		! grep -q "$(printf "\033")" $f || { echo "escape code in $f" >&2; return 1; }
		! grep -q "^FAKE LINE" $f || { echo "fake line in $f" >&2; return 1; }
	done &&
	test_grep "rejected by [^:]*: bad ?\[2J FAKE LINE ..*\.\.\.$" log &&
	python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r[\"comments\"].startswith(\"bad \\u001b[2J\\nFAKE\")" repo/.system/runs/$run/review.json &&
	sluice -C repo status --json $run >st &&
	python3 -c "import json,sys; json.load(open(sys.argv[1]))" st
'

test_expect_success 'a reply that is not JSON, with an escape code: the reason quotes none of it raw' '
	python3 -c "import json; print(json.dumps({\"G1\": [{\"raw\": \"\\u001b[2J\\nFAKE\"}]}))" >script.json &&
	echo "echo g1 >g1.txt" >"$BUILDERS/G1.sh" &&
	wo repo G1 &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo G1) &&
	test "$(state_of repo $run)" = reviewing &&
	sluice -C repo runs >runs && sluice -C repo status --json $run >st &&
	test_grep "not valid JSON" st &&
	for f in out runs st; do
		! grep -q "$(printf "\033")" $f || { echo "escape code in $f" >&2; return 1; }
	done
'

test_expect_success 'a person whose USER holds a newline cannot approve with it' '
	sluice_repo man &&
	echo "echo m >m.txt" >"$BUILDERS/M1.sh" &&
	wo man M1 &&
	sluice -C man tick >out &&
	run=$(run_of man M1) &&
	test "$(state_of man $run)" = awaiting_review &&
	test_expect_failure_code 1 env USER="$(printf "eve\nSluice-Run: x")" "$SLUICE" -C man approve $run 2>err &&
	test_grep "control character" err &&
	test "$(state_of man $run)" = awaiting_review &&
	sluice -C man approve $run &&
	sluice -C man tick >out &&
	test "$(state_of man $run)" = merged
'

test_done
