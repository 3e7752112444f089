#!/usr/bin/env bash
# The whole sluice flow on a sample repository, from nothing:
#   work orders dropped into work_orders/, `sluice tick` builds each in its own
#   worktree with a (scripted) agent, gates run, a reviewer answers over HTTP on
#   loopback, approved runs merge, a conflict is resolved by the agent and
#   re-reviewed, one conflict is left for a person, who resolves it by the
#   steps `sluice show` prints, a person asks for changes once as the manual
#   reviewer, the watch finds the landing that broke a slow suite and reverts
#   it through the train (its work order gets a fix-up, which lands), and
#   `sluice audit` proves that what was reviewed is what was merged. It ends with `sluice cost`: what
#   each work order's attempts and reviews cost, as the agents reported it
#   (the scripted agent writes $SLUICE_USAGE_FILE; the claude-code preset
#   writes what Claude Code's JSON result says).
#
#   ./scripts/demo.sh            builds sluice if needed, runs the tour
#   DEMO_DIR=/some/where ./scripts/demo.sh   keep the sample repository there
#   DEMO_SERVE=0 ./scripts/demo.sh   do not leave `sluice serve` running at the end
#   DEMO_BUILDER=claude-code ./scripts/demo.sh   the real Claude Code CLI
#       (scripts/agents.sh installs it into build/agents) as the builder, with
#       `builder.preset: claude-code`, talking to a fake model on loopback
#       (tests/agents/fake_model.py) that answers with the tool calls doing
#       what each work order's ```agent block says
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
build=${SLUICE_BUILD:-$src/build/demo}

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

step "installing what is missing and building sluice"
./scripts/deps.sh
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target sluice fake-reviewer >/dev/null
sluice_bin="$build/sluice"
sluice() { "$sluice_bin" "$@"; }

demo=${DEMO_DIR:-$(mktemp -d /tmp/sluice-demo.XXXXXX)}
mkdir -p "$demo"
repo="$demo/repo"
rm -rf "$repo" "$demo/reviewer"
mkdir -p "$demo/reviewer/requests"
reviewer_pid=""
model_pid=""
cleanup() {
	[ -n "$reviewer_pid" ] && kill "$reviewer_pid" 2>/dev/null
	[ -n "$model_pid" ] && kill "$model_pid" 2>/dev/null
	true
}
trap cleanup EXIT

step "a sample repository: $repo"
export GIT_AUTHOR_NAME="Demo User" GIT_AUTHOR_EMAIL="demo@example.com"
export GIT_COMMITTER_NAME="Demo User" GIT_COMMITTER_EMAIL="demo@example.com"
git init -q -b main "$repo"
cd "$repo"
cat >greet.sh <<'EOS'
#!/bin/sh
echo "hello"
EOS
printf '%s\n' "# Settings" "color = blue" "size = medium" "speed = slow" >settings.txt
printf '%s\n' "# Changelog" "" "- first release" >CHANGELOG.md
mkdir tests
printf '%s\n' '#!/bin/sh' 'for t in tests/*.sh; do sh "$t" || { echo "test.sh: $t failed"; exit 1; }; done' >test.sh
printf '%s\n' 'sh greet.sh | grep -q hello' >tests/greet.sh
git add . && git commit -q -m "sample project"
echo "uncommitted notes of the user" >NOTES.local   # the user's own work: sluice never touches it

step "sluice init"
run sluice init
cat >>.system/config.yaml <<EOC

# --- added by the demo ---
builder:
  BUILDER_LINE
  timeout: 2m
gates:
  test: [sh, test.sh]
retry:
  - not: gate.review
  - exit: 3
reviewer:
  mode: http
  protocol: sluice
  url: http://127.0.0.1:PORT/review
  token_env: DEMO_REVIEWER_TOKEN
  timeout: 30s
merge:
  resolve_attempts: 1
EOC

case "${DEMO_BUILDER:-script}" in
script)
	sed -i "s|BUILDER_LINE|command: [sh, $src/fixtures/demo/agent.sh]|" .system/config.yaml ;;
