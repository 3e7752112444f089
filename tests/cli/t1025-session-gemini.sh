#!/bin/sh
# session: keep with the real Gemini CLI (pinned, build/agents) against the
# loopback fake model server: the attempt after a failed one runs
# `gemini --resume latest` in the run's worktree, and the CLI sends the
# model the previous attempt's conversation with the new prompt; with
# session: new it starts over.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool python3 node git

AGENTS=${SLUICE_AGENTS_PREFIX:-$SLUICE_SOURCE_DIR/build/agents}
[ -x "$AGENTS/node_modules/.bin/gemini" ] ||
	test_skip_all "no Gemini CLI in $AGENTS (scripts/agents.sh installs it with npm)"
PATH="$AGENTS/node_modules/.bin:$PATH"
export PATH

# As t0962: API key auth against the fake server, nothing that calls home.
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
	--final "gemini wrote hello.txt" >"$MODEL_DIR/log" 2>&1 &
MODEL_PID=$!
test_when_finished "kill $MODEL_PID 2>/dev/null"
# its port, once it listens (or it died: the check below shows its log)
wait_until '[ -s "$MODEL_DIR/port" ] || ! kill -0 $MODEL_PID 2>/dev/null' || :
[ -s "$MODEL_DIR/port" ] || { cat "$MODEL_DIR/log"; echo "the fake model server did not start" >&2; test_finish_; exit 1; }
GEMINI_API_KEY=not-a-real-key
GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$(cat "$MODEL_DIR/port")"
export GEMINI_API_KEY GOOGLE_GEMINI_BASE_URL
unset GEMINI_CLI_TRUST_WORKSPACE GOOGLE_GENAI_USE_VERTEXAI GOOGLE_GENAI_USE_GCA GOOGLE_API_KEY

session_repo() { # DIR SESSION
	test_repo "$1" && (cd "$1" && sluice init >/dev/null) &&
	cat >>"$1/.system/config.yaml" <<-EOF &&
	builder:
	  preset: gemini
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

# The recorded requests that hold attempt 2's prompt and attempt 1's too.
both_prompts() { # WO
	for f in $(grep -l -F "# sluice: build work order $1, attempt 2" "$MODEL_DIR"/requests/*.json); do
		grep -l -F "# sluice: build work order $1, attempt 1" "$f" || true
	done
}

for session in keep new; do
	test_expect_success "session: $session, two attempts with the real CLI" '
		session_repo $session $session &&
		sluice -C $session tick >tick.$session 2>&1 &&
		sluice -C $session tick >>tick.$session 2>&1 &&
		run=$(run_of $session WO-$session) &&
		test "$(state_of $session $run)" = failed &&
		grep "^==== sluice: attempt 2" $session/.system/runs/$run/builder.log >header2 &&
		test_grep "r=.--resume latest." header2 &&
		grep -l -F "# sluice: build work order WO-$session, attempt 2" "$MODEL_DIR"/requests/*.json >asked &&
		test -s asked
	'
done

test_expect_success 'session: keep: attempt 2 sent the model attempt 1 conversation too' '
	both_prompts WO-keep >keep.both &&
	test -s keep.both
'

test_expect_success 'session: new: attempt 2 started over' '
	both_prompts WO-new >new.both &&
	test ! -s new.both
'

test_done
