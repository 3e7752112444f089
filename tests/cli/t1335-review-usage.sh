#!/bin/sh
# What a review used (docs/budgets.md): the sluice protocol's verdict may say
# its "usage" (the figures of schema/usage.schema.json), and the openai
# protocol's reply "usage" (prompt_tokens, completion_tokens, cached tokens)
# and "model" are read; each is recorded once for the run's attempt, role
# reviewer, and counts in `sluice cost`, `show` and the run's budget. A bad
# one is logged and the review goes on.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool jq

echo "echo a >a.txt" >"$BUILDERS/A.sh"
echo "echo b >b.txt" >"$BUILDERS/B.sh"
echo "echo c >c.txt" >"$BUILDERS/C.sh"
echo "echo \$SLUICE_ATTEMPT >d.txt" >"$BUILDERS/D.sh"
cat >"$TRASH/script.json" <<'EOF'
{"A": [{"verdict": "approve", "reviewer": "bot",
        "usage": {"input_tokens": 100, "output_tokens": 20, "cost_usd": 0.05, "model": "rev-1"}}],
 "B": [{"verdict": "approve", "reviewer": "bot",
        "openai_usage": {"prompt_tokens": 1200, "completion_tokens": 80,
                         "prompt_tokens_details": {"cached_tokens": 1000}}}],
 "C": [{"verdict": "approve", "reviewer": "bot", "usage": {"cost_usd": "lots"}}],
 "D": [{"verdict": "request_changes", "comments": "more", "reviewer": "bot",
        "usage": {"cost_usd": 1}}]}
EOF
start_reviewer "$TRASH/script.json" || exit 1

# reviewer_rows DIR WO: the run's usage rows of role reviewer, compact
reviewer_rows() {
	sluice -C "$1" show --json "$(run_of "$1" "$2")" |
		jq -c "[.usage.rows[] | select(.role == \"reviewer\") | del(.wall_ms)]"
}

test_expect_success 'the sluice protocol: the verdict says its usage, recorded for the attempt' '
	sluice_repo s "reviewer:" "  mode: http" "  url: $REVIEWER_URL" &&
	wo s A && settle s &&
	test "$(state_of s "$(run_of s A)")" = merged &&
	reviewer_rows s A >rows &&
	echo "[{\"attempt\":1,\"role\":\"reviewer\",\"model\":\"rev-1\",\"input_tokens\":100,\"output_tokens\":20,\"cache_read_tokens\":null,\"cache_write_tokens\":null,\"cost_usd\":0.05,\"estimate\":false}]" >want &&
	test_cmp want rows &&
	sluice -C s cost --by model --json >cost.json &&
	test "$(jq -c "[.groups[] | select(.key == \"rev-1\") | .cost_usd]" cost.json)" = "[0.05]"
'

test_expect_success 'the openai protocol: the reply usage and model, as tokens, the cached ones apart' '
	sluice_repo o "reviewer:" "  mode: http" "  protocol: openai" "  model: test-model" \
		"  url: ${REVIEWER_URL%/review}/v1/chat/completions" &&
	wo o B && settle o &&
	test "$(state_of o "$(run_of o B)")" = merged &&
	reviewer_rows o B >rows &&
	echo "[{\"attempt\":1,\"role\":\"reviewer\",\"model\":\"fake-model\",\"input_tokens\":200,\"output_tokens\":80,\"cache_read_tokens\":1000,\"cache_write_tokens\":null,\"cost_usd\":null,\"estimate\":false}]" >want &&
	test_cmp want rows
'

test_expect_success 'a bad usage in a verdict: logged, nothing recorded, the review counts' '
	sluice_repo c "reviewer:" "  mode: http" "  url: $REVIEWER_URL" &&
	wo c C && settle c &&
	test "$(state_of c "$(run_of c C)")" = merged &&
	test "$(reviewer_rows c C)" = "[]" &&
	sluice -C c log "$(run_of c C)" >log.out &&
	test_grep "attempt 1: the reviewer.s usage ignored: " log.out
'

test_expect_success 'a review asked again (the tick killed after the verdict) adds its usage' '
	sluice_repo k "reviewer:" "  mode: http" "  url: $REVIEWER_URL" &&
	wo k A &&
	FAULT_GROUP=1 fault_fire review.after_verdict fault.out -C k tick &&
	sluice -C k show --json "$(run_of k A)" >mid.json &&
	test "$(jq -c "[.usage.rows[] | select(.role == \"reviewer\") | .cost_usd]" mid.json)" = "[0.05]" &&
	settle k &&
	test "$(state_of k "$(run_of k A)")" = merged &&
	reviewer_rows k A >rows &&
	test "$(jq -c ".[] | [.attempt, .input_tokens, .output_tokens, .cost_usd, .model]" rows)" = "[1,200,40,0.1,\"rev-1\"]"
'

test_expect_success 'the review cost counts in the run budget' '
	sluice_repo u "reviewer:" "  mode: http" "  url: $REVIEWER_URL" "retry:" "  - exit: 3" &&
	wo u D "budget: {usd: 0.5}" && settle u &&
	r=$(run_of u D) &&
	test "$(state_of u $r)" = failed &&
	sluice -C u status --json $r >st.json &&
	test "$(jq -r .attempt st.json)" = 1 &&
	jq -r .reason st.json | grep -q "the run.s budget is spent: its attempts recorded \$1.00, the work order.s budget.usd is \$0.50"
'

test_done