claude-code)
	step "the builder: the real Claude Code CLI, against a fake model on loopback"
	agents=${SLUICE_AGENTS_PREFIX:-$src/build/agents}/node_modules/.bin
	[ -x "$agents/claude" ] || { echo "demo: no claude in $agents (run ./scripts/agents.sh)" >&2; exit 1; }
	mkdir -p "$demo/model/requests" "$demo/home"
	FAKE_MODEL_DEMO=1 python3 "$src/tests/agents/fake_model.py" --port 0 \
		--port-file "$demo/model/port" --record "$demo/model/requests" >"$demo/model/log" 2>&1 &
	model_pid=$!
	for _ in $(seq 100); do [ -s "$demo/model/port" ] && break; sleep 0.05; done
	export PATH="$agents:$PATH" HOME="$demo/home" CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
	export ANTHROPIC_API_KEY=fake-key-for-the-loopback-model
	export ANTHROPIC_BASE_URL="http://127.0.0.1:$(cat "$demo/model/port")"
	sed -i "s|BUILDER_LINE|preset: claude-code|" .system/config.yaml
	echo "claude $(claude --version) with its model at $ANTHROPIC_BASE_URL" ;;
*)
	echo "demo: DEMO_BUILDER is 'script' or 'claude-code'" >&2; exit 2 ;;
esac

step "a reviewer agent over HTTP on loopback (tests/reviewer/fake_reviewer.c)"
cat >"$demo/reviewer/script.json" <<'EOJ'
{
  "WO-101": [{"verdict": "approve", "comments": "Fine.",
              "usage": {"input_tokens": 2400, "output_tokens": 60, "cost_usd": 0.0081,
                        "model": "demo-reviewer"}}],
  "WO-102": [{"verdict": "request_changes", "comments": "Also say hello in French."},
             {"verdict": "approve", "comments": "Both greetings are there."}],
  "WO-103": [{"delay_ms": 1500, "verdict": "approve", "comments": "Looks right."}],
  "WO-105": [{"delay_ms": 1500, "verdict": "approve", "comments": "Looks right."}]
}
EOJ
"$build/tests/fake-reviewer" --port 0 --port-file "$demo/reviewer/port" \
	--record "$demo/reviewer/requests" --script "$demo/reviewer/script.json" \
	--max-seconds 600 >"$demo/reviewer/log" 2>&1 &
reviewer_pid=$!
for _ in $(seq 100); do [ -s "$demo/reviewer/port" ] && break; sleep 0.05; done
port=$(cat "$demo/reviewer/port")
sed -i "s/PORT/$port/" .system/config.yaml
export DEMO_REVIEWER_TOKEN="demo-secret-token-$$"
echo "reviewer listening on 127.0.0.1:$port (bearer token in \$DEMO_REVIEWER_TOKEN)"

step "dropping work orders into work_orders/"
mkdir -p work_orders
wo() { # ID PRIORITY TITLE AGENT-SCRIPT [RESOLVE-SCRIPT] [extra front matter]
	{
		echo "---"
		echo "id: $1"
		echo "title: $3"
		echo "priority: $2"
		[ -n "${6:-}" ] && printf '%s\n' "$6"
		echo "acceptance_criteria:"
		echo "  - $3"
		echo "---"
		echo "$3."
		echo
		echo '```agent'
		printf '%s\n' "$4"
		echo '```'
		if [ -n "${5:-}" ]; then
			echo
			echo '```resolve'
			printf '%s\n' "$5"
			echo '```'
		fi
	} >"work_orders/$1.md"
	echo "  work_orders/$1.md: $3"
}
keep_both="sh $src/fixtures/builders/resolve.sh"
wo WO-101 2 "Add a README" 'printf "%s\n" "# Demo" "A sample project run by sluice." >README.md'
wo WO-102 2 "Greet in more languages" \
	'if grep -q "not: gate.review" "$SLUICE_PROMPT_FILE" || [ "$SLUICE_ATTEMPT" -gt 1 ]; then echo "echo bonjour" >>greet.sh; else echo "echo hola" >>greet.sh; fi'
