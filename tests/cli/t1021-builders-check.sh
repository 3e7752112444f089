#!/bin/sh
# `sluice check` on named builders (`builders:`, builder.agent) and the
# retry overrides agent: and session:: every bad input is an error at its
# file:line:col that says what to do; what sluice accepts but changes
# (Gump's safety rules for kept sessions) is a warning.
. "$(dirname "$0")/lib.sh"

# Stand-ins for the programs the configs below name, on PATH: a missing one
# is a warning of its own (t1113), not what this script is about.
mkdir -p "$TRASH/agents"
for t in claude codex gemini aider node my-agent x; do
	printf '#!/bin/sh\nexit 0\n' >"$TRASH/agents/$t" && chmod +x "$TRASH/agents/$t"
done
PATH="$PATH:$TRASH/agents"
export PATH

test_expect_success 'setup' '
	test_repo repo &&
	(cd repo && sluice init >/dev/null)
'

# config BODY: .system/config.yaml is "target: main" and BODY (line 2 on)
config() {
	printf "target: main\n%s\n" "$1" >repo/.system/config.yaml
}

# bad BODY PATTERN: check fails and says PATTERN
bad() {
	config "$1" &&
	test_expect_failure_code 1 sluice -C repo check >out &&
	test_grep "$2" out
}

test_expect_success 'a valid builders map, builder.agent and an agent escalation' '
	config "builder:
  agent: fast
builders:
  fast: {preset: codex}
  strong:
    command: [my-agent, --think]
    env: {MODEL: opus}
    timeout: 1h
  v1.2_x-y: {preset: gemini}
retry:
  - attempt: 2
    agent: strong
    session: new
  - attempt: 3
    agent: claude-code
  - exit: 4" &&
	sluice -C repo check >out &&
	test_grep "^ok:" out &&
	test_grep -v "warning" out
'

test_expect_success 'an unknown agent in a retry entry names the known ones' '
	bad "builders:
  fast: {preset: codex}
retry:
  - attempt: 2
    agent: opus
  - exit: 3" \
	".system/config.yaml:6:12: unknown agent .opus.; known agents: fast (builders:) or claude-code, codex, aider or gemini (presets)"
'

test_expect_success 'an unknown agent with no builders map names the presets' '
	bad "retry:
  - attempt: 2
    agent: claude-opus
  - exit: 3" \
	":4:12: unknown agent .claude-opus.; known agents: claude-code, codex, aider or gemini (presets)"
'

test_expect_success 'session: maybe' '
	bad "retry:
  - attempt: 2
    session: maybe
  - exit: 3" \
	":4:14: .session. in a retry entry must be .new. or .keep., not .maybe."
'

test_expect_success 'agent and builder in the same retry entry' '
	bad "retry:
  - attempt: 2
    agent: codex
    builder: [my-agent]
  - exit: 3" \
	":3:5: a retry entry has both .agent. and .builder.; keep one"
'

test_expect_success 'builders not a map' '
	bad "builders: [fast, strong]" \
	":2:11: .builders. must be a mapping of names to builders"
'

test_expect_success 'an empty builders map' '
	bad "builders: {}" ":2:11: .builders. is empty"
'

test_expect_success 'a builder name with a slash' '
	bad "builders:
  a/b: {preset: codex}" \
	":3:3: builder name .a/b. must be a word of \[A-Za-z0-9_.-\]"
'

test_expect_success 'a builder named like a preset' '
	bad "builders:
  codex: {command: [x]}" \
	":3:3: builder name .codex. is a preset.s name; pick another"
'

test_expect_success 'a named builder with neither or both of command and preset' '
	bad "builders:
  a: {timeout: 5m}" \
	":3:6: .builders.a. needs exactly one of .command. and .preset." &&
	bad "builders:
  a: {command: [x], preset: codex}" \
	"needs exactly one of .command. and .preset."
'

test_expect_success 'a named builder entry that is not a mapping, a bad key, a bad preset' '
	bad "builders:
  a: [x]" ":3:6: .builders.a. must be a mapping" &&
	bad "builders:
  a: {command: [x], log_max: 1MiB}" \
	":3:21: unknown key .log_max. in a named builder; known keys: command, preset, timeout, env" &&
	bad "builders:
  a: {preset: cursor}" \
	":3:15: unknown builders.a.preset .cursor." &&
	bad "builders:
  a: {command: [x], env: {1X: y}}" \
	".builders.a.env. name .1X. is not a variable name"
'

test_expect_success 'builder.agent: unknown, or beside builder.command' '
	bad "builder:
  agent: nope" ":3:10: unknown builder.agent .nope." &&
	bad "builder:
  agent: codex
  command: [x]" ":3:10: builder has both .agent. and .command.; keep one"
'

test_expect_success 'warnings: a kept session and a rule that switches the agent, a reset, aider' '
	config "builders:
  old: {preset: aider}
retry:
  - attempt: 2
    session: keep
  - attempt: 3
    agent: codex
  - attempt: 4
    worktree: reset
  - attempt: 5
    agent: old
    session: new
  - exit: 6" &&
	sluice -C repo check >out &&
	test_grep "^ok:" out &&
	test_grep ":7:1: warning: this retry entry switches the agent without .session: new." out &&
	test_grep ":9:1: warning: .worktree: reset. with .session: keep. (line 5)" out &&
	test_grep ":11:1: warning: .session: keep. but agent .old. (preset aider) cannot resume" out &&
	test_grep -v ":11:1: warning: this retry entry switches" out &&
	test_skip_unless_tool python3 &&
	sluice -C repo check --json >out.json &&
	python3 -c "
import json
d=json.load(open(\"out.json\"))
assert d[\"ok\"] is True and d[\"problems\"] == [], d
assert len(d[\"warnings\"]) == 3, d
"
'

test_expect_success 'no warning without session: keep' '
	config "retry:
  - attempt: 3
    agent: codex
    worktree: reset
  - exit: 6" &&
	sluice -C repo check >out &&
	test_grep -v warning out
'

test_done
