#!/bin/sh
# session: keep with the real Claude Code CLI (pinned, build/agents) against
# the loopback fake model server: the attempt after a failed one runs
# `claude -p --resume <id>` (the id the preset gave attempt 1 with
# --session-id; `-p --continue` of 2.1.100 starts over), and the CLI sends
# the model the previous attempt's conversation (its prompt and the tool
# calls of attempt 1) with the new prompt; with session: new it starts over
# (only the new prompt).
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool python3 jq node git

AGENTS_BIN=${SLUICE_AGENTS_PREFIX:-${SLUICE_SOURCE_DIR:?}/build/agents}/node_modules/.bin
[ -x "$AGENTS_BIN/claude" ] ||
	test_skip_all "Claude Code is not installed in $AGENTS_BIN (scripts/agents.sh installs it; it needs node and npm)"
PATH="$AGENTS_BIN:$PATH"
HOME="$TRASH/home"
mkdir -p "$HOME"
CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
ANTHROPIC_API_KEY=fake-key-for-the-loopback-model
export HOME CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC ANTHROPIC_API_KEY PATH
unset ANTHROPIC_AUTH_TOKEN ANTHROPIC_MODEL ANTHROPIC_CUSTOM_HEADERS CLAUDE_CONFIG_DIR FAKE_MODEL_BASH

MODEL_DIR="$TRASH/model"
mkdir -p "$MODEL_DIR/requests"
python3 "$SLUICE_SOURCE_DIR/tests/agents/fake_model.py" --port 0 --port-file "$MODEL_DIR/port" \
	--record "$MODEL_DIR/requests" --edit "hello.txt=hello from claude" \
	--final "FINAL ANSWER: claude wrote hello.txt" >"$MODEL_DIR/log" 2>&1 &
MODEL_PID=$!
test_when_finished "kill $MODEL_PID 2>/dev/null"
# its port, once it listens (or it died: the check below shows its log)
wait_until '[ -s "$MODEL_DIR/port" ] || ! kill -0 $MODEL_PID 2>/dev/null' || :
[ -s "$MODEL_DIR/port" ] || { echo "the fake model server did not start:" >&2; cat "$MODEL_DIR/log" >&2; exit 1; }
ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$MODEL_DIR/port")"
export ANTHROPIC_BASE_URL

# session_repo DIR SESSION: the claude-code preset, a gate that always
# fails, retry from attempt 2 with SESSION, exit at 2
session_repo() {
	test_repo "$1" && (cd "$1" && sluice init >/dev/null) &&
	cat >>"$1/.system/config.yaml" <<-EOF &&
	builder:
	  preset: claude-code
	  timeout: 5m
	gates:
	  never: [sh, -c, "exit 1"]
	retry:
	  - attempt: 2
	    session: $2
	  - exit: 2
	EOF
	wo "$1" "WO-$2"
}

# The user-message texts of every recorded request whose messages hold
# attempt 2's prompt, one request a line (the texts joined by " | ").
attempt2_requests() { # WO
	for f in "$MODEL_DIR"/requests/*.json; do
		jq -r '[.body.messages[]? | select(.role == "user") | .content
			| if type == "string" then . else ([.[]? | select(.type? == "text") | .text] | join(" ")) end]
			| join(" | ") | gsub("\n"; " ")' "$f"
	done | grep -F "# sluice: build work order $1, attempt 2" || true
}

# holds FILE TEXT: FILE holds TEXT (shown when not)
holds() {
	grep -qF "$2" "$1" && return 0
	echo "$1 does not hold: $2" >&2
	head -c 2000 "$1" >&2
	return 1
}

for session in keep new; do
	test_expect_success "session: $session, two attempts with the real CLI" '
		session_repo $session $session &&
		sluice -C $session tick >tick.$session 2>&1 &&
		sluice -C $session tick >>tick.$session 2>&1 &&
		run=$(run_of $session WO-$session) &&
		test "$(state_of $session $run)" = failed &&
		sluice -C $session show --json $run >show.$session &&
		jq -r ".attempts[] | \"\(.n) \(.agent) \(.session)\"" show.$session >got &&
		if [ $session = keep ]; then s2=keep; else s2=new; fi &&
		printf "%s\n" "1 claude-code new" "2 claude-code $s2" >expect &&
		test_cmp expect got &&
		grep "^==== sluice: attempt 2" $session/.system/runs/$run/builder.log >header2 &&
		test_grep "claude -p \$r" header2 &&
		test_grep "^[0-9a-f-]\{36\}\$" $session/.system/runs/$run/claude-session
	'
done

test_expect_success 'session: keep: attempt 2 sent the model attempt 1 conversation too' '
	attempt2_requests WO-keep >keep.req &&
	test -s keep.req &&
	holds keep.req "# sluice: build work order WO-keep, attempt 1"
'

test_expect_success 'session: new: attempt 2 started over (no attempt 1 prompt)' '
	attempt2_requests WO-new >new.req &&
	test -s new.req &&
	! holds new.req "# sluice: build work order WO-new, attempt 1"
'

test_done