wo WO-103 1 "Make the color green" 'sed -i "s/^color = .*/color = green/" settings.txt' "$keep_both"
wo WO-104 1 "Make the color red" 'sed -i "s/^color = .*/color = red/" settings.txt'
wo WO-105 1 "Log the speed change in the changelog" 'echo "- speed is now fast" >>CHANGELOG.md'
wo WO-106 1 "Log the size change in the changelog" 'echo "- size is now large" >>CHANGELOG.md'
wo WO-107 3 "Document the settings" 'printf "%s\n" "" "See settings.txt." >>README.md' "" \
	"depends_on: [WO-101]"
# Two work orders that each pass their gate but break main together: WO-108 renames
# greet.sh, WO-109 adds a test that calls it by its old name. Their merge is textually
# clean; the merge train tests it before main moves, and the later car's agent resolves
# the semantic conflict. (Each waits, at most 20 s, until the other started, so that
# both are built on the same main.)
meet='touch "$SLUICE_RUN_DIR/../started-$SLUICE_WORK_ORDER_ID"; i=0; while [ $i -lt 200 ] && [ "$(ls "$SLUICE_RUN_DIR"/../started-WO-10[89] 2>/dev/null | wc -l)" -lt 2 ]; do sleep 0.1; i=$((i + 1)); done'
rename='[ ! -f greet.sh ] || { git mv greet.sh hello.sh; sed -i s/greet.sh/hello.sh/g tests/*.sh; }'
call_hello='[ ! -f hello.sh ] || sed -i s/greet.sh/hello.sh/g tests/*.sh'
wo WO-108 3 "Rename greet.sh to hello.sh" "$meet
$rename" "$call_hello" "depends_on: [WO-101]"
wo WO-109 3 "Test that the greeting is one word" "$meet
printf '%s\n' 'sh greet.sh | head -n 1 | grep -qx hello' >tests/one_word.sh" \
	"$call_hello" "depends_on: [WO-101]"

step "sluice check and sluice queue --explain"
run sluice check
run sluice queue --explain

step "sluice tick (what cron runs every minute)"
run sluice tick --jobs 4

step "another tick (a later cron minute)"
run sluice tick --jobs 4

step "the merge train: each merge is tested before main moves; a semantic conflict resolved"
sluice log | grep -E "car [0-9]+ of [2-9]|semantic conflict|WO-10[89]" | grep -v " wo " |
	cut -c 1-200 | head -n 16 || true

step "where things stand"
run sluice runs
run sluice status

conflict=$(sluice runs --state merge_conflict | awk 'NR == 1 { print $1 }')
if [ -z "$conflict" ]; then
	echo "demo: no conflict was left for a person" >&2
	exit 1
fi
step "one conflict was left for a person: sluice show $conflict"
run sluice show "$conflict"

step "the person follows the steps sluice show printed, as printed"
# The "next:" line: cd .../worktree && git merge main; fix the conflicted
# files; git commit -a --no-edit; then: sluice retry RUN
next=$(sluice show "$conflict" | sed -n 's/^next: //p')
echo "next: $next"
steps=$(printf '%s\n' "$next" | tr ';' '\n' | sed -e 's/^ *//' -e 's/^then: //' -e 's/, or .*//' |
	grep -E '^(cd |git |sluice )')
merge_step=$(printf '%s\n' "$steps" | sed -n 1p)
commit_step=$(printf '%s\n' "$steps" | sed -n 2p)
retry_step=$(printf '%s\n' "$steps" | sed -n 3p)
wt=$(printf '%s\n' "$merge_step" | sed -e 's/^cd //' -e 's/ &&.*//')
printf '$ %s\n' "$merge_step"
if (eval "$merge_step"); then
	echo "demo: the merge of the printed steps did not stop at the conflict" >&2
	exit 1
fi
echo "(git stopped at the conflict, as it should; the person keeps both sides of each)"
(cd "$wt" && git diff --name-only --diff-filter=U) | while read -r f; do
	printf '$ %s\n' "edit $f: keep both sides, drop the markers"
	sed -i -e '/^<<<<<<< /d' -e '/^=======$/d' -e '/^>>>>>>> /d' "$wt/$f"
done
printf '$ %s\n' "$commit_step"
(cd "$wt" && eval "$commit_step")
printf '$ %s\n' "$retry_step"
eval "$retry_step"
run sluice tick
run sluice status "$conflict"

