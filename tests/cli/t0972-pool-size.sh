#!/bin/sh
# worktree.pool (issue 14): its size and what empties it. `pool: 0` pools
# nothing (each worktree removed at the end of its run, as before the pool);
# `pool: 1` keeps at most one however many runs end at once; the default
# keeps two. The event log says "worktree from the pool" for the runs that
# took one and only for them. `sluice worktree pool` lists the slots; `sluice
# gc` and `sluice worktree cleanup --pool` empty the pool: no slot folder, no
# `git worktree list` line, no .git/worktrees entry left, and the branches of
# finished runs gone as before. An abandoned run's pooled worktree does not
# hold its branch (the person can delete or check it out).
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool jq

# meet_builders WO...: each waits (at most 300 s and more, a guard against a hang) until all of them started,
# so that they hold their worktrees at once (and end in the same tick).
meet_builders() {
	for _me in "$@"; do
		{
			echo ": >\"\$SLUICE_RUN_DIR/../met-$_me\""
			for _o in "$@"; do
				echo "i=0; while [ ! -f \"\$SLUICE_RUN_DIR/../met-$_o\" ] && [ \$i -lt 3000 ]; do sleep 0.1; i=\$((i + 1)); done"
			done
			echo "echo $_me >$_me.txt"
		} >"$BUILDERS/$_me.sh" || return 1
	done
}
for w in A B C D E F; do echo "echo $w >$w.txt" >"$BUILDERS/$w.sh"; done

slots() { # DIR: the slot folders of the pool, one a line
	ls "$1/.system/pool" 2>/dev/null
}

# pool_consistent DIR N: N slots, each a registered, detached linked worktree
# with its own entry, listed by `sluice worktree pool`.
pool_consistent() {
	test "$(slots "$1" | wc -l)" = "$2" ||
		{ echo "want $2 slots, have:" >&2; ls -la "$1/.system/pool" >&2; return 1; }
	git -C "$1" worktree list --porcelain >"$TRASH/wtl" &&
	sluice -C "$1" worktree pool >"$TRASH/pool.out" 2>&1 &&
	for s in $(slots "$1"); do
		p=$TRASH/$1/.system/pool/$s &&
		grep -qx "worktree $p" "$TRASH/wtl" ||
			{ echo "slot $s is not a registered worktree:" >&2; cat "$TRASH/wtl" >&2; return 1; }
		awk -v p="worktree $p" '$0 == p { f = 1; next } /^worktree / { f = 0 } f' "$TRASH/wtl" >"$TRASH/slot" &&
		test_grep "^detached" "$TRASH/slot" &&
		g=$(git -C "$p" rev-parse --absolute-git-dir) &&
		test "$(cat "$g/gitdir")" = "$p/.git" &&
		test_grep "$s" "$TRASH/pool.out" || return 1
	done
}

# nothing_pooled DIR: no slot, and no worktree or entry but those of the
# runs still active (ACTIVE: their ids).
nothing_pooled() {
	test -z "$(slots "$1")" &&
	test "$(git -C "$1" worktree list | wc -l)" = $((1 + $(echo ${ACTIVE:-} | wc -w))) &&
	ls "$1/.git/worktrees" 2>/dev/null >"$TRASH/entries" &&
	for e in $(cat "$TRASH/entries"); do
		echo " ${ACTIVE:-} " | grep -q " $e " || { echo "entry $e left" >&2; return 1; }
	done &&
	test -z "$(git -C "$1" worktree prune --dry-run -v 2>&1)"
}

from_pool() { # DIR RUN: 0 when the run's events say it took a pooled worktree
	sluice -C "$1" log "$2" | grep -q "worktree from the pool"
}

