#!/bin/sh
# sluice check and validator conditions: `validate` is an argv (a string is
# an error saying to write a list), `with` a mapping of text templates
# checked like the retry prompt, `with` and `timeout` only beside
# `validate`, one condition per entry. Each problem has file:line:col. The
# validator is never run by check.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup' '
	test_repo r &&
	sluice -C r init >/dev/null &&
	cp r/.system/config.yaml base.yaml
'

config() { # retry lines...
	cp base.yaml r/.system/config.yaml &&
	printf "%s\n" "gates:" "  test: [\"true\"]" "retry:" "$@" >>r/.system/config.yaml
}

test_expect_success 'a valid validator entry passes; check does not run it' '
	config "  - validate: [sh, -c, '"'"'touch \"$TRASH/ran\"; echo true'"'"']" \
		"    with:" "      diff: \"{diff}\"" "      out: \"{gate.test.output} {work_order.title}\"" \
		"    timeout: 30s" "    prompt: \"again: {error}\"" "  - exit: 3" &&
	sluice -C r check >out &&
	test_grep "^ok" out &&
	test ! -e ran
'

# line of the config where the retry list starts: base + 3
line0=$(($(wc -l <"$TRASH/base.yaml") + 3))

test_expect_success 'validate as a string: write a list, at its line and column' '
	config "  - validate: validators/assess" "  - exit: 3" &&
	test_expect_failure_code 1 sluice -C r check >out 2>&1 &&
	test_grep "config.yaml:$((line0 + 1)):15: .retry.validate. must be a list (an argv)" out
'

test_expect_success 'an empty validate list' '
	config "  - validate: []" "  - exit: 3" &&
	test_expect_failure_code 1 sluice -C r check >out 2>&1 &&
	test_grep "config.yaml:$((line0 + 1)):15: .retry.validate. is an empty list" out
'

test_expect_success 'with: not a mapping, a list value, an unknown variable, a bad name' '
	config "  - validate: [v]" "    with: [x]" "  - validate: [v]" "    with:" \
		"      a: [1, 2]" "      b: \"{nonsense}\"" "      c d: x" "  - exit: 3" &&
	test_expect_failure_code 1 sluice -C r check >out 2>&1 &&
	test_grep "config.yaml:$((line0 + 2)):11: .with. must be a mapping" out &&
	test_grep "config.yaml:$((line0 + 5)):10: .with.a. must be a text value" out &&
	test_grep "unknown variable .{nonsense}. in .with.b. of the retry entry at line $((line0 + 3))" out &&
	test_grep "config.yaml:$((line0 + 7)):7: input name .c d." out
'

test_expect_success 'with and timeout without validate' '
	config "  - attempt: 2" "    with: {x: y}" "  - not: gate.test" "    timeout: 5s" "  - exit: 3" &&
	test_expect_failure_code 1 sluice -C r check >out 2>&1 &&
	test_grep "config.yaml:$((line0 + 1)):5: .with. in a retry entry goes with .validate: \[argv\]." out &&
	test_grep "config.yaml:$((line0 + 3)):5: .timeout. in a retry entry goes with .validate: \[argv\]." out
'

test_expect_success 'a bad timeout, and two conditions in one entry' '
	config "  - validate: [v]" "    timeout: soon" "  - validate: [v]" "    attempt: 2" "  - exit: 3" &&
	test_expect_failure_code 1 sluice -C r check >out 2>&1 &&
	test_grep "config.yaml:$((line0 + 2)):14: .retry.timeout.:" out &&
	test_grep "config.yaml:$((line0 + 3)):5: a retry entry needs exactly one condition .*this one has 2" out
'

test_done
