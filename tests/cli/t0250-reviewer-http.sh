#!/bin/sh
# The reviewer over real HTTP on loopback (tests/reviewer/fake_reviewer.c):
# verdicts drive the run, faults fail closed and recover, the token never
# leaks, and the OpenAI-compatible protocol works too.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool python3

TOKEN="sekrit-token-$$-do-not-leak"
export REVIEW_TOKEN="$TOKEN"

echo "{}" >"$TRASH/script.json"
start_reviewer "$TRASH/script.json" || exit 1
echo "$REVIEWER_URL" >"$TRASH/url"

test_expect_success 'setup: a repository and the loopback reviewer' '
	test -n "$REVIEWER_URL" &&
	sluice_repo repo &&
	cat >>repo/.system/config.yaml <<-EOF &&
	retry:
	  - not: gate.review
	  - exit: 3
	reviewer:
	  mode: http
	  protocol: sluice
	  url: $REVIEWER_URL
	  token_env: REVIEW_TOKEN
	  timeout: 10s
	  connect_timeout: 5s
	  retries: 1
	EOF
	for w in A R J F1 F2 F3 F4 F5; do
		echo "echo $w >$w.txt; echo \"token is \$REVIEW_TOKEN\" >>$w.txt" >"$BUILDERS/$w.sh" || return 1
	done &&
	sluice -C repo check
'

test_expect_success 'approve: merged; the request holds the diff, the criteria and the tree' '
	wo repo A "acceptance_criteria:" "  - A.txt exists" &&
	sluice -C repo tick >out &&
	run=$(run_of repo A) &&
	test "$(state_of repo $run)" = merged &&
	req=$(grep -l "$run" "$REVIEWER_DIR"/requests/*.body | head -n 1) && test -n "$req" &&
	test_grep "sluice.review.v1" $req &&
	test_grep "A.txt exists" $req &&
	test_grep "+A" $req &&
	tree=$(git -C repo rev-parse main^2^{tree}) &&
	test_grep "\"tree\": *\"$tree\"" $req &&
	hdr=${req%.body}.headers &&
	test_grep "Authorization: Bearer $TOKEN" $hdr
'

test_expect_success 'the builder does not see the token' '
	git -C repo show main:A.txt >a && test_grep "^token is $" a
'

test_expect_success 'request_changes: a second attempt whose prompt holds the comments' '
	cat >script.json <<-\EOF &&
	{"R": [{"verdict": "request_changes", "comments": "Please also handle the empty case."},
	       {"verdict": "approve", "comments": "good"}]}
	EOF
	wo repo R &&
	sluice -C repo tick >out &&
	run=$(run_of repo R) &&
	test "$(state_of repo $run)" = merged &&
	test_grep "Please also handle the empty case." repo/.system/runs/$run/attempts/2/prompt.md &&
	test_grep "request_changes" repo/.system/runs/$run/attempts/1/review.json
'

test_expect_success 'reject: the run ends rejected' '
	cat >script.json <<-\EOF &&
	{"J": [{"verdict": "reject", "comments": "Out of scope."}]}
	EOF
	wo repo J &&
	sluice -C repo tick >out &&
	run=$(run_of repo J) &&
	test "$(state_of repo $run)" = rejected &&
	sluice -C repo status --json $run >st && test_grep "Out of scope" st
'

fault_case() { # WO FAULT-JSON EXPECTED-REASON
	cat >script.json <<-EOF &&
	{"$1": [$2]}
	EOF
	wo repo $1 &&
	sluice -C repo tick >out &&
	run=$(run_of repo $1) &&
	test "$(state_of repo $run)" = reviewing &&
	sluice -C repo status --json $run >st &&
	test_grep "$3" st &&
	! test -f repo/.system/runs/$run/review.json &&
	echo "{}" >script.json &&
	sluice -C repo tick >out &&
	test "$(state_of repo $run)" = merged
}

test_expect_success 'HTTP 503 with Retry-After: stays reviewing, recovers next tick' '
	fault_case F1 "{\"status\": 503, \"retry_after\": 1}" "503"
'

test_expect_success 'garbage reply: stays reviewing, recovers next tick' '
	fault_case F2 "{\"garbage\": true}" "JSON"
'

test_expect_success 'connection closed: stays reviewing, recovers next tick' '
	fault_case F3 "{\"close\": true}" "review try"
'

test_expect_success 'timeout: stays reviewing, recovers next tick' '
	fault_case F4 "{\"delay_ms\": 60000, \"verdict\": \"approve\"}" "review try"
'

test_expect_success 'unknown verdict: stays reviewing, never approved' '
	fault_case F5 "{\"verdict\": \"lgtm\", \"comments\": \"x\"}" "verdict"
'

test_expect_success 'reviewer down (connection refused): stays reviewing' '
	sed -i "s|^  url: .*|  url: http://127.0.0.1:1/review|" repo/.system/config.yaml &&
	echo "echo down >down.txt" >"$BUILDERS/D.sh" &&
	wo repo D &&
	sluice -C repo tick >out &&
	run=$(run_of repo D) &&
	test "$(state_of repo $run)" = reviewing &&
	sed -i "s|^  url: .*|  url: $(cat url)|" repo/.system/config.yaml &&
	sluice -C repo tick >out &&
	test "$(state_of repo $run)" = merged
'

test_expect_success 'the token appears in no file under .system/ and no output' '
	! grep -r -l "$TOKEN" repo/.system &&
	sluice -C repo runs --json >o1 && sluice -C repo log >o2 &&
	for r in $(sluice -C repo runs | cut -d" " -f1); do sluice -C repo show --json $r >>o3 || return 1; done &&
	! grep -l "$TOKEN" o1 o2 o3 out
'

test_expect_success 'the OpenAI-compatible protocol, with the verdict in a fenced block' '
	cat >script.json <<-\EOF &&
	{"O": [{"verdict": "approve", "comments": "fine", "fence": true}]}
	EOF
	base=$(cat url) && base=${base%/review} &&
	python3 - repo/.system/config.yaml "$base/v1" <<-\EOF &&
	import sys
	p, url = sys.argv[1], sys.argv[2]
	s = open(p).read()
	import re
	s = re.sub(r"(?m)^  protocol: sluice$", "  protocol: openai\n  model: test-model", s)
	s = re.sub(r"(?m)^  url: .*", "  url: " + url, s)
	open(p, "w").write(s)
	EOF
	echo "echo o >o.txt" >"$BUILDERS/O.sh" &&
	wo repo O &&
	sluice -C repo tick >out &&
	run=$(run_of repo O) &&
	test "$(state_of repo $run)" = merged &&
	req=$(ls "$REVIEWER_DIR"/requests/*.headers | tail -n 1) &&
	test_grep "chat/completions" $req &&
	test_grep "\"model\": *\"test-model\"" ${req%.headers}.body
'

test_done
