#!/bin/sh
# The gemini preset with the REAL Gemini CLI (@google/gemini-cli, pinned in
# scripts/agents.sh, installed into build/agents) against the loopback fake
# model server (tests/agents/fake_model.py, protocol tests/agents/gemini.py):
# the CLI refuses a fresh worktree without the trust setting (exit 55, every
# run of issue 13 failed so), the preset trusts it, reads the prompt on
# standard input without -p (a 200 KiB one too), writes the file with its own
# write_file tool, and its final answer, without what it said before its tool
# call, is the run's summary that the reviewer gets; the reviewer's token is
# not in its environment. Its --help is kept as a fixture: a flag of the
# preset that the installed CLI no longer has fails here.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool python3 jq node git

AGENTS=${SLUICE_AGENTS_PREFIX:-$SLUICE_SOURCE_DIR/build/agents}
GEMINI=$AGENTS/node_modules/.bin/gemini
[ -x "$GEMINI" ] || test_skip_all "no Gemini CLI in $AGENTS (scripts/agents.sh installs it with npm)"
PATH="$AGENTS/node_modules/.bin:$PATH"
export PATH

TOKEN="reviewer-token-$$-never-in-the-agent"
export REVIEW_TOKEN="$TOKEN"
FINAL="wrote hello.txt with the greeting; the gate checks it."

# The CLI's own configuration, in the test's HOME (lib.sh): the API key
# auth type (GOOGLE_GEMINI_BASE_URL alone selects the "gateway" type, which
# 0.61 refuses without a terminal: "Invalid auth method selected.", exit 41)
# and nothing that calls home.
mkdir -p "$HOME/.gemini"
cat >"$HOME/.gemini/settings.json" <<-\EOF
{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "ide": {"enabled": false}
}
EOF

MODEL_DIR="$TRASH/model"
mkdir -p "$MODEL_DIR/requests"
python3 "$SLUICE_SOURCE_DIR/tests/agents/fake_model.py" --port 0 --port-file "$MODEL_DIR/port" \
	--record "$MODEL_DIR/requests" --edit "hello.txt=hello from the agent" \
	--final "$FINAL" --secret "$TOKEN" >"$MODEL_DIR/log" 2>&1 &
MODEL_PID=$!
test_when_finished "kill $MODEL_PID 2>/dev/null"
# its port, once it listens (or it died: the check below shows its log)
wait_until '[ -s "$MODEL_DIR/port" ] || ! kill -0 $MODEL_PID 2>/dev/null' || :
[ -s "$MODEL_DIR/port" ] || { cat "$MODEL_DIR/log"; echo "the fake model server did not start"; exit 1; }
GEMINI_API_KEY=not-a-real-key
GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$(cat "$MODEL_DIR/port")"
export GEMINI_API_KEY GOOGLE_GEMINI_BASE_URL
unset GEMINI_CLI_TRUST_WORKSPACE GOOGLE_GENAI_USE_VERTEXAI GOOGLE_GENAI_USE_GCA GOOGLE_API_KEY

echo "{}" >"$TRASH/review-script.json"
start_reviewer "$TRASH/review-script.json" || exit 1

gemini_repo() { # DIR
	test_repo "$1" && (cd "$1" && "$SLUICE" init >/dev/null) &&
	cat >>"$1/.system/config.yaml" <<-EOC
	builder:
	  preset: gemini
	gates:
	  greeting: [sh, -c, "grep -qx 'hello from the agent' hello.txt"]
	reviewer:
	  mode: http
	  protocol: sluice
	  url: $REVIEWER_URL
	  token_env: REVIEW_TOKEN
	EOC
}

# How many requests the fake model has recorded (into FILE), and the
# records of those that came after (fake_model.py numbers them 0001.json...).
model_mark() { # FILE
	ls "$MODEL_DIR/requests" | wc -l >"$1"
}
model_requests_since() { # FILE
	ls "$MODEL_DIR/requests" | sort | tail -n +$(($(cat "$1") + 1)) | sed "s|^|$MODEL_DIR/requests/|"
}

test_expect_success 'the --help snapshot is what the installed CLI prints' '
	"$GEMINI" --help >help.now 2>help.err &&
	test_cmp "$FIXTURES/agents/gemini.help" help.now
'