test_expect_success 'pool: 0 pools nothing: each worktree removed as before' '
	sluice_repo p0 "$(approve_reviewer_config)" "worktree:" "  pool: 0" &&
	wo p0 A && sluice -C p0 tick >out 2>&1 && wo p0 B && sluice -C p0 tick >out 2>&1 &&
	test "$(sluice -C p0 runs --state merged | wc -l)" = 2 &&
	! from_pool p0 "$(run_of p0 A)" && ! from_pool p0 "$(run_of p0 B)" &&
	ACTIVE= nothing_pooled p0 &&
	test -z "$(git -C p0 branch --list "run/*")"
'

test_expect_success 'pool: 1 keeps one of two worktrees that end in the same tick' '
	sluice_repo p1 "worktree:" "  pool: 1" "queue:" "  jobs: 2" &&
	wo p1 A && wo p1 B && sluice -C p1 tick >out 2>&1 &&
	a=$(run_of p1 A) && b=$(run_of p1 B) &&
	test "$(state_of p1 $a)" = awaiting_review && test "$(state_of p1 $b)" = awaiting_review &&
	! from_pool p1 $a && ! from_pool p1 $b &&
	sluice -C p1 approve $a >/dev/null && sluice -C p1 approve $b >/dev/null &&
	sluice -C p1 tick >out 2>&1 &&
	test "$(state_of p1 $a)" = merged && test "$(state_of p1 $b)" = merged &&
	pool_consistent p1 1 &&
	test "$(ls p1/.git/worktrees | wc -l)" = 1 &&
	test -z "$(git -C p1 branch --list "run/*")"
'

test_expect_success 'the next run takes it (and says so); the pool is then empty' '
	wo p1 C && sluice -C p1 tick >out 2>&1 &&
	c=$(run_of p1 C) && test "$(state_of p1 $c)" = awaiting_review &&
	from_pool p1 $c &&
	pool_consistent p1 0 &&
	test "$(git -C p1 worktree list | wc -l)" = 2 &&
	test "$(ls p1/.git/worktrees)" = "$c" &&
	test "$(git -C p1/.system/runs/$c/worktree symbolic-ref HEAD)" = "refs/heads/$(sluice -C p1 status --json $c | jq -r .branch_name)"
'

test_expect_success 'with an empty pool the next run is fresh (no event saying otherwise)' '
	wo p1 D && sluice -C p1 tick >out 2>&1 &&
	d=$(run_of p1 D) && test "$(state_of p1 $d)" = awaiting_review &&
	! from_pool p1 $d
'

test_expect_success 'an abandoned run: its worktree pooled (detached), its branch free' '
	d=$(run_of p1 D) && br=$(sluice -C p1 status --json $d | jq -r .branch_name) &&
	sluice -C p1 abandon $d >out 2>&1 &&
	test "$(state_of p1 $d)" = abandoned &&
	pool_consistent p1 1 &&
	test -n "$(git -C p1 branch --list "$br")" &&
	! git -C p1 worktree list --porcelain | grep -q "^branch refs/heads/$br\$" &&
	git -C p1 branch -D "$br" >/dev/null
'

test_expect_success 'the default keeps two' '
	sluice_repo p2 "$(approve_reviewer_config)" "queue:" "  jobs: 3" &&
	meet_builders A B C && meet_builders D E F &&
	wo p2 A && wo p2 B && wo p2 C && sluice -C p2 tick >out 2>&1 &&
	test "$(sluice -C p2 runs --state merged | wc -l)" = 3 &&
	pool_consistent p2 2 &&
	wo p2 D && wo p2 E && wo p2 F && sluice -C p2 tick >out 2>&1 &&
	test "$(sluice -C p2 runs --state merged | wc -l)" = 6 &&
	n=0 && for w in D E F; do
		if from_pool p2 "$(run_of p2 $w)"; then n=$((n + 1)); fi || return 1
	done &&
	test "$n" = 2 &&
	pool_consistent p2 2
'

test_expect_success 'lowering worktree.pool trims the pool at the next tick (2, then 1, then 0)' '
	sluice_repo p3 "$(approve_reviewer_config)" "queue:" "  jobs: 2" "worktree:" "  pool: 2" &&
	meet_builders A B &&
	wo p3 A && wo p3 B && sluice -C p3 tick >out 2>&1 &&
	pool_consistent p3 2 &&
	sed -i "s/^  pool: 2\$/  pool: 1/" p3/.system/config.yaml &&
	sluice -C p3 tick >out 2>&1 &&
	pool_consistent p3 1 &&
	test "$(git -C p3 worktree list | wc -l)" = 2 &&
	sed -i "s/^  pool: 1\$/  pool: 0/" p3/.system/config.yaml &&
	sluice -C p3 tick >out 2>&1 &&
	ACTIVE= nothing_pooled p3
'

test_expect_success 'sluice gc empties the pool' '
	sluice -C p2 gc </dev/null >gc.out 2>&1 &&
	ACTIVE= nothing_pooled p2 &&
	sluice -C p2 worktree pool >pool.out 2>&1 &&
	for s in $(ls p2/.git/worktrees 2>/dev/null); do ! grep -q "$s" pool.out || return 1; done &&
	test -z "$(git -C p2 branch --list "run/*")" &&
	git -C p2 fsck --no-progress >/dev/null 2>&1
'

test_expect_success 'sluice worktree cleanup --pool empties it, and leaves an active run alone' '
	c=$(run_of p1 C) &&
	pool_consistent p1 1 &&
	sluice -C p1 worktree cleanup --pool >out 2>&1 &&
	ACTIVE=$c nothing_pooled p1 &&
	test "$(state_of p1 $c)" = awaiting_review &&
	test -f p1/.system/runs/$c/worktree/C.txt &&
	sluice -C p1 approve $c >/dev/null && sluice -C p1 tick >out 2>&1 &&
	test "$(state_of p1 $c)" = merged &&
	git -C p1 fsck --no-progress >/dev/null 2>&1 && sluice -C p1 audit >/dev/null
'

test_expect_success 'cleanup --pool twice, gc with nothing pooled: they succeed, nothing is left' '
	sluice -C p1 worktree cleanup --pool >out 2>&1 &&
	sluice -C p1 worktree cleanup --pool >out 2>&1 &&
	sluice -C p0 gc </dev/null >out 2>&1 &&
	ACTIVE= nothing_pooled p0
'

test_done
