#!/bin/sh
# One tick lands every work order it can, however many: a tick works in
# rounds (each claims as many new runs as there are free jobs, and goes on
# while the last round merged something), and a fixed cap of 100 rounds left
# the 101st work order of `tick --jobs 1` unclaimed, and at --jobs 2 the
# last cars of 200 approved in the train, for the next tick (issue 29's
# bench). The cap now grows with the runs the tick claimed.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: 105 ready work orders, each adding a file of its own' '
	sluice_repo repo "$(approve_reviewer_config)" &&
	i=1 && while [ $i -le 105 ]; do
		echo "echo $i >f$i.txt" >"$BUILDERS/M$i.sh" &&
		wo repo M$i || return 1
		i=$((i + 1))
	done
'

test_expect_success 'one tick --jobs 1 claims and lands all 105 (more than 100 rounds)' '
	sluice -C repo tick --jobs 1 --json >tick.json 2>tick.err &&
	{ jq -e ".started == 105 and .merged == 105 and .waiting == 0" tick.json >/dev/null ||
		{ cat tick.json && false; }; } &&
	test "$(sluice -C repo runs --state merged | wc -l)" = 105 &&
	test "$(git -C repo rev-list --count --merges main)" = 105
'

test_expect_success 'a tick with nothing to land ends after its first round' '
	sluice -C repo tick --json >idle.json 2>idle.err &&
	{ jq -e ".started == 0 and .advanced == 0 and .merged == 0" idle.json >/dev/null ||
		{ cat idle.json && false; }; }
'

test_done
