#!/bin/sh
# The worktree pool against a person's hands (issue 14). Between ticks the
# pool is changed behind sluice's back: every slot deleted (`rm -rf
# .system/pool/*`), a slot removed with `git worktree remove --force`, or
# deleted and `git worktree prune`d, a slot's .git file pointed at another
# repository or at another slot's entry, a slot replaced by a symbolic link
# to a folder outside, the pool folder itself replaced by one, a slot locked
# with `git worktree lock`, the temporary file of a killed write. Each time the
# next runs get their own worktree (.system/runs/<run>/worktree, entry
# .git/worktrees/<run>), merge with only their own change, nothing outside
# the repository is read as a worktree or changed, and afterwards the pool
# is consistent: each slot a registered detached worktree whose entry points
# back at it, no entry pointing nowhere (`git worktree prune --dry-run -v`
# says nothing), `git fsck` clean.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool jq

# S1 and S2 (which fill the pool), and P1 and P2, wait (at most 300 s and more, a guard against
# a hang) until the other started: both hold a worktree at once, so both go to the pool (two
# runs that did not meet may take one slot in turn, as a loaded machine showed once).
for w in S1 S2 P1 P2 A B C D E F G H I J K L; do
	case $w in S1) other=S2 ;; S2) other=S1 ;; P1) other=P2 ;; P2) other=P1 ;; *) other= ;; esac
	cat >"$BUILDERS/$w.sh" <<-EOS
	: >"\$SLUICE_RUN_DIR/../met-$w"
	i=0
	while [ -n "$other" ] && [ ! -f "\$SLUICE_RUN_DIR/../met-$other" ] && [ \$i -lt 3000 ]; do sleep 0.1; i=\$((i + 1)); done
	echo "\$SLUICE_RUN_ID \$(git rev-parse --absolute-git-dir) \$(pwd -P)" >>"\$SLUICE_RUN_DIR/../../seen.log"
	echo $w >$w.txt
	EOS
done

# hrepo DIR: an approving reviewer, jobs 2, a pool of two filled by S1, S2.
hrepo() {
	sluice_repo "$1" "$(approve_reviewer_config)" "queue:" "  jobs: 2" "worktree:" "  pool: 2" &&
	wo "$1" S1 && wo "$1" S2 && sluice -C "$1" tick >"$TRASH/seed.out" 2>&1 &&
	test "$(ls -d "$1"/.system/pool/_* 2>/dev/null | wc -l)" = 2 ||
		{ echo "the seed did not fill the pool:" >&2; cat "$TRASH/seed.out" >&2; return 1; }
}

slot() { # DIR N: the N-th slot folder (1 or 2)
	ls -d "$TRASH/$1"/.system/pool/_* | grep -v "\.take$\|\.put$" | sed -n "$2p"
}

# runs_ok DIR WO...: the work orders merged once each, each build in its own
# worktree, each merge with only its own file.
runs_ok() {
	_d=$1 && shift &&
	for _w in "$@"; do
		_r=$(run_of "$_d" "$_w") &&
		test "$(state_of "$_d" "$_r")" = merged ||
			{ echo "$_w is not merged:" >&2; sluice -C "$_d" runs >&2; cat "$TRASH/tick.out" >&2; return 1; }
		test "$(merges_of "$_d" "$_w")" = 1 &&
		grep "^diff --git" "$_d/.system/runs/$_r/diff.patch" >"$TRASH/heads" &&
		echo "diff --git a/$_w.txt b/$_w.txt" >"$TRASH/want" &&
		test_cmp "$TRASH/want" "$TRASH/heads" &&
		grep "^$_r " "$_d/.system/seen.log" >"$TRASH/seen" &&
		test -s "$TRASH/seen" &&
		while read -r _x _g _p; do
			test "$_g" = "$TRASH/$_d/.git/worktrees/$_r" &&
			test "$_p" = "$TRASH/$_d/.system/runs/$_r/worktree" ||
				{ echo "run $_r ($_w) built in $_p ($_g)" >&2; return 1; }
		done <"$TRASH/seen" || return 1
	done
}

