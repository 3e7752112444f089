#!/bin/sh
# The desk (sluice serve, docs/serve.md) says a frozen target: the queue page
# starts with the freeze, its reason escaped, and the run waiting in the train
# shows "wait: frozen (REASON)"; unfrozen, the banner is gone.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool curl

echo 'echo one >one.txt' >"$BUILDERS/ONE.sh"

test_expect_success 'the queue page starts with the freeze and the waiting run says it' '
	sluice_repo r "gates:" "  test: [\"true\"]" "$(approve_reviewer_config)" &&
	sluice -C r freeze -m "release <2.0>" >/dev/null &&
	wo r ONE && sluice -C r tick >/dev/null 2>&1 &&
	desk_up r && test_when_finished "kill $(cat "$TRASH/desk.pid")" &&
	desk_page / >q.html &&
	test_grep "<p id=\"frozen\" class=\"error\">target main: frozen (release &lt;2.0&gt;): lands nothing, tests go on" q.html &&
	test_grep -v "release <2.0>" q.html &&
	test_grep "(sluice unfreeze ends the freeze)</span>" q.html &&
	test_grep -v "a window of merge.freeze" q.html &&
	run=$(run_of r ONE) &&
	desk_page /runs/$run >run.html &&
	test_grep "wait: frozen (release &lt;2.0&gt;)" run.html &&
	sluice -C r unfreeze >/dev/null &&
	desk_page / >q2.html &&
	test_grep -v "id=\"frozen\"" q2.html
'

test_expect_success 'an urgent work order is marked urgent on the queue page, not p0' '
	wo r URG "priority: urgent" && wo r LATER "priority: 2" &&
	desk_up r && test_when_finished "kill $(cat "$TRASH/desk.pid")" &&
	desk_page / >q3.html &&
	test_grep "URG</b></a> .* <span class=\"error\">urgent</span>" q3.html &&
	test_grep "LATER</b></a> .* <span class=\"muted\">p2</span>" q3.html &&
	test_grep -v ">p0<" q3.html
'

test_done
