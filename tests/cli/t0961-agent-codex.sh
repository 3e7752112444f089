#!/bin/sh
# The codex preset with the real codex CLI (@openai/codex, pinned in
# scripts/agents.sh, installed into build/agents) against the loopback fake
# model server (tests/agents/fake_model.py, openai_responses.py: the OpenAI
# Responses API with server-sent events): the model writes a file with
# codex's apply_patch tool, then answers with its final text. A work order
# goes from the inbox to merged through `sluice tick` with gates and an HTTP
# reviewer, a 200 KiB prompt works, the final text is the run's summary, the
# reviewer token never reaches the CLI, and a model that tries `git commit`
# (the sandbox keeps the main .git read-only, so it fails) still merges.
# codex --help and codex exec --help are kept in fixtures/agents/: a flag of
# the preset missing there, or a CLI that prints other help, fails.
. "$(dirname "$0")/lib.sh"

AGENTS=${SLUICE_AGENTS_PREFIX:-$SLUICE_SOURCE_DIR/build/agents}
CODEX=$AGENTS/node_modules/.bin/codex
[ -x "$CODEX" ] || test_skip_all "the codex CLI is not installed in $AGENTS (scripts/agents.sh installs it; it needs node and npm)"
test_skip_unless_tool python3 jq

TOKEN="reviewer-token-$$-must-not-reach-codex"
export REVIEW_TOKEN="$TOKEN"
FINAL="codex wrote hello.txt as the work order asked."

# The model server: its requests are recorded in $TRASH/model.
python3 "$SLUICE_SOURCE_DIR/tests/agents/fake_model.py" --port 0 --port-file "$TRASH/model.port" \
	--record "$TRASH/model" --edit "hello.txt=hello from codex" --final "$FINAL" \
	--secret "$TOKEN" >"$TRASH/model.log" 2>&1 &
MODEL_PID=$!
test_when_finished "kill $MODEL_PID 2>/dev/null"
# its port, once it listens (or it died: the check below shows its log)
wait_until '[ -s "$TRASH/model.port" ] || ! kill -0 $MODEL_PID 2>/dev/null' || :
[ -s "$TRASH/model.port" ] || { cat "$TRASH/model.log"; echo "the fake model server did not start" >&2; test_finish_; exit 1; }
MODEL_URL="http://127.0.0.1:$(cat "$TRASH/model.port")/v1"

# codex reads $CODEX_HOME/config.toml (HOME is the trash's): the fake server
# as a Responses provider whose key is in FAKE_MODEL_KEY; gpt-5.5 is a model
# codex has metadata for, so it offers its apply_patch tool. No update check,
# no analytics, no feedback upload, no plugins (without that codex looks up
# api.github.com and chatgpt.com for its plugin marketplace at every start).
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
base_url = "$MODEL_URL"
wire_api = "responses"
env_key = "FAKE_MODEL_KEY"
EOF
PATH="$AGENTS/node_modules/.bin:$PATH"
export PATH

echo "{}" >"$TRASH/review-script.json"
start_reviewer "$TRASH/review-script.json" || exit 1

test_expect_success 'setup: a repository with the codex preset, gates and the HTTP reviewer' '
	test_repo repo && (cd repo && sluice init >/dev/null) &&
	cat >>repo/.system/config.yaml <<-EOF &&
	builder:
	  preset: codex
	  timeout: 5m
	gates:
	  hello: [sh, -c, "grep -qx \"hello from codex\" hello.txt"]
	reviewer:
	  mode: http
	  protocol: sluice
	  url: $REVIEWER_URL
	  token_env: REVIEW_TOKEN
	EOF
	sluice -C repo check
'