# pool_sane DIR: the pool and git agree; nothing left over.
pool_sane() {
	test -z "$(git -C "$1" worktree prune --dry-run -v 2>&1)" ||
		{ echo "git would prune:" >&2; git -C "$1" worktree prune --dry-run -v >&2; return 1; }
	git -C "$1" worktree list --porcelain | sed -n "s/^worktree //p" | tail -n +2 | sort >"$TRASH/listed" &&
	ls -A "$1/.system/pool" 2>/dev/null | sed "s|^|$TRASH/$1/.system/pool/|" | sort >"$TRASH/slots" &&
	test_cmp "$TRASH/slots" "$TRASH/listed" &&
	test "$(wc -l <"$TRASH/slots")" -le 2 &&
	test "$(ls -A "$1/.git/worktrees" 2>/dev/null | wc -l)" = "$(wc -l <"$TRASH/slots")" &&
	for _s in $(cat "$TRASH/slots"); do
		test -d "$_s" && test ! -L "$_s" &&
		_g=$(git -C "$_s" rev-parse --absolute-git-dir) &&
		test "$_g" = "$TRASH/$1/.git/worktrees/${_s##*/}" &&
		test "$(cat "$_g/gitdir")" = "$_s/.git" &&
		test "$(git -C "$_s" rev-parse --abbrev-ref HEAD)" = HEAD || return 1
	done &&
	test -z "$(git -C "$1" branch --list "run/*")" &&
	{ git -C "$1" fsck --no-progress >"$TRASH/fsck.out" 2>&1 || { cat "$TRASH/fsck.out" >&2; false; }; } &&
	{ sluice -C "$1" audit >"$TRASH/audit.out" 2>&1 || { cat "$TRASH/audit.out" >&2; false; }; }
}

# A repository outside, and a digest of everything in it (.git included).
outside_digest() { # DIR
	(cd "$1" && find . -printf "%p %y %m %s\n" | LC_ALL=C sort &&
		find . -type f -exec sha256sum {} + | LC_ALL=C sort) | sha256sum
}

test_expect_success 'every slot deleted by hand between ticks' '
	hrepo h1 &&
	rm -rf h1/.system/pool/* &&
	wo h1 P1 && wo h1 P2 && sluice -C h1 tick >tick.out 2>&1 &&
	runs_ok h1 P1 P2 &&
	pool_sane h1 &&
	{ test "$(ls -A h1/.system/pool | wc -l)" = 2 ||
		{ echo "the pool after two runs that met:" && ls -la h1/.system/pool && cat tick.out; false; }; }
'

test_expect_success 'the pool folder deleted by hand' '
	rm -rf h1/.system/pool &&
	wo h1 C && sluice -C h1 tick >tick.out 2>&1 &&
	runs_ok h1 C &&
	pool_sane h1
'

test_expect_success 'a slot removed with git worktree remove --force, another deleted and git worktree prune' '
	hrepo h2 &&
	s1=$(slot h2 1) && s2=$(slot h2 2) &&
	git -C h2 worktree remove --force "$s1" &&
	rm -rf "$s2" && git -C h2 worktree prune &&
	wo h2 A && wo h2 B && sluice -C h2 tick >tick.out 2>&1 &&
	runs_ok h2 A B &&
	pool_sane h2
'

test_expect_success 'a slot whose .git points at another repository: that repository is not touched' '
	hrepo h3 &&
	test_repo foreign && (cd foreign && echo precious >precious.txt && echo local >>README.md) &&
	outside_digest foreign >foreign.before &&
	s1=$(slot h3 1) && s2=$(slot h3 2) &&
	echo "gitdir: $TRASH/foreign/.git" >"$s1/.git" &&
	echo "gitdir: $TRASH/h3/.git/worktrees/${s1##*/}" >"$s2/.git" &&
	wo h3 A && wo h3 B && sluice -C h3 tick >tick.out 2>&1 &&
	outside_digest foreign >foreign.after &&
	test_cmp foreign.before foreign.after &&
	runs_ok h3 A B &&
	wo h3 C && wo h3 D && sluice -C h3 tick >tick.out 2>&1 &&
	runs_ok h3 C D &&
	outside_digest foreign >foreign.after &&
	test_cmp foreign.before foreign.after &&
	pool_sane h3
