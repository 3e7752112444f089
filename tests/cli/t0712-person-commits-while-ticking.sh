#!/bin/sh
# A person commits on the checked-out target every 0.3 s while two tick loops
# run: the person's commits are the user's (no alarm about foreign moves of
# the target, no tick fails), every work order lands once, audit holds.
# The person stops after 25 commits: a target that moves faster than a car
# can be rebuilt and landed starves the train (seen under ASan: one tick
# rebuilt a car on each new tip for an hour); that is a known limit of the
# train (docs/RELIABILITY.md), not what this test is about.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: 6 work orders' '
	sluice_repo repo "reviewer:" "  mode: command" "  command: [sh, $APPROVE_REVIEWER]" &&
	for i in 1 2 3 4 5 6; do
		echo "sleep 1; echo P$i >p$i.txt" >"$BUILDERS/P$i.sh" && wo repo P$i || return 1
	done
'

test_expect_success 'ticks and a committing person at once' '
	{ (cd repo && i=0 && while [ ! -f ../stop ] && [ $i -lt 25 ]; do
		i=$((i + 1)); echo "$i" >>person.txt
		git add person.txt 2>/dev/null && git commit -q -m "person $i" 2>/dev/null
		sleep 0.3
	done) & } &&
	person=$! &&
	loop() { n=0; while [ $n -lt 50 ]; do
			sluice -C repo tick --jobs 2 >>tick$1.out 2>&1 || echo "tick failed" >>fail$1
			n=$((n + 1))
			[ "$(sluice -C repo runs --state merged | wc -l)" -ge 6 ] && break
		done; return 0; } &&
	{ loop 1 & } &&
	t1=$! &&
	{ loop 2 & } &&
	t2=$! &&
	{ wait $t1 || true; } && { wait $t2 || true; } &&
	touch stop && { wait $person || true; } &&
	cat tick1.out tick2.out &&
	! grep -i "unreviewed\|accept-target" tick1.out tick2.out &&
	! test -f fail1 && ! test -f fail2 &&
	test "$(sluice -C repo runs --state merged | wc -l)" = 6 &&
	test "$(git -C repo log --first-parent --oneline main | grep -c "person")" -ge 2
'

test_expect_success 'audit holds' '
	sluice -C repo tick >/dev/null &&
	(cd repo && sluice audit >../out) && test_grep "all hold" out
'

test_done
