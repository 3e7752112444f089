#!/bin/sh
# The claude-code preset with the real Claude Code CLI (installed by
# scripts/agents.sh into build/agents) against tests/agents/fake_model.py
# (tests/agents/anthropic.py: the Messages API with SSE) on loopback: the
# model writes a file with the Write tool, runs the gate, `git status`, and
# two commands outside the allow-list (refused), then answers. A work order
# goes from the inbox to merged through the HTTP reviewer, a 200 KiB prompt
# works, the final answer is the summary the reviewer gets, the reviewer
# token is not in the CLI's environment, and the CLI's --help still has
# every flag the preset uses.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool python3 jq node git

AGENTS_BIN=${SLUICE_AGENTS_PREFIX:-${SLUICE_SOURCE_DIR:?}/build/agents}/node_modules/.bin
[ -x "$AGENTS_BIN/claude" ] ||
	test_skip_all "Claude Code is not installed in $AGENTS_BIN (scripts/agents.sh installs it; it needs node and npm)"
PATH="$AGENTS_BIN:$PATH"

# The CLI's own files in a HOME of the test's, never the real one; no
# traffic but the model's (telemetry, update checks, the MCP registry and
# bootstrap calls to api.anthropic.com are "non-essential").
HOME="$TRASH/home"
mkdir -p "$HOME"
CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
ANTHROPIC_API_KEY=fake-key-for-the-loopback-model
TOKEN="reviewer-token-$$-must-not-reach-the-agent"
REVIEW_TOKEN=$TOKEN
export HOME CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC ANTHROPIC_API_KEY REVIEW_TOKEN PATH
unset ANTHROPIC_AUTH_TOKEN ANTHROPIC_MODEL ANTHROPIC_CUSTOM_HEADERS CLAUDE_CONFIG_DIR

# The gate, as a whole and its first part alone (Claude Code matches a
# command part by part; a rule for the whole of this one, parentheses in a
# part, matched nothing), git status, and two commands the allow-list does
# not hold.
GATE="python3 check_hello.py '(by the agent)' && test -s hello.txt"
FAKE_MODEL_BASH="$GATE
python3 check_hello.py '(by the agent)'
git status --short
python3 -c \"open('refused.txt', 'w')\"
git commit -q --allow-empty -m refused-commit"
export FAKE_MODEL_BASH

MODEL_DIR="$TRASH/model"
mkdir -p "$MODEL_DIR/requests"
python3 "$SLUICE_SOURCE_DIR/tests/agents/fake_model.py" --port 0 --port-file "$MODEL_DIR/port" \
	--record "$MODEL_DIR/requests" --edit "hello.txt=hello from claude" \
	--final "FINAL ANSWER: claude wrote hello.txt" --secret "$TOKEN" >"$MODEL_DIR/log" 2>&1 &
MODEL_PID=$!
test_when_finished "kill $MODEL_PID 2>/dev/null"
# its port, once it listens (or it died: the check below shows its log)
wait_until '[ -s "$MODEL_DIR/port" ] || ! kill -0 $MODEL_PID 2>/dev/null' || :
[ -s "$MODEL_DIR/port" ] || { echo "the fake model server did not start:" >&2; cat "$MODEL_DIR/log" >&2; exit 1; }
ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$MODEL_DIR/port")"
export ANTHROPIC_BASE_URL

echo "{}" >"$TRASH/script.json"
start_reviewer "$TRASH/script.json" || exit 1