'

test_expect_success 'a slot replaced by a symbolic link to a folder outside: nothing there is changed' '
	hrepo h4 &&
	s1=$(slot h4 1) && s2=$(slot h4 2) &&
	mkdir outside outside2 && cp -a "$s1/." outside/ && cp -a "$s2/." outside2/ &&
	echo precious >outside/precious.txt && echo precious >outside2/precious.txt &&
	echo precious >outside/S1.txt && echo precious >outside2/S2.txt &&
	rm -rf "$s1" "$s2" && ln -s "$TRASH/outside" "$s1" && ln -s "$TRASH/outside2" "$s2" &&
	outside_digest outside >o1.before && outside_digest outside2 >o2.before &&
	wo h4 A && wo h4 B && sluice -C h4 tick >tick.out 2>&1 &&
	outside_digest outside >o1.after && outside_digest outside2 >o2.after &&
	test_cmp o1.before o1.after && test_cmp o2.before o2.after &&
	runs_ok h4 A B &&
	pool_sane h4 &&
	sluice -C h4 gc </dev/null >gc.out 2>&1 &&
	test -z "$(ls -A h4/.system/pool)" &&
	outside_digest outside >o1.after && test_cmp o1.before o1.after
'

test_expect_success 'the pool folder replaced by a symbolic link to a folder outside: nothing goes there' '
	hrepo h5 &&
	mkdir elsewhere && echo precious >elsewhere/precious.txt &&
	mv h5/.system/pool/* elsewhere/ &&
	rmdir h5/.system/pool && ln -s "$TRASH/elsewhere" h5/.system/pool &&
	outside_digest elsewhere >e.before &&
	wo h5 A && wo h5 B && sluice -C h5 tick >tick.out 2>&1 &&
	outside_digest elsewhere >e.after &&
	test_cmp e.before e.after &&
	runs_ok h5 A B &&
	wo h5 C && sluice -C h5 tick >tick.out 2>&1 &&
	runs_ok h5 C &&
	outside_digest elsewhere >e.after &&
	test_cmp e.before e.after
'

test_expect_success 'a slot locked by the person (git worktree lock) is left alone' '
	hrepo h6 &&
	s1=$(slot h6 1) && s2=$(slot h6 2) &&
	git -C h6 worktree lock --reason mine "$s1" &&
	git -C h6 worktree lock --reason mine "$s2" &&
	outside_digest "$s1" >l1.before &&
	wo h6 A && wo h6 B && sluice -C h6 tick >tick.out 2>&1 &&
	runs_ok h6 A B &&
	test -d "$s1" && outside_digest "$s1" >l1.after && test_cmp l1.before l1.after &&
	git -C h6 worktree list --porcelain | grep -qx "worktree $s1" &&
	test "$(cat "h6/.git/worktrees/${s1##*/}/locked")" = mine
'

test_expect_success 'what a killed write left in the pool (an intent half written) goes with the next tick and gc' '
	hrepo h7 &&
	s1=$(slot h7 1) &&
	echo 20261124-000000-abcdefgh >"$s1.take.tmp.99999" &&
	echo 20261124-000000-abcdefgh >"$s1.put.tmp.99998" &&
	wo h7 A && sluice -C h7 tick >tick.out 2>&1 &&
	runs_ok h7 A &&
	{ test -z "$(ls -A h7/.system/pool | grep "\.tmp\.")" ||
		{ echo "left in the pool after a tick:" >&2; ls -A h7/.system/pool >&2; return 1; }; } &&
	echo 20261124-000000-abcdefgh >"$s1.take.tmp.99999" &&
	sluice -C h7 gc </dev/null >gc.out 2>&1 &&
	{ test -z "$(ls -A h7/.system/pool)" ||
		{ echo "left in the pool after gc:" >&2; ls -A h7/.system/pool >&2; return 1; }; }
'

test_done
