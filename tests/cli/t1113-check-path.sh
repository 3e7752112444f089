#!/bin/sh
# sluice check warns when a program sluice would start here is not on PATH:
# a builder preset's CLI (claude-code: claude, codex, gemini: gemini and
# node), builders: entries, a retry rule's preset, builder.command and
# reviewer.command; each warning names the key, the program and PATH, and
# says what to do (issue 25). A warning does not fail check (exit 0), and is
# under "warnings" in --json. Before, check said "ok" and the first tick
# failed every build with "not found".
. "$(dirname "$0")/lib.sh"

# A PATH of its own: sh and the tools of every shell, and nothing of the agents.
mkdir -p "$TRASH/bin" "$TRASH/agents"
for t in sh cat sed grep; do ln -s "$(command -v $t)" "$TRASH/bin/$t"; done
for t in claude codex gemini node; do
	printf '#!/bin/sh\nexit 0\n' >"$TRASH/agents/$t" && chmod +x "$TRASH/agents/$t"
done
# a file of that name that is not executable is not a program
printf 'not a program\n' >"$TRASH/bin/codex"

test_expect_success 'setup: presets, named builders, a retry preset and a reviewer command' '
	sluice_repo r &&
	sed -i "/^builder:/,\$d" r/.system/config.yaml &&
	cat >>r/.system/config.yaml <<-\EOF &&
	builder:
	  preset: claude-code
	builders:
	  fast:
	    preset: gemini
	  own:
	    command: [my-agent, --fast]
	retry:
	  - exit: 1
	    agent: codex
	reviewer:
	  mode: command
	  command: [review-bot, --strict]
	EOF
	sluice -C r check >out
'

test_expect_success 'with none of them on PATH: one warning each, naming key, program and PATH; exit 0' '
	PATH="$TRASH/bin" "$SLUICE" -C r check >out 2>err &&
	test_grep "^.system/config.yaml: warning: builder preset .claude-code. runs .claude., which is not on PATH ($TRASH/bin); install it, or put its folder on PATH" out &&
	test_grep "warning: builders.fast preset .gemini. runs .gemini., which is not on PATH" out &&
	test_grep "warning: builders.fast preset .gemini. runs .node., which is not on PATH" out &&
	test_grep "warning: builders.own.command runs .my-agent., which is not on PATH" out &&
	test_grep "warning: the retry rule of line [0-9]* (preset .codex.) runs .codex., which is not on PATH" out &&
	test_grep "warning: reviewer.command runs .review-bot., which is not on PATH" out &&
	test_grep "cron.s PATH is /usr/bin:/bin" out &&
	test "$(grep -c "warning: .* not on PATH" out)" = 6 &&
	test_grep "^ok: the config and 0 work orders are valid" out
'

test_expect_success '--json: the same under "warnings", "ok" true' '
	test_skip_unless_tool python3 &&
	PATH="$TRASH/bin" "$SLUICE" -C r check --json >out &&
	python3 -c "import json, sys; j = json.load(open(sys.argv[1])); assert j[\"ok\"] and not j[\"problems\"], j; assert sum(\"not on PATH\" in w for w in j[\"warnings\"]) == 6, j" out
'

test_expect_success 'with the agents on PATH only the missing ones are left' '
	PATH="$TRASH/bin:$TRASH/agents" "$SLUICE" -C r check >out &&
	test_grep -v "runs .claude.," out &&
	test_grep -v "runs .gemini.," out &&
	test_grep -v "runs .node.," out &&
	test_grep -v "runs .codex.," out &&
	test_grep "runs .my-agent., which is not on PATH" out &&
	ln -s "$TRASH/agents/claude" "$TRASH/agents/my-agent" &&
	ln -s "$TRASH/agents/claude" "$TRASH/agents/review-bot" &&
	PATH="$TRASH/bin:$TRASH/agents" "$SLUICE" -C r check >out &&
	test_grep -v "not on PATH" out
'

test_expect_success 'a command given by its path is looked for there' '
	sed -i "s|command: \[review-bot, --strict\]|command: [$TRASH/agents/nothing-here]|" r/.system/config.yaml &&
	PATH="$TRASH/bin:$TRASH/agents" "$SLUICE" -C r check >out &&
	test_grep "warning: reviewer.command runs .$TRASH/agents/nothing-here., which is not an executable file" out
'

test_expect_success 'with an executor the builders run on its nodes: only the reviewer is looked for' '
	printf "%s\n" "executor:" "  kind: slurm" "  remote: $TRASH/remote.git" >>r/.system/config.yaml &&
	PATH="$TRASH/bin" "$SLUICE" -C r check >out &&
	test_grep -v "runs .claude.," out &&
	test_grep "warning: reviewer.command runs" out
'

test_done