test_expect_success 'without the trust setting the CLI refuses a fresh worktree (exit 55)' '
	test_repo plain &&
	git -C plain worktree add -q -b fresh "$TRASH/fresh" &&
	echo "Write hello.txt." >prompt.txt &&
	(cd fresh && test_expect_failure_code 55 "$GEMINI" --approval-mode=yolo --output-format json \
		<../prompt.txt >../untrusted.out 2>../untrusted.err) &&
	test_grep "not running in a trusted directory" untrusted.err &&
	test ! -e fresh/hello.txt
'

test_expect_success 'with GEMINI_CLI_TRUST_WORKSPACE=true the same worktree runs (stdin, no -p)' '
	model_mark mark.trusted &&
	(cd fresh && GEMINI_CLI_TRUST_WORKSPACE=true "$GEMINI" --approval-mode=yolo --output-format json \
		<../prompt.txt >../trusted.out 2>../trusted.err) &&
	test "$(cat fresh/hello.txt)" = "hello from the agent" &&
	jq -e --arg f "$FINAL" ".response == \$f" trusted.out >/dev/null &&
	model_requests_since mark.trusted >reqs &&
	test -s reqs &&
	jq -s -e "map(.body | tostring | contains(\"Write hello.txt.\")) | any" $(cat reqs) >/dev/null
'

test_expect_success 'in text output stdout holds what the model said before its tool call too' '
	rm -f fresh/hello.txt &&
	(cd fresh && GEMINI_CLI_TRUST_WORKSPACE=true "$GEMINI" --approval-mode=yolo \
		<../prompt.txt >../text.out 2>../text.err) &&
	test_grep "not the final answer" text.out &&
	test_grep "$FINAL" text.out
'

test_expect_success 'GOOGLE_GEMINI_BASE_URL without the auth type in settings.json: refused (exit 41)' '
	mkdir -p nohome/.gemini &&
	echo "{\"ide\": {\"enabled\": false}}" >nohome/.gemini/settings.json &&
	model_mark mark.noauth &&
	(cd fresh && test_expect_failure_code 41 env GEMINI_CLI_HOME="$TRASH/nohome" \
		GEMINI_CLI_TRUST_WORKSPACE=true "$GEMINI" --approval-mode=yolo --output-format json \
		<../prompt.txt >../noauth.out 2>../noauth.err) &&
	jq -e ".error.message | test(\"Invalid auth method\")" noauth.out >/dev/null &&
	model_requests_since mark.noauth >reqs &&
	test ! -s reqs
'

test_expect_success 'a work order goes from the inbox to merged with the gemini preset, audit clean' '
	gemini_repo repo &&
	wo repo WO-1 "acceptance_criteria:" "  - hello.txt greets" &&
	model_mark mark.wo1 &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo WO-1) &&
	echo "$run" >run.wo1 &&
	test "$(state_of repo $run)" = merged &&
	test "$(git -C repo show main:hello.txt)" = "hello from the agent" &&
	sluice -C repo audit
'

test_expect_success 'the CLI talked to the fake model: streamGenerateContent, write_file, its result' '
	model_requests_since mark.wo1 >reqs &&
	jq -s -e "map(select(.path | test(\":streamGenerateContent\\\\?alt=sse\$\"))) | length >= 2" \
		$(cat reqs) >/dev/null &&
	jq -s -e "map(.body.contents[]?.parts[]?.functionResponse.name) | index(\"write_file\")" \
		$(cat reqs) >/dev/null &&
	jq -s -e "map(.body.tools[]?.functionDeclarations[]?.name) | index(\"write_file\")" \
		$(cat reqs) >/dev/null
'

test_expect_success 'yolo: its shell ran git and the gates in the worktree, unasked' '
	model_requests_since mark.wo1 >reqs &&
	jq -s -r "map(.body.contents[]?.parts[]?.functionResponse | select(.name == \"run_shell_command\")
		| .response | tostring) | .[]" $(cat reqs) >shell.out &&
	test_grep "?? hello.txt" shell.out &&
	test_grep "gate: grep -qx .hello from the agent. hello.txt" shell.out &&
	test_grep "the gates pass" shell.out
'