step "a person reviews: the manual reviewer, and one request for changes"
sed -i 's/^  mode: http$/  mode: manual/' .system/config.yaml
wo WO-110 2 "Add a goodbye script" \
	'p=Fren; if grep -q "${p}ch too" "$SLUICE_PROMPT_FILE"; then printf "%s\n" "#!/bin/sh" "echo goodbye" "echo au revoir" >bye.sh; else printf "%s\n" "#!/bin/sh" "echo goodbye" >bye.sh; fi'
run sluice tick
run sluice diff --no-pager WO-110
run sluice request-changes WO-110 -m "Say goodbye in French too."
run sluice tick
run sluice diff --no-pager WO-110
run sluice approve WO-110 -m "Both goodbyes are there."
run sluice tick

step "the watch: a slow suite on main's tip after landings (docs/watch.md)"
# The end-to-end suite is too slow for the merge train: it runs on the tip,
# from cron (sluice watch) or every N landings (watch.every). A red one is
# bisected to the landing that broke it, which is reverted through the train,
# and its work order gets a fix-up that says what went wrong.
sed -i 's/^  mode: manual$/  mode: http/' .system/config.yaml
cat >"$demo/e2e.sh" <<'EOS'
echo "e2e: the end-to-end suite on $SLUICE_COMMIT"
if grep -qx "speed = ludicrous" settings.txt; then
	echo "e2e: FAIL: at ludicrous speed the greeting is garbled"
	exit 1
fi
echo "e2e: ok"
EOS
cat >>.system/config.yaml <<EOC
watch:
  gates:
    e2e: [sh, $demo/e2e.sh]
  revert_review: auto
EOC
run sluice watch
# The agent of WO-120 does what it is asked; given what went wrong, it does better.
wo WO-120 2 "Make it faster" \
	'if grep -q "^## What went wrong" "$SLUICE_PROMPT_FILE"; then sed -i "s/^speed = .*/speed = fast/" settings.txt; else sed -i "s/^speed = .*/speed = ludicrous/" settings.txt; fi'
wo WO-121 2 "Note the new speed in the changelog" 'echo "- faster" >>CHANGELOG.md'
run sluice tick
step "the watch goes red: its bisection names WO-120's landing, a revert and a fix-up go into the inbox"
run sluice watch || echo "(exit $?: a watch gate is red)"
run sed -n '1,12p' work_orders/WO-120-fix.md
step "a tick: the revert lands through the train (approved as an exact revert, e2e on its car), then the fix-up"
run sluice tick
run sluice watch
run sluice show "$(sluice runs --wo WO-120 | awk 'NR == 1 { print $1 }')" | grep "^watch:" || true
run sluice status

step "the history of main: one merge commit per work order, with trailers"
run git log --oneline --graph -n 20 main
run git log -1 --format=%B main

step "the user's uncommitted file is untouched"
run cat NOTES.local

step "sluice audit: what was reviewed is what was merged"
run sluice audit

step "sluice report"
run sluice report --html "$demo/report.html" --dot "$demo/graph.dot"
echo "the report page: $demo/report.html"

if grep -rqs "$DEMO_REVIEWER_TOKEN" .system "$demo/report.html"; then
	echo "demo: the reviewer token leaked into an artifact" >&2
	exit 1
fi
step "sluice serve: the review desk in the browser"
# Left running (DEMO_SERVE=0: not started), in its own session with its
# output in a file, so that nothing waits on it; `kill` stops it.
if [ "${DEMO_SERVE:-1}" = 1 ]; then
	setsid "$sluice_bin" serve >"$demo/serve.log" 2>&1 </dev/null &
	serve_pid=$!
	for _ in $(seq 600); do grep -q "http://" "$demo/serve.log" && break; sleep 0.1; done
	if url=$(grep -o "http://[^ ]*" "$demo/serve.log"); then
		echo "sluice serve (pid $serve_pid) is at $url"
		echo "(open it in a browser; 'kill $serve_pid' stops it)"
	else
		cat "$demo/serve.log" >&2
		echo "demo: sluice serve did not start" >&2
		exit 1
	fi
fi
step "sluice cost: what the agents cost (docs/budgets.md)"
run sluice cost
run sluice cost --by agent
step "done: the sample repository is $repo"
