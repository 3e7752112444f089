#!/bin/sh
# The worktree pool under kill -9 at random moments (issue 14): ticks with
# two workers are started and killed with everything they started after a
# seeded random delay, over and over, while ten work orders take worktrees
# from a pool of two and give them back. Then ticks as cron runs them until
# the queue settles, and: every work order landed once, each builder ran in
# its own run's worktree (its own .git/worktrees/<run> entry) and never found
# another run's file there, the pool holds at most two slots, each a
# registered detached worktree, nothing else is left under .system that git
# or sluice does not account for, `git worktree prune --dry-run -v` says
# nothing, `git fsck` and `sluice audit` hold. (A temporary file of an
# atomic write cut short by the kill is not counted here: t0975 plants one
# and checks that sluice removes it.) Replay a failure with its seed
# (SLUICE_KILL_SEED); SLUICE_TEST_STRESS=1 takes a new seed and more kills.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool setsid pkill
if [ "${SLUICE_TEST_STRESS:-0}" = 1 ]; then
	SEED=${SLUICE_KILL_SEED:-$$}
	KILLS=${SLUICE_KILL_COUNT:-60}
else
	SEED=${SLUICE_KILL_SEED:-7}
	KILLS=${SLUICE_KILL_COUNT:-20}
fi
WOS="1 2 3 4 5 6 7 8 9 10"
echo "# seed $SEED, at most $KILLS killed ticks"

test_expect_success 'setup: ten work orders, a pool of two, a dirty checkout' '
	fault_repo repo "$(approve_reviewer_config)" &&
	sed -i "s/^worktree:\$/worktree:\n  pool: 2/" repo/.system/config.yaml &&
	test_grep "^  pool: 2" repo/.system/config.yaml &&
	printf "*.owner\nnode_modules/\n" >repo/.gitignore && git -C repo add .gitignore &&
	git -C repo commit -q -m ignore &&
	for i in $WOS; do
		cat >"$BUILDERS/R$i.sh" <<-EOS &&
		echo "\$SLUICE_RUN_ID \$(git rev-parse --absolute-git-dir) \$(pwd -P)" >>"$TRASH/seen.log"
		echo "\$SLUICE_RUN_ID" >"\$SLUICE_RUN_ID.owner"
		mkdir -p node_modules && echo dep >node_modules/dep-\$SLUICE_RUN_ID
		sleep 0.05
		for o in *.owner; do [ "\$o" = "\$SLUICE_RUN_ID.owner" ] || echo "SHARED \$SLUICE_RUN_ID \$o" >>"$TRASH/seen.log"; done
		echo $i >file$i.txt
		EOS
		wo repo R$i || return 1
	done
'

test_expect_success 'ticks killed at random moments: every work order merged once' '
	kill_ticks repo "$SEED" "$KILLS" 150 10 "--jobs 2" >&3 &&
	settle repo &&
	test "$(sluice -C repo runs --state merged | wc -l)" = 10 &&
	for i in $WOS; do test "$(merges_of repo R$i)" = 1 || return 1; done &&
	cmp "$TRASH/notes.orig" repo/notes.txt
' 3>&1

test_expect_success 'each builder ran in its own worktree, none was shared' '
	! grep "^SHARED" seen.log &&
	while read -r r g p; do
		test "$g" = "$TRASH/repo/.git/worktrees/$r" &&
		test "$p" = "$TRASH/repo/.system/runs/$r/worktree" ||
			{ echo "run $r built in $p ($g)" >&2; return 1; }
	done <seen.log
'

test_expect_success 'the pool is consistent: no slot lost or leaked, git agrees' '
	{ ls -la repo/.system/pool repo/.git/worktrees; git -C repo worktree list --porcelain; } >pool.state 2>&1 &&
	git -C repo worktree prune --dry-run -v >prune.out 2>&1 &&
	{ test ! -s prune.out || { echo "git would prune:" && cat prune.out pool.state; false; }; } &&
	git -C repo worktree list --porcelain | sed -n "s/^worktree //p" | tail -n +2 | sort >listed &&
	ls -A repo/.system/pool | grep -v "\.tmp\.[0-9]*\$" | sed "s|^|$TRASH/repo/.system/pool/|" | sort >slots &&
	test_cmp slots listed &&
	{ test "$(wc -l <slots)" -le 2 || { echo "more than 2 slots:" && cat pool.state; false; }; } &&
	{ test "$(ls -A repo/.git/worktrees | wc -l)" = "$(wc -l <slots)" ||
		{ echo ".git/worktrees is not the slots:" && cat pool.state; false; }; } &&
	for s in $(cat slots); do
		g=$(git -C "$s" rev-parse --absolute-git-dir) &&
		test "$(cat "$g/gitdir")" = "$s/.git" &&
		test "$(git -C "$s" rev-parse --abbrev-ref HEAD)" = HEAD ||
		{ echo "slot $s: its gitdir or HEAD is wrong" && cat pool.state; return 1; }
	done &&
	{ test -z "$(find repo/.system -name .git ! -path "repo/.system/pool/*")" ||
		{ echo "a .git outside the pool:" && find repo/.system -name .git ! -path "repo/.system/pool/*"; false; }; } &&
	{ test -z "$(git -C repo branch --list "run/*")" ||
		{ echo "run branches left:" && git -C repo branch --list "run/*"; false; }; } &&
	{ test -z "$(find repo/.git -name "*.lock")" || { echo "locks:" && find repo/.git -name "*.lock"; false; }; } &&
	{ git -C repo fsck --no-progress >fsck.out 2>&1 || { cat fsck.out; false; }; } &&
	{ sluice -C repo audit >audit.out 2>&1 || { cat audit.out; false; }; }
'

test_expect_success 'and the pool still serves: two more runs take what it holds, gc empties it' '
	wo repo R1b && wo repo R2b &&
	for w in R1b R2b; do
		sed "s/file1.txt/$w.txt/" "$BUILDERS/R1.sh" >"$BUILDERS/$w.sh" || return 1
	done &&
	# the slots: not the temporary files a killed tick may leave (as the check above)
	k=$(ls -A repo/.system/pool | grep -v "\.tmp\.[0-9]*\$" | wc -l) &&
	ls -la repo/.system/pool >pool.before &&
	{ sluice -C repo tick --jobs 2 >tick.out 2>&1 || { cat tick.out; false; }; } &&
	taken=0 && for w in R1b R2b; do
		r=$(run_of repo $w) && test "$(state_of repo $r)" = merged ||
			{ echo "$w did not merge:" && cat tick.out; return 1; }
		if sluice -C repo log "$r" | grep -q "worktree from the pool"; then taken=$((taken + 1)); fi
	done &&
	{ test "$taken" -ge "$k" && test "$taken" -ge 1 ||
		{ echo "$taken runs took a worktree from a pool of $k:" && cat pool.before tick.out; false; }; } &&
	{ sluice -C repo gc </dev/null >gc.out 2>&1 || { cat gc.out; false; }; } &&
	test -z "$(ls -A repo/.system/pool 2>/dev/null | grep -v "\.tmp\.[0-9]*\$")" &&
	test "$(git -C repo worktree list | wc -l)" = 1 &&
	test -z "$(ls -A repo/.git/worktrees 2>/dev/null)"
'

test_done