# The requests the model got whose body holds TEXT (a file name a line).
model_requests_with() { # TEXT
	grep -lF -- "$1" "$TRASH"/model/*.json
}

test_expect_success 'a work order goes from the inbox to merged with codex; audit clean' '
	wo repo WO-1 &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo WO-1) &&
	test "$(state_of repo $run)" = merged &&
	echo "hello from codex" >expect &&
	git -C repo show main:hello.txt >actual &&
	test_cmp expect actual &&
	sluice -C repo audit &&
	echo $run >run1
'

test_expect_success 'the model was asked over the Responses API, streaming, in the workspace-write sandbox; codex used apply_patch' '
	req=$(model_requests_with "Do the work of WO-1." | head -n 1) && test -n "$req" &&
	jq -e ".method == \"POST\" and .path == \"/v1/responses\" and .body.stream == true" $req >/dev/null &&
	jq -e ".headers[\"x-codex-turn-metadata\"] | fromjson |
		.analytics_enabled == false and .sandbox_mode == \"workspace-write\" and .sandbox != \"none\"" \
		$req >/dev/null &&
	jq -e "[.body.tools[].name] | index(\"apply_patch\")" $req >/dev/null &&
	jq -e "[.body.input[] | select(.type == \"custom_tool_call_output\") |
		.output | contains(\"Success\")] | any" $(model_requests_with "Do the work of WO-1." | tail -n 1) >/dev/null
'

test_expect_success 'its final answer is the summary: in the review request and in sluice show' '
	run=$(cat run1) &&
	test_grep "$FINAL" repo/.system/runs/$run/summary.md &&
	req=$(grep -l "$run" "$REVIEWER_DIR"/requests/*.body | head -n 1) && test -n "$req" &&
	jq -e --arg s "$FINAL" "(.builder_summary | rtrimstr(\"\\n\")) == \$s" $req >/dev/null &&
	sluice -C repo show $run >show.out &&
	test_grep "$FINAL" show.out
'

test_expect_success 'its usage is recorded: the tokens the model reported (two requests of 10 in, 5 out), the model' '
	run=$(cat run1) &&
	sluice -C repo show --json $run |
		jq -c ".usage.rows[] | select(.role == \"builder\") |
			[.input_tokens, .output_tokens, .cache_read_tokens, .cost_usd, .model]" >got &&
	echo "[20,10,0,null,\"gpt-5.5\"]" >want &&
	test_cmp want got &&
	test_grep "^apply_patch: add .*hello.txt$" repo/.system/runs/$run/builder.log
'

test_expect_success 'the reviewer token is not in the environment of codex or the builder' '
	jq -s "[.[].processes[]]" "$TRASH"/model/*.json >procs &&
	jq -e "map(select(.cmdline | test(\"codex\"))) | length > 0" procs >/dev/null &&
	jq -e "map(select(.has_secret)) | length == 0" procs >/dev/null
'

# What codex prints when its sandbox or approval policy stops a tool call.
# shellcheck disable=SC2034 # used in a test body
REFUSED="read-only file system|permission denied|operation not permitted|bwrap:|rejected by|requires approval|approval required|sandbox denied"

test_expect_success 'builder.log: no sandbox, permission or approval refusal' '
	log=repo/.system/runs/$(cat run1)/builder.log &&
	test_grep "apply.patch" $log &&
	if grep -i -E "$REFUSED" $log; then
		echo "a refusal in $log" >&2 && return 1
	fi
'

# The next work orders write hello.txt again: take it out of main.
test_expect_success 'setup: hello.txt leaves main' '
	git -C repo rm -q hello.txt && git -C repo commit -q -m "no hello.txt"
'

test_expect_success 'a 200 KiB work order (its prompt on standard input) is merged' '
	{
		printf -- "---\nid: WO-BIG\ntitle: A long work order\n---\n" &&
		i=0 &&
		while [ $i -lt 3200 ]; do
			echo "Line $i of the context the agent needs, sixty-four bytes long." &&
			i=$((i + 1)) || return 1
		done &&
		echo "Write hello.txt."
	} >repo/work_orders/WO-BIG.md &&
	test $(wc -c <repo/work_orders/WO-BIG.md) -gt 204800 &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo WO-BIG) &&
	test "$(state_of repo $run)" = merged &&
	test_grep "$FINAL" repo/.system/runs/$run/summary.md &&
	model_requests_with "Line 3199 of the context" >reqs &&
	test -s reqs &&
	sluice -C repo audit &&
	git -C repo rm -q hello.txt && git -C repo commit -q -m "no hello.txt again"
'

# Item 5 of issue 13: codex's sandbox keeps the main repository's .git
# read-only, so a commit in a linked worktree fails; the prompt says not to
# commit, and sluice commits what the agent leaves.
test_expect_success 'the model runs git commit: refused by the sandbox, the run still merges' '
	wo repo WO-COMMIT &&
	echo "sluice-fake-model-shell: git add -A && git commit -m \"codex commits\"" \
		>>repo/work_orders/WO-COMMIT.md &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo WO-COMMIT) &&
	test "$(state_of repo $run)" = merged &&
	git -C repo log --format=%s main >subjects &&
	test_grep -v "codex commits" subjects &&
	jq -s -e "[.[].body.input[]? | select(.type == \"function_call_output\") | .output |
		select(contains(\"Read-only file system\"))] | length > 0" \
		$(model_requests_with "Do the work of WO-COMMIT.") >/dev/null &&
	sluice -C repo audit
'

# A self-hosted model is one codex has no metadata for: it warns, offers no
# apply_patch, and the model edits through its shell tool, exec_command.
# (The model stays so for the rest of the script.)
test_expect_success 'a model codex does not know (self-hosted): edits with exec_command, merged' '
	git -C repo rm -q hello.txt && git -C repo commit -q -m "no hello.txt, third time" &&
	sed -i "s/^model = .*/model = \"qwen3-coder-30b\"/" "$CODEX_HOME/config.toml" &&
	wo repo WO-QWEN &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo WO-QWEN) &&
	test "$(state_of repo $run)" = merged &&
	reqs=$(model_requests_with "Do the work of WO-QWEN.") &&
	jq -s -e "[.[].body.tools[].name] | index(\"apply_patch\") == null" $reqs >/dev/null &&
	jq -s -e "[.[].body.input[]? | select(.type == \"function_call\" and .name == \"exec_command\")] |
		length > 0" $reqs >/dev/null &&
	test_grep "$FINAL" repo/.system/runs/$run/summary.md &&
	sluice -C repo audit
