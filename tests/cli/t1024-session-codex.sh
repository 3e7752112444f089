#!/bin/sh
# session: keep with the real codex CLI (pinned, build/agents) against the
# loopback fake model server (Responses API): the attempt after a failed one
# runs `codex exec resume --last` in the run's worktree, and codex sends the
# model the previous attempt's conversation with the new prompt; with
# session: new it starts over.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool python3 git

AGENTS=${SLUICE_AGENTS_PREFIX:-$SLUICE_SOURCE_DIR/build/agents}
[ -x "$AGENTS/node_modules/.bin/codex" ] ||
	test_skip_all "the codex CLI is not installed in $AGENTS (scripts/agents.sh installs it; it needs node and npm)"
PATH="$AGENTS/node_modules/.bin:$PATH"
export PATH

MODEL_DIR="$TRASH/model"
mkdir -p "$MODEL_DIR/requests"
python3 "$SLUICE_SOURCE_DIR/tests/agents/fake_model.py" --port 0 --port-file "$MODEL_DIR/port" \
	--record "$MODEL_DIR/requests" --edit "hello.txt=hello from codex" \
	--final "codex wrote hello.txt" >"$MODEL_DIR/log" 2>&1 &
MODEL_PID=$!
test_when_finished "kill $MODEL_PID 2>/dev/null"
# its port, once it listens (or it died: the check below shows its log)
wait_until '[ -s "$MODEL_DIR/port" ] || ! kill -0 $MODEL_PID 2>/dev/null' || :
[ -s "$MODEL_DIR/port" ] || { cat "$MODEL_DIR/log"; echo "the fake model server did not start" >&2; test_finish_; exit 1; }

# As t0961: the fake server as a Responses provider, nothing else reached.
export CODEX_HOME="$HOME/.codex" FAKE_MODEL_KEY=dummy-key
mkdir -p "$CODEX_HOME"
cat >"$CODEX_HOME/config.toml" <<EOF
model = "gpt-5.5"
model_provider = "fake"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[features]
plugins = false

[model_providers.fake]
name = "sluice fake model"
base_url = "http://127.0.0.1:$(cat "$MODEL_DIR/port")/v1"
wire_api = "responses"
env_key = "FAKE_MODEL_KEY"
EOF

session_repo() { # DIR SESSION
	test_repo "$1" && (cd "$1" && sluice init >/dev/null) &&
	cat >>"$1/.system/config.yaml" <<-EOF &&
	builder:
	  preset: codex
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
		test_grep "set -- exec resume --last" header2 &&
		grep -l -F "# sluice: build work order WO-$session, attempt 2" "$MODEL_DIR"/requests/*.json >asked &&
		test -s asked
	'
done

test_expect_success 'session: keep: attempt 2 sent the model attempt 1 conversation too' '
	both_prompts WO-keep >keep.both &&
	test -s keep.both
'

# codex reports the thread's running total, which a resumed session carries
# on: each attempt's row is what its own requests used (the fake model
# reports 10 tokens in and 5 out a request), not the thread's total.
test_expect_success 'session: keep: each attempt.s usage is its own requests, not the thread.s total' '
	run=$(run_of keep WO-keep) &&
	for n in 1 2; do
		# the requests of attempt n: those without attempt n+1 (whose requests carry n too)
		reqs=$(grep -l -F "# sluice: build work order WO-keep, attempt $n" "$MODEL_DIR"/requests/*.json |
			xargs grep -L -F "# sluice: build work order WO-keep, attempt $((n + 1))" | wc -l) &&
		test "$reqs" -gt 0 &&
		sluice -C keep show --json $run |
			jq -c ".usage.rows[] | select(.role == \"builder\" and .attempt == $n) | [.input_tokens, .output_tokens]" >got &&
		echo "[$((reqs * 10)),$((reqs * 5))]" >want &&
		test_cmp want got || return 1
	done
'

test_expect_success 'session: new: attempt 2 started over' '
	both_prompts WO-new >new.both &&
	test ! -s new.both
'

test_done
