#!/bin/sh
# The builder presets with stand-ins for the agent CLIs
# (fixtures/agents/standin/: they record argv and standard input): the
# prompt goes in on standard input (one argument is capped at 128 KiB, so a
# 200 KiB prompt used to fail with "Argument list too long"), the final
# answer becomes the run's summary and reaches the reviewer, the gates are
# in claude's allow-list, gemini trusts the worktree. The real CLIs are
# tried in t0960-t0962 against a fake model server.
. "$(dirname "$0")/lib.sh"

STANDIN_DIR="$TRASH/standin"
mkdir -p "$STANDIN_DIR"
export STANDIN_DIR
PATH="$FIXTURES/agents/standin:$PATH"
export PATH

# A command reviewer that keeps every request it gets and approves.
printf '%s\n' 'cat >"$STANDIN_DIR/request.$$.json"' \
	'echo "{\"verdict\": \"approve\", \"reviewer\": \"keeper\"}"' >"$TRASH/keep-reviewer.sh"

preset_repo() { # DIR PRESET
	test_repo "$1" && (cd "$1" && "$SLUICE" init >/dev/null) &&
	cat >>"$1/.system/config.yaml" <<-EOC
	builder:
	  preset: $2
	gates:
	  made: [sh, -c, "test -f $3.txt"]
	  lint: [true, "it's fine"]
	reviewer:
	  mode: command
	  command: [sh, $TRASH/keep-reviewer.sh]
	EOC
}

# A work order whose body is 200 KiB (the prompt is bigger still).
big_wo() { # DIR ID
	mkdir -p "$1/work_orders" &&
	{
		printf -- '---\nid: %s\ntitle: A long work order\n---\n' "$2"
		i=0
		while [ $i -lt 3200 ]; do
			echo "Line $i of the context the agent needs, sixty-four bytes long."
			i=$((i + 1))
		done
	} >"$1/work_orders/$2.md"
}