# The newest recorded request that holds the result of tool call ID.
tool_result() { # ID
	for f in $(ls -r "$MODEL_DIR"/requests/*.json); do
		jq -e --arg id "$1" '[.body.messages[]?.content | arrays | .[]
			| select(.type? == "tool_result" and .tool_use_id == $id)] | first // empty' \
			"$f" && return 0
	done
	return 1
}

# The tool call ID ran (its result is no error and holds PATTERN).
tool_ran() { # ID PATTERN
	tool_result "$1" >"$1.json" &&
	jq -e --arg p "$2" ".is_error != true and (.content | tostring | test(\$p))" "$1.json" >/dev/null ||
	{ echo "$1 did not run:" >&2; cat "$1.json" >&2; return 1; }
}

# The tool call ID was refused by the CLI's permissions.
tool_refused() { # ID
	tool_result "$1" >"$1.json" &&
	jq -e ".is_error == true and (.content | tostring | test(\"requires approval\"))" "$1.json" >/dev/null ||
	{ echo "$1 was not refused:" >&2; cat "$1.json" >&2; return 1; }
}

test_expect_success 'setup: a repository with the claude-code preset, a gate, the HTTP reviewer' '
	test_repo repo &&
	cat >repo/check_hello.py <<-\EOF &&
	import sys
	if open("hello.txt").read() != "hello from claude\n":
	    sys.exit("hello.txt is not what the agent was to write")
	print("gate-ok: hello.txt")
	EOF
	git -C repo add check_hello.py && git -C repo commit -q -m "the gate" &&
	(cd repo && sluice init >/dev/null) &&
	cat >>repo/.system/config.yaml <<-EOF &&
	builder:
	  preset: claude-code
	gates:
	  made: [sh, -c, "$GATE"]
	reviewer:
	  mode: http
	  protocol: sluice
	  url: $REVIEWER_URL
	  token_env: REVIEW_TOKEN
	EOF
	sluice -C repo check
'

test_expect_success 'a work order goes from the inbox to merged with the real CLI' '
	wo repo WO-1 &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo WO-1) && echo $run >run1 &&
	test "$(state_of repo $run)" = merged &&
	git -C repo show main:hello.txt >hello && echo "hello from claude" >want && test_cmp want hello &&
	sluice -C repo audit
'

test_expect_success 'the CLI talked to the fake model: Messages API, streamed, with its Write tool' '
	ls "$MODEL_DIR"/requests/*.json >reqs && test -s reqs &&
	jq -r "select(.method == \"POST\") | .path" "$MODEL_DIR"/requests/*.json >paths &&
	test_grep "^/v1/messages" paths &&
	jq -e "select(.body.tools) | .body.stream == true" "$MODEL_DIR"/requests/*.json >/dev/null &&
	tool_result toolu_fake_write >w && jq -e ".content | test(\"hello.txt\")" w
'

test_expect_success 'the gate and git status ran (the allow-list), commands outside it were refused' '
	tool_ran toolu_fake_bash_0 gate-ok &&
	tool_ran toolu_fake_bash_1 gate-ok &&
	tool_ran toolu_fake_bash_2 hello.txt &&
	tool_refused toolu_fake_bash_3 &&
	tool_refused toolu_fake_bash_4 &&
	! git -C repo cat-file -e main:refused.txt 2>/dev/null &&
	git -C repo log --format=%s main >log && test_grep -v refused-commit log
'

test_expect_success 'the final answer is the summary: in the review request and in show' '
	run=$(cat run1) &&
	test_grep "FINAL ANSWER: claude wrote hello.txt" repo/.system/runs/$run/summary.md &&
	req=$(grep -l "$run" "$REVIEWER_DIR"/requests/*.body | head -n 1) && test -n "$req" &&
	jq -e ".builder_summary | test(\"FINAL ANSWER: claude wrote hello.txt\")" $req &&
	sluice -C repo show $run >show.out &&
	test_grep "FINAL ANSWER: claude wrote hello.txt" show.out
'

test_expect_success 'what the CLI reported in its JSON result is the attempt.s usage' '
	run=$(cat run1) &&
	res=repo/.system/runs/$run/claude-result.json &&
	jq -e ".type == \"result\"" $res >/dev/null &&
	jq -c "{input_tokens: .usage.input_tokens, output_tokens: .usage.output_tokens, cache_read_tokens: .usage.cache_read_input_tokens, cache_write_tokens: .usage.cache_creation_input_tokens, cost_usd: .total_cost_usd, model: (.modelUsage | to_entries | max_by(.value.costUSD) | .key)}" $res >want.usage &&
	sluice -C repo show --json $run >show.json &&
	jq -c ".usage.rows[] | select(.role == \"builder\") | {input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, model}" show.json >got.usage &&
	test_cmp want.usage got.usage &&
	jq -e ".input_tokens > 0 and .cost_usd > 0" got.usage >/dev/null
'

test_expect_success 'the builder log shows no permission or trust refusal' '
	run=$(cat run1) &&
	log=repo/.system/runs/$run/builder.log &&
	test -s $log &&
	test_grep "FINAL ANSWER" $log &&
	test_grep -v -i "requires approval" $log &&
	test_grep -v -i "denied" $log &&
	test_grep -v -i "cannot be used with root" $log &&
	test_grep -v -i "trust" $log
'

test_expect_success 'a 200 KiB work order: its prompt reaches the model on standard input, merged' '
	mkdir -p repo/work_orders &&
	{
		printf -- "---\nid: WO-BIG\ntitle: A long work order\n---\n" &&
		i=0 &&
		while [ $i -lt 3200 ]; do
			echo "Line $i of the context the agent needs, sixty-four bytes long." &&
			i=$((i + 1)) || return 1
		done
	} >repo/work_orders/WO-BIG.md &&
	test $(wc -c <repo/work_orders/WO-BIG.md) -gt 204800 &&
	git -C repo rm -q hello.txt && git -C repo commit -q -m "hello.txt goes, the agent writes it again" &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo WO-BIG) &&
	test "$(state_of repo $run)" = merged &&
	grep -l "Line 3199 of the context" "$MODEL_DIR"/requests/*.json >big && test -s big &&
	sluice -C repo audit
'

# A claude that says its arguments (one per line, in claude.args), then runs the real one.
mkdir -p "$TRASH/shim"
cat >"$TRASH/shim/claude" <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$TRASH/claude.args"
exec "$AGENTS_BIN/claude" "\$@"
EOF
chmod +x "$TRASH/shim/claude"

test_expect_success 'a run budget in dollars: the CLI gets what is left as --max-budget-usd' '
	wo repo WO-BUDGET "budget: {usd: 2.50}" &&
	git -C repo rm -q hello.txt && git -C repo commit -q -m "hello.txt goes again" &&
	PATH="$TRASH/shim:$PATH" sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo WO-BUDGET) &&
	test "$(state_of repo $run)" = merged &&
	grep -A1 -x -e "--max-budget-usd" claude.args >budget.args &&
	printf "%s\n" --max-budget-usd 2.5000 >want.args &&
	test_cmp want.args budget.args
'

test_expect_success 'no budget: no --max-budget-usd, even with SLUICE_BUDGET_USD given to sluice' '
	wo repo WO-FREE &&
	git -C repo rm -q hello.txt && git -C repo commit -q -m "hello.txt goes once more" &&
	rm -f claude.args &&
	SLUICE_BUDGET_USD=9 PATH="$TRASH/shim:$PATH" sluice -C repo tick >out 2>&1 &&
	test "$(state_of repo "$(run_of repo WO-FREE)")" = merged &&
	test -s claude.args &&
	test_grep -v -e "--max-budget-usd" claude.args
'

test_expect_success 'a budget smaller than one turn: the CLI stops itself, the run does not merge, its spend is kept' '
	wo repo WO-POOR "budget: {usd: 0.0001}" &&
	git -C repo rm -q hello.txt && git -C repo commit -q -m "hello.txt goes for the poor one" &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo WO-POOR) &&
	test "$(state_of repo $run)" = failed &&
	jq -r .subtype repo/.system/runs/$run/claude-result.json >subtype &&
	test_grep budget subtype &&
	sluice -C repo show --json $run >show.json &&
	jq -e "[.usage.rows[] | select(.role == \"builder\") | .cost_usd] | length == 1 and .[0] > 0.0001" show.json >/dev/null &&
	! git -C repo cat-file -e main:hello.txt 2>/dev/null
'

test_expect_success 'the reviewer token is not in the environment of the builder or the CLI' '
	jq -r ".processes[]? | select(.cmdline | test(\"claude\")) | .pid" "$MODEL_DIR"/requests/*.json >pids &&
	test -s pids &&
	jq -e -s "[.[].processes[]?] | length > 0 and all(.has_secret == false)" \
		"$MODEL_DIR"/requests/*.json >/dev/null
'

test_expect_success 'the --help snapshot is what the installed CLI prints, with every flag of the preset' '
	claude --help >help.now &&
	test_cmp "$SLUICE_SOURCE_DIR/fixtures/agents/claude.help" help.now &&
	sed -n "/{\"claude-code\",/,/\"},\$/p" "$SLUICE_SOURCE_DIR/src/core/config_template.c" >preset &&
	grep -o -e "--[a-zA-Z][a-zA-Z-]*" preset | sort -u >flags &&
	grep -qx -e "--allowedTools" flags &&
	test_grep "claude -p " preset && grep -q "^  -p, --print " help.now &&
	while read -r flag; do
		grep -q -e "^  .*$flag[ ,]" help.now || { echo "$flag not in claude --help" >&2; return 1; }
	done <flags &&
	grep -q "choices: \"text\"" help.now &&
	grep -q "choices: \"acceptEdits\"" help.now
'

test_done
