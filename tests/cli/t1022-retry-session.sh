#!/bin/sh
# session: new | keep. With keep (sticky) the next attempt resumes the
# agent CLI's own session: sluice sets SLUICE_SESSION=keep and each preset
# adds its CLI's resume flags (claude --resume <id>, codex exec resume --last,
# gemini --resume latest), checked here with stand-ins on PATH that record
# their argv. Gump's safety rules: a rule that switches the agent forces a
# new session (a warning in the event log), worktree: reset with a kept
# session warns, aider cannot resume (new sessions, a warning). A command of
# the user's is told by SLUICE_SESSION. The flags are in the pinned CLIs'
# --help snapshots (fixtures/agents/).
. "$(dirname "$0")/lib.sh"

BIN="$TRASH/bin"
mkdir -p "$BIN"
for cli in claude codex gemini aider; do
	cat >"$BIN/$cli" <<-EOF
	#!/bin/sh
	echo "\$SLUICE_ATTEMPT $cli \$*" >>"$TRASH/calls"
	cat >/dev/null
	echo "\$SLUICE_ATTEMPT" >>work.txt
	[ $cli != gemini ] || echo '{"response": "done"}'
	exit 0
	EOF
	chmod +x "$BIN/$cli"
done
PATH="$BIN:$PATH"
export PATH

# repo DIR RETRY-LINES...: a repository whose gate passes from attempt N (GATE_AT)
session_repo() {
	_d=$1
	shift
	test_repo "$_d" && (cd "$_d" && sluice init >/dev/null) &&
	cat >>"$_d/.system/config.yaml" <<-EOF &&
	builder:
	  agent: ${AGENT:-claude-code}
	builders:
	  mine:
	    command: [sh, -c, 'echo "\$SLUICE_ATTEMPT mine \$SLUICE_SESSION" >>"$TRASH/calls"; echo \$SLUICE_ATTEMPT >>work.txt']
	  old: {preset: aider}
	gates:
	  test: [sh, -c, "test \$(wc -l <work.txt) -ge ${GATE_AT:-9}"]
	retry:
	EOF
	for _l in "$@"; do printf "%s\n" "$_l" >>"$_d/.system/config.yaml" || return 1; done &&
	wo "$_d" W1
}

run_all() { # DIR
	: >"$TRASH/calls" &&
	for _i in 1 2 3 4 5 6 7 8; do sluice -C "$1" tick >>tick.out 2>&1 || true; done &&
	test "$(state_of "$1" "$(run_of "$1" W1)")" = failed
}

# calls CLI: "N resumed|new" per attempt of the stand-ins' log
sessions() {
	while read -r n who args; do
		case "$who $args" in
		"claude -p --resume "*|"codex exec resume --last "*|"gemini --resume latest "*) echo "$n $who resumed" ;;
		"mine keep") echo "$n mine keep" ;;
		mine*) echo "$n mine new" ;;
		*) echo "$n $who new" ;;
		esac
	done <"$TRASH/calls"
}

for preset in claude-code codex gemini; do
	cli=${preset%-code}
	test_expect_success "$preset: session keep from attempt 2 resumes the CLI's session (its flags)" '
		test_skip_unless_tool jq &&
		{ test $cli != gemini || command -v node >/dev/null || test_skip "node not installed"; } &&
		AGENT=$preset session_repo $cli "  - attempt: 2" "    session: keep" "  - exit: 3" &&
		sluice -C $cli check >out && test_grep -v warning out &&
		run_all $cli &&
		sessions >got &&
		printf "%s\n" "1 $cli new" "2 $cli resumed" "3 $cli resumed" >expect &&
		test_cmp expect got &&
		sluice -C $cli show --json "$(run_of $cli W1)" >show.json &&
		jq -r ".attempts[] | \"\(.n) \(.agent) \(.session)\"" show.json >got &&
		printf "%s\n" "1 $preset new" "2 $preset keep" "3 $preset keep" >expect &&
		test_cmp expect got
	'
done

test_expect_success 'the resume flags are in the pinned CLIs --help snapshots' '
	grep -q "^  -r, --resume " "$FIXTURES/agents/claude.help" &&
	grep -q "^  --session-id " "$FIXTURES/agents/claude.help" &&
	grep -qF "claude -p \$r " "$SLUICE_SOURCE_DIR/src/core/config_template.c" &&
	grep -q "^  resume  " "$FIXTURES/agents/codex-exec.help" &&
	grep -q "^ *--last$" "$FIXTURES/agents/codex-exec-resume.help" &&
	grep -q "^  -c, --config " "$FIXTURES/agents/codex-exec-resume.help" &&
	grep -q "^  -r, --resume .*latest" "$FIXTURES/agents/gemini.help"
'

test_expect_success 'a rule that switches the agent forces a new session, with a warning' '
	session_repo switch "  - attempt: 2" "    session: keep" "  - attempt: 3" "    agent: codex" \
		"  - exit: 4" &&
	sluice -C switch check >out &&
	test_grep "config.yaml:[0-9]*:1: warning: this retry entry switches the agent without .session: new." out &&
	run_all switch &&
	sessions >got &&
	printf "%s\n" "1 claude new" "2 claude resumed" "3 codex new" "4 codex resumed" >expect &&
	test_cmp expect got &&
	sluice -C switch log >log &&
	test_grep "attempt 3: agent codex (retry rule 2), session new; warning: session: keep, but the agent changed from claude-code" log &&
	test_grep "attempt 4: agent codex (retry rule 2), session keep$" log
'

test_expect_success 'session: new in a later rule ends the kept session' '
	session_repo renew "  - attempt: 2" "    session: keep" "  - attempt: 3" "    session: new" \
		"  - exit: 3" &&
	run_all renew &&
	sessions >got &&
	printf "%s\n" "1 claude new" "2 claude resumed" "3 claude new" >expect &&
	test_cmp expect got
'

test_expect_success 'worktree: reset with a kept session: resumed, with a warning (check and log)' '
	session_repo reset "  - attempt: 2" "    session: keep" "    worktree: reset" "  - exit: 3" &&
	sluice -C reset check >out &&
	test_grep "warning: .worktree: reset. with .session: keep." out &&
	run_all reset &&
	sessions >got &&
	printf "%s\n" "1 claude new" "2 claude resumed" "3 claude resumed" >expect &&
	test_cmp expect got &&
	sluice -C reset log >log &&
	test_grep "attempt 2: agent claude-code, session keep; warning: worktree: reset with a kept session" log
'

test_expect_success 'aider cannot resume: new sessions, a warning at check and in the log' '
	AGENT=old session_repo aider "  - attempt: 2" "    session: keep" "  - exit: 2" &&
	sluice -C aider check >out &&
	test_grep "warning: .session: keep. but agent .old. (preset aider) cannot resume" out &&
	run_all aider &&
	sessions >got &&
	printf "%s\n" "1 aider new" "2 aider new" >expect &&
	test_cmp expect got &&
	sluice -C aider log >log &&
	test_grep "attempt 2: agent old, session new; warning: session: keep, but old cannot resume" log
'

test_expect_success 'a command of the user s own is told by SLUICE_SESSION' '
	AGENT=mine session_repo mine "  - attempt: 2" "    session: keep" "  - exit: 3" &&
	run_all mine &&
	sessions >got &&
	printf "%s\n" "1 mine new" "2 mine keep" "3 mine keep" >expect &&
	test_cmp expect got
'

test_done