'

# The flags the preset gives codex, from the argv builder.log shows.
preset_flags() {
	sed -n 1p "repo/.system/runs/$(cat run1)/builder.log" | grep -o -- " --[a-z][a-z-]*" | sed "s/^ //" | sort -u
}

test_expect_success 'every flag of the preset is in the --help snapshot; the snapshot is what codex prints' '
	preset_flags >flags &&
	grep -qx -- "--output-last-message" flags &&
	grep -qx -- "--sandbox" flags &&
	while read -r f; do
		grep -qe "^ *\(-[a-zA-Z], \)\{0,1\}$f\b" "$FIXTURES/agents/codex-exec.help" ||
		grep -qe "^ *\(-[a-zA-Z], \)\{0,1\}$f\b" "$FIXTURES/agents/codex-exec-resume.help" ||
			{ echo "$f is in neither codex-exec.help nor codex-exec-resume.help" >&2; return 1; }
	done <flags &&
	grep -qx -- "--last" flags &&
	test_grep "^ *--last$" "$FIXTURES/agents/codex-exec-resume.help" &&
	test_grep "sandbox_mode" "$SLUICE_SOURCE_DIR/src/core/config_template.c" &&
	COLUMNS=100 codex exec resume --help </dev/null >resume-help 2>help.err &&
	test_cmp "$FIXTURES/agents/codex-exec-resume.help" resume-help &&
	test_grep "workspace-write" "$FIXTURES/agents/codex-exec.help" &&
	! grep -q -- "--full-auto" "$FIXTURES/agents/codex-exec.help" &&
	test_grep "if \`-\` is used" "$FIXTURES/agents/codex-exec.help" &&
	COLUMNS=100 codex --help </dev/null >help 2>help.err &&
	test_cmp "$FIXTURES/agents/codex.help" help &&
	COLUMNS=100 codex exec --help </dev/null >exec-help 2>help.err &&
	test_cmp "$FIXTURES/agents/codex-exec.help" exec-help
'

test_done
