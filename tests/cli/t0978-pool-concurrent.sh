#!/bin/sh
# The worktree pool (issue 14) with everything at once: two ticks with two
# workers each, and meanwhile `sluice worktree cleanup --pool`, `sluice
# worktree pool` and `sluice gc` over and over, for three rounds of six work
# orders. No timing is asserted: whatever the interleaving, every work order
# lands once, each builder runs in its own run's worktree (its own entry)
# and never finds another run's file there, and the pool and git agree at
# the end (each slot a registered detached worktree, `git worktree prune
# --dry-run -v` silent, `git fsck` and `sluice audit` clean).
. "$(dirname "$0")/lib.sh"

WOS=""
for round in 1 2 3; do
	for i in 1 2 3 4 5 6; do
		w=W$round$i && WOS="$WOS $w" &&
		cat >"$BUILDERS/$w.sh" <<-EOS
		echo "\$SLUICE_RUN_ID \$(git rev-parse --absolute-git-dir) \$(pwd -P)" >>"\$SLUICE_RUN_DIR/../../seen.log"
		echo "\$SLUICE_RUN_ID" >"\$SLUICE_RUN_ID.owner"
		sleep 0.1
		for o in *.owner; do
			case \$o in *\$SLUICE_RUN_ID*) ;; *) echo "FOUND \$SLUICE_RUN_ID \$o" >>"\$SLUICE_RUN_DIR/../../seen.log" ;; esac
		done
		echo $w >$w.txt
		EOS
	done
done

test_expect_success 'setup: a pool of two' '
	sluice_repo repo "$(approve_reviewer_config)" "worktree:" "  pool: 2" &&
	printf "*.owner\n" >repo/.gitignore && git -C repo add .gitignore && git -C repo commit -q -m ignore
'

for round in 1 2 3; do
	test_expect_success "round $round: two ticks, and cleanup --pool, pool and gc meanwhile" "
		for i in 1 2 3 4 5 6; do wo repo W$round\$i || return 1; done &&
		{ sluice -C repo tick --jobs 2 >tick1-$round.out 2>&1 & } && t1=\$! &&
		{ sluice -C repo tick --jobs 2 >tick2-$round.out 2>&1 & } && t2=\$! &&
		n=0 &&
		while kill -0 \$t1 2>/dev/null || kill -0 \$t2 2>/dev/null; do
			case \$((n % 8)) in
			3) sluice -C repo worktree cleanup --pool >>others.out 2>&1 ;;
			7) sluice -C repo gc </dev/null >>others.out 2>&1 ;;
			*) sluice -C repo worktree pool >>others.out 2>&1 ;;
			esac
			n=\$((n + 1)) && sleep 0.05
		done &&
		wait &&
		settle repo &&
		for i in 1 2 3 4 5 6; do
			test \"\$(merges_of repo W$round\$i)\" = 1 || return 1
		done
	"
done

test_expect_success 'every builder in its own worktree, never another run'"'"'s file' '
	! grep "^FOUND" repo/.system/seen.log &&
	test "$(wc -l <repo/.system/seen.log)" -ge 18 &&
	while read -r r g p; do
		test "$g" = "$TRASH/repo/.git/worktrees/$r" &&
		test "$p" = "$TRASH/repo/.system/runs/$r/worktree" ||
			{ echo "run $r built in $p ($g)" >&2; return 1; }
	done <repo/.system/seen.log
'

test_expect_success 'the pool and git agree' '
	for r in $(sluice -C repo runs | cut -d" " -f1); do
		if sluice -C repo log $r | grep -q "worktree from the pool"; then echo $r; fi
	done >pooled &&
	echo "# $(wc -l <pooled) of 18 runs took a worktree from the pool" >&3 &&
	test "$(sluice -C repo runs --state merged | wc -l)" = 18 &&
	test -z "$(git -C repo worktree prune --dry-run -v 2>&1)" &&
	git -C repo worktree list --porcelain | sed -n "s/^worktree //p" | tail -n +2 | sort >listed &&
	ls -A repo/.system/pool | sed "s|^|$TRASH/repo/.system/pool/|" | sort >slots &&
	test_cmp slots listed &&
	test "$(wc -l <slots)" -le 2 &&
	test "$(ls -A repo/.git/worktrees | wc -l)" = "$(wc -l <slots)" &&
	test -z "$(git -C repo branch --list "run/*")" &&
	test -z "$(find repo/.git -name "*.lock")" &&
	git -C repo fsck --no-progress >fsck.out 2>&1 &&
	sluice -C repo audit >audit.out 2>&1
' 3>&1

test_done