for preset in claude-code codex gemini; do
	cli=${preset%-code}
	test_expect_success "$preset: a 200 KiB prompt on standard input, merged, its final answer the summary" '
		{ test $cli != gemini || command -v node >/dev/null ||
			test_skip "node not installed (the gemini preset reads its JSON answer with node)"; } &&
		rm -f "$STANDIN_DIR"/* &&
		preset_repo $cli $preset $cli &&
		big_wo $cli WO-BIG &&
		test $(wc -c <$cli/work_orders/WO-BIG.md) -gt 204800 &&
		sluice -C $cli tick >out 2>&1 &&
		run=$(run_of $cli WO-BIG) &&
		test "$(state_of $cli $run)" = merged &&
		cmp "$STANDIN_DIR/$cli.stdin" $cli/.system/runs/$run/attempts/1/prompt.md &&
		test_grep -v "Line 17 of the context" "$STANDIN_DIR/$cli.args" &&
		test_grep "final answer: $cli edited $cli.txt" $cli/.system/runs/$run/summary.md &&
		test_grep -v "not the final answer" $cli/.system/runs/$run/summary.md &&
		jq -e --arg s "final answer: $cli edited $cli.txt" "(.builder_summary | rtrimstr(\"\\n\")) == \$s" \
			"$STANDIN_DIR"/request.*.json >/dev/null &&
		sluice -C $cli show $run >show.out &&
		test_grep "final answer: $cli edited $cli.txt" show.out &&
		sluice -C $cli show --json $run | jq -e ".summary | startswith(\"final answer\")" >/dev/null &&
		sluice -C $cli audit
	'
done

test_expect_success 'claude-code: its JSON result gives the summary and the usage recorded' '
	test_skip_unless_tool node &&
	rm -rf "$STANDIN_DIR"/* cj &&
	test_when_finished "rm -f \"$STANDIN_DIR/claude.out\" \"$STANDIN_DIR/claude.rc\"" &&
	printf "%s\n" "{\"type\": \"result\", \"result\": \"all done\", \"total_cost_usd\": 0.42, \"usage\": {\"input_tokens\": 7, \"output_tokens\": 3, \"cache_read_input_tokens\": 100, \"cache_creation_input_tokens\": 5}, \"modelUsage\": {\"small\": {\"costUSD\": 0.02}, \"big\": {\"costUSD\": 0.4}}}" >"$STANDIN_DIR/claude.out" &&
	preset_repo cj claude-code claude &&
	wo cj J && sluice -C cj tick >out 2>&1 &&
	run=$(run_of cj J) &&
	test "$(state_of cj $run)" = merged &&
	echo "all done" >want && test_cmp want cj/.system/runs/$run/summary.md &&
	sluice -C cj show --json $run |
		jq -c ".usage.rows[] | [.input_tokens, .output_tokens, .cache_read_tokens, .cache_write_tokens, .cost_usd, .model]" >got &&
	echo "[7,3,100,5,0.42,\"big\"]" >want && test_cmp want got
'

test_expect_success 'claude-code: an error result without one, or no JSON: the output is the summary' '
	test_skip_unless_tool node &&
	rm -rf "$STANDIN_DIR"/* ce &&
	test_when_finished "rm -f \"$STANDIN_DIR/claude.out\" \"$STANDIN_DIR/claude.rc\"" &&
	echo "{\"type\": \"result\", \"subtype\": \"error_max_turns\", \"is_error\": true}" >"$STANDIN_DIR/claude.out" &&
	echo 1 >"$STANDIN_DIR/claude.rc" &&
	preset_repo ce claude-code claude &&
	wo ce E && sluice -C ce tick >out 2>&1 &&
	run=$(run_of ce E) &&
	test "$(state_of ce $run)" = failed &&
	test_grep "error_max_turns" ce/.system/runs/$run/summary.md &&
	test_grep "error_max_turns" ce/.system/runs/$run/builder.log &&
	echo "not json at all" >"$STANDIN_DIR/claude.out" && echo 0 >"$STANDIN_DIR/claude.rc" &&
	wo ce N && sluice -C ce tick >out 2>&1 &&
	run=$(run_of ce N) &&
	test_grep "^not json at all$" ce/.system/runs/$run/summary.md &&
	test "$(sluice -C ce show --json $run | jq ".usage.rows | length")" = 0
'

# the lint gate as a shell command, quoted for sh
want_lint="Bash(true 'it'\''s fine')"

test_expect_success 'claude-code: the gates and git read commands are in its allow-list' '
	args="$STANDIN_DIR/claude.args" &&
	rm -f "$args" &&
	preset_repo cl2 claude-code claude && big_wo cl2 WO-2 &&
	sluice -C cl2 tick >out 2>&1 &&
	grep -qx -- "--allowedTools" "$args" &&
	grep -qx "Bash(test -f claude.txt)" "$args" &&
	grep -qxF "$want_lint" "$args" &&
	grep -qx "Bash(git diff:\*)" "$args" &&
	grep -qx -- "--permission-mode" "$args" &&
	grep -qx "acceptEdits" "$args" &&
	test_grep -v "bypassPermissions" "$args"
'

test_expect_success 'gemini: the worktree is trusted (without it the CLI exits 55 in every run)' '
	test_grep -v "not running in a trusted directory" gemini/.system/runs/*/builder.log
'

test_expect_success 'a builder that exits 0 and changes nothing: said so, not "builder failed (exit 1)"' '
	sluice_repo n && echo "true" >"$BUILDERS/WO-NOTHING.sh" && wo n WO-NOTHING &&
	sluice -C n tick >out 2>&1 &&
	run=$(run_of n WO-NOTHING) &&
	test "$(state_of n $run)" = failed &&
	sluice -C n status $run >st &&
	test_grep "exited 0 but changed nothing" st &&
	test_grep -v "exit 1" st
'

test_expect_success 'the prompt tells the agent not to commit and where its summary goes' '
	p=$(ls claude/.system/runs/*/attempts/1/prompt.md | head -n 1) &&
	test_grep "Do not run .git commit." "$p" &&
	test_grep "final answer" "$p"
'

test_done