test_expect_success 'the final answer alone is the summary: review request, show, summary.md' '
	run=$(cat run.wo1) &&
	printf "%s\n" "$FINAL" >summary.want &&
	test_cmp summary.want repo/.system/runs/$run/summary.md &&
	req=$(grep -l "$run" "$REVIEWER_DIR"/requests/*.body | head -n 1) &&
	test -n "$req" &&
	jq -e --arg s "$FINAL" "(.builder_summary | rtrimstr(\"\\n\")) == \$s" $req >/dev/null &&
	sluice -C repo show $run >show.out &&
	test_grep "$FINAL" show.out &&
	test_grep -v "not the final answer" show.out
'

test_expect_success 'the stats of its JSON output are the attempt.s usage: tokens summed, the main model' '
	run=$(cat run.wo1) &&
	res=repo/.system/runs/$run/gemini-result.json &&
	jq -c "[.stats.models | to_entries[] | .value.tokens] |
		{input_tokens: (map(.input) | add), output_tokens: (map(.candidates + .thoughts) | add),
		 cache_read_tokens: (map(.cached) | add)}" $res >want.tok &&
	jq -r ".stats.models | to_entries | max_by(.value.tokens.total) | .key" $res >want.model &&
	sluice -C repo show --json $run >show.json &&
	jq -c ".usage.rows[] | select(.role == \"builder\") | {input_tokens, output_tokens, cache_read_tokens}" show.json >got.tok &&
	jq -r ".usage.rows[] | select(.role == \"builder\") | .model" show.json >got.model &&
	test_cmp want.tok got.tok && test_cmp want.model got.model &&
	jq -e ".input_tokens > 0" got.tok >/dev/null &&
	test "$(jq -r ".usage.rows[] | select(.role == \"builder\") | .cost_usd" show.json)" = null
'

test_expect_success 'the reviewer token is not in the environment of the CLI' '
	model_requests_since mark.wo1 >reqs &&
	jq -s -e "map(.processes[]) | length > 0" $(cat reqs) >/dev/null &&
	jq -s -e "map(.processes[] | select(.cmdline | test(\"gemini\"))) | length > 0" $(cat reqs) >/dev/null &&
	jq -s -e "map(.processes[] | select(.has_secret)) | length == 0" $(cat reqs) >/dev/null &&
	grep -l "Authorization: Bearer $TOKEN" "$REVIEWER_DIR"/requests/*.headers >/dev/null
'

test_expect_success 'builder.log: no trust or permission refusal' '
	run=$(cat run.wo1) &&
	log=repo/.system/runs/$run/builder.log &&
	test_grep "gemini" $log &&
	test_grep -v "not running in a trusted directory" $log &&
	test_grep -v "Approval mode overridden" $log &&
	test_grep -v -i "permission denied" $log &&
	test_grep -v "Path not in workspace" $log
'

test_expect_success 'every flag of the preset is in the --help snapshot' '
	run=$(cat run.wo1) &&
	head -n 1 repo/.system/runs/$run/builder.log |
		sed -n "s/.* gemini \\([^<]*\\)<.*/\\1/p" | tr " " "\n" | grep "^-" >flags &&
	test -s flags &&
	grep -qx -- "--output-format" flags &&
	while read -r f; do
		f=${f%%=*} &&
		grep -qE -- "(^|[ ,])$f([ ,]|\$)" "$FIXTURES/agents/gemini.help" ||
			{ echo "the preset uses $f, not in gemini --help" >&2; return 1; }
	done <flags
'

test_expect_success 'a work order over 200 KiB: the whole prompt reaches the model on stdin' '
	gemini_repo big &&
	mkdir -p big/work_orders &&
	{
		printf -- "---\nid: WO-BIG\ntitle: A long work order\n---\n" &&
		i=0 &&
		while [ $i -lt 3200 ]; do
			echo "Line $i of the context the agent needs, sixty-four bytes long." &&
			i=$((i + 1)) || return 1
		done
	} >big/work_orders/WO-BIG.md &&
	test $(wc -c <big/work_orders/WO-BIG.md) -gt 204800 &&
	model_mark mark.big &&
	sluice -C big tick >out 2>&1 &&
	run=$(run_of big WO-BIG) &&
	test "$(state_of big $run)" = merged &&
	test $(wc -c <big/.system/runs/$run/attempts/1/prompt.md) -gt 204800 &&
	model_requests_since mark.big >reqs &&
	jq -s -e "map(.body | tostring | contains(\"Line 3199 of the context\")) | any" $(cat reqs) >/dev/null &&
	printf "%s\n" "$FINAL" >summary.want &&
	test_cmp summary.want big/.system/runs/$run/summary.md &&
	sluice -C big audit
'

test_done
