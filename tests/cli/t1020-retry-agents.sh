#!/bin/sh
# Gump's retry table (seeds/002, "Sticky behavior") with three named
# builders: attempts 1-2 run the default agent, 3-4 "thinking" (from
# attempt 3, sticky), 5-7 "opus" (from attempt 5, sticky), and the run
# fails at 7 with the reason. Each builder records which one ran; the gate
# fails until attempt 8, so the exit at 7 ends it. `sluice show` (text and
# --json) and the event log say which agent each attempt ran.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: three named builders, the seed retry table' '
	sluice_repo repo &&
	for name in default thinking opus; do
		printf "%s\n" "echo \"\$SLUICE_ATTEMPT $name \$MY_AGENT \$SLUICE_SESSION\" >>\"$TRASH/ran\"" \
			"echo \$SLUICE_ATTEMPT >>work.txt" >"$BUILDERS/$name.sh" || return 1
	done &&
	cat >>repo/.system/config.yaml <<-EOF &&
	  agent: default
	builders:
	  default:
	    command: [sh, "$BUILDERS/default.sh"]
	    env: {MY_AGENT: d}
	  thinking:
	    command: [sh, "$BUILDERS/thinking.sh"]
	    env: {MY_AGENT: t}
	  opus:
	    command: [sh, "$BUILDERS/opus.sh"]
	    env: {MY_AGENT: o}
	gates:
	  test: [sh, -c, "test \$(wc -l <work.txt) -ge 8"]
	retry:
	  - attempt: 3
	    agent: thinking
	  - attempt: 5
	    agent: opus
	  - exit: 7
	EOF
	sed -i "/^builder:/,/^  command:/{/^  command:/d}" repo/.system/config.yaml &&
	sluice -C repo check >out &&
	test_grep "^ok:" out &&
	wo repo W1
'

test_expect_success 'the run fails at attempt 7, each attempt with its agent' '
	for i in 1 2 3 4 5 6 7 8 9; do
		sluice -C repo tick >>tick.out 2>&1 || true
	done &&
	run=$(run_of repo W1) &&
	test "$(state_of repo $run)" = failed &&
	printf "%s\n" "1 default d new" "2 default d new" "3 thinking t new" "4 thinking t new" \
		"5 opus o new" "6 opus o new" "7 opus o new" >expect &&
	test_cmp expect ran
'

test_expect_success 'sluice show: the agent of each attempt, and why the run failed' '
	run=$(run_of repo W1) &&
	sluice -C repo show $run >show &&
	grep "^    agent: " show >agents &&
	printf "    agent: %s, session new\n" default default thinking thinking opus opus opus >expect &&
	test_cmp expect agents &&
	test_grep "retry exit at 7" show
'

test_expect_success 'sluice show --json: attempts[].agent and .session' '
	test_skip_unless_tool python3 &&
	run=$(run_of repo W1) &&
	sluice -C repo show --json $run >show.json &&
	python3 -c "
import json,sys
d=json.load(open(\"show.json\"))
print(\" \".join(\"%d:%s:%s\" % (a[\"n\"], a[\"agent\"], a[\"session\"]) for a in d[\"attempts\"]))
print(d[\"run\"][\"reason\"])
" >got &&
	echo "1:default:new 2:default:new 3:thinking:new 4:thinking:new 5:opus:new 6:opus:new 7:opus:new" >expect &&
	head -n 1 got >line1 && test_cmp expect line1 &&
	test_grep "gate .test. failed on attempt 7; retry exit at 7" got
'

test_expect_success 'the event log: each attempt names its agent and the rule' '
	sluice -C repo log >log &&
	test_grep "attempt 1: agent default, session new" log &&
	test_grep "attempt 3: agent thinking (retry rule 1), session new" log &&
	test_grep "attempt 4: agent thinking (retry rule 1), session new" log &&
	test_grep "attempt 5: agent opus (retry rule 2), session new" log &&
	test_grep "retrying as attempt 5 of 7 with agent opus from retry rule 2" log &&
	test_grep "building -> building  attempt 3: agent thinking" log &&
	test_grep -v "\-> ?\|- -> -" log
'

test_expect_success 'a named builder s own timeout, not builder.timeout' '
	sluice_repo slow &&
	cat >>slow/.system/config.yaml <<-EOF &&
	  timeout: 10m
	  agent: slow
	builders:
	  slow:
	    command: [sh, -c, "echo started >>\"$TRASH/slow.ran\"; exec sleep 60"]
	    timeout: 10s
	EOF
	sed -i "/^builder:/,/^  command:/{/^  command:/d}" slow/.system/config.yaml &&
	sluice -C slow check >out && test_grep "^ok:" out &&
	wo slow S1 &&
	sluice -C slow tick >out 2>&1 &&
	run=$(run_of slow S1) &&
	test "$(state_of slow $run)" = failed &&
	sluice -C slow status --json $run >st &&
	test_grep "timed out" st &&
	test_grep "started" slow.ran
'

test_expect_success 'a preset name works as agent without a builders map' '
	sluice_repo repo2 &&
	cat >>repo2/.system/config.yaml <<-\EOF &&
	retry:
	  - attempt: 2
	    agent: codex
	  - exit: 3
	EOF
	sluice -C repo2 check >out &&
	test_grep "^ok:" out
'

test_done
