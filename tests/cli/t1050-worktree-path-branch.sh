#!/bin/sh
# sluice worktree create --path [--branch] [--base]: Smithers' worktree
# options (seeds/004): an existing branch checked out, a missing one made at
# the base, a detached HEAD without --branch, idempotent at the same path,
# the WorktreeExecutionResult in the JSON, hooks off while creating.
. "$(dirname "$0")/lib.sh"

json_field() { # FIELD FILE: the string or literal value of "FIELD" in pretty JSON
	sed -n "s/^ *\"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$2"
}

wt_state() { # DIR: everything about the repository's worktrees and branches
	git -C "$1" worktree list --porcelain
	git -C "$1" for-each-ref --format='%(refname) %(objectname)'
	ls -la "$1/.git/worktrees"/* 2>/dev/null
}

test_expect_success 'setup: a repository with two commits and a branch at the first' '
	test_repo repo &&
	(cd repo && echo one >f.txt && git add f.txt && git commit -q -m second &&
	 git branch existing HEAD~1) &&
	FIRST=$(git -C repo rev-parse HEAD~1) && SECOND=$(git -C repo rev-parse HEAD) &&
	echo "$FIRST" >first && echo "$SECOND" >second
'
FIRST=$(cat "$TRASH/first" 2>/dev/null) SECOND=$(cat "$TRASH/second" 2>/dev/null)

test_expect_success 'the Smithers example: two feature worktrees side by side on new branches' '
	(cd repo && sluice worktree create --path ./worktrees/feature-a --branch feature-a >../a.json 2>../a.err &&
	 sluice worktree create --path ./worktrees/feature-b --branch feature-b >../b.json 2>../b.err) &&
	test "$(json_field success a.json)" = true &&
	test "$(json_field worktreePath a.json)" = "$TRASH/repo/worktrees/feature-a" &&
	test "$(json_field branch a.json)" = feature-a &&
	test "$(json_field created a.json)" = true &&
	test "$(json_field cleanedUp a.json)" = false &&
	test "$(json_field head a.json)" = "$SECOND" &&
	test "$(json_field worktreePath b.json)" = "$TRASH/repo/worktrees/feature-b" &&
	test "$(git -C repo/worktrees/feature-a symbolic-ref HEAD)" = refs/heads/feature-a &&
	test "$(git -C repo/worktrees/feature-b symbolic-ref HEAD)" = refs/heads/feature-b &&
	test "$(git -C repo rev-parse feature-a)" = "$SECOND" &&
	test -f repo/worktrees/feature-a/f.txt &&
	test -z "$(git -C repo/worktrees/feature-a status --porcelain)" &&
	grep -Fx "sluice: created worktree '\''$TRASH/repo/worktrees/feature-a'\'' on branch '\''feature-a'\''" a.err &&
	test "$(git -C repo symbolic-ref HEAD)" = refs/heads/main &&
	echo a >repo/worktrees/feature-a/a.txt && git -C repo/worktrees/feature-a add a.txt &&
	git -C repo/worktrees/feature-a commit -q -m "feature a" &&
	! test -e repo/worktrees/feature-b/a.txt
'

test_expect_success 'idempotent: the same call again says created false and changes nothing' '
	wt_state repo >before &&
	(cd repo && sluice worktree create --path ./worktrees/feature-a --branch feature-a >../again.json 2>../again.err) &&
	wt_state repo >after &&
	test_cmp before after &&
	test "$(json_field created again.json)" = false &&
	test "$(json_field worktreePath again.json)" = "$TRASH/repo/worktrees/feature-a" &&
	test "$(json_field branch again.json)" = feature-a &&
	test "$(json_field head again.json)" = "$(git -C repo rev-parse feature-a)" &&
	test -f repo/worktrees/feature-a/a.txt &&
	grep -Fx "sluice: worktree '\''$TRASH/repo/worktrees/feature-a'\'' exists already (on branch '\''feature-a'\''); nothing changed" again.err &&
	(cd repo && sluice worktree create --path "$TRASH/repo/worktrees/feature-a/" --branch feature-a >../abs.json) &&
	test "$(json_field created abs.json)" = false &&
	wt_state repo >after && test_cmp before after
'

test_expect_success 'an existing branch is checked out as it is (--base is for new branches)' '
	(cd repo && sluice worktree create --path wt-existing --branch existing --base main >../out) &&
	test "$(json_field created out)" = true &&
	test "$(json_field head out)" = "$FIRST" &&
	test "$(git -C repo/wt-existing symbolic-ref HEAD)" = refs/heads/existing &&
	test "$(git -C repo rev-parse existing)" = "$FIRST" &&
	! test -e repo/wt-existing/f.txt
'

test_expect_success 'a missing branch is made at --base' '
	(cd repo && sluice worktree create --path wt-new --branch topic/new --base main~1 >../out) &&
	test "$(json_field branch out)" = topic/new &&
	test "$(git -C repo rev-parse topic/new)" = "$FIRST" &&
	test "$(git -C repo/wt-new rev-parse HEAD)" = "$FIRST" &&
	test "$(git -C repo/wt-new symbolic-ref HEAD)" = refs/heads/topic/new
'

test_expect_success 'no --branch: a detached HEAD at HEAD, or at --base; no branch made' '
	git -C repo for-each-ref refs/heads >branches-before &&
	(cd repo && sluice worktree create --path worktrees/detached >../out 2>../err) &&
	test "$(json_field branch out)" = null &&
	test "$(json_field created out)" = true &&
	test "$(json_field head out)" = "$SECOND" &&
	test_expect_failure_code 1 git -C repo/worktrees/detached symbolic-ref -q HEAD &&
	test "$(git -C repo/worktrees/detached rev-parse HEAD)" = "$SECOND" &&
	test_grep "with a detached HEAD at" err &&
	(cd repo && sluice worktree create --path worktrees/old --base existing >../out) &&
	test "$(git -C repo/worktrees/old rev-parse HEAD)" = "$FIRST" &&
	test_expect_failure_code 1 git -C repo/worktrees/old symbolic-ref -q HEAD &&
	git -C repo for-each-ref refs/heads >branches-after &&
	test_cmp branches-before branches-after
'

test_expect_success 'detached, idempotent: created false, even after the HEAD moved' '
	git -C repo/worktrees/detached checkout -q "$FIRST" &&
	wt_state repo >before &&
	(cd repo && sluice worktree create --path worktrees/detached >../out) &&
	wt_state repo >after && test_cmp before after &&
	test "$(json_field created out)" = false &&
	test "$(json_field branch out)" = null &&
	test "$(json_field head out)" = "$FIRST"
'

test_expect_success 'from a subdirectory: a relative path is relative to it; absolute paths outside the repository' '
	mkdir -p repo/sub outside &&
	(cd repo/sub && sluice worktree create --path ../worktrees/from-sub --branch from-sub >../../out) &&
	test "$(json_field worktreePath out)" = "$TRASH/repo/worktrees/from-sub" &&
	(cd repo && sluice worktree create --path "$TRASH/outside/wt" --branch outside >../out) &&
	test "$(json_field worktreePath out)" = "$TRASH/outside/wt" &&
	test "$(git -C outside/wt symbolic-ref HEAD)" = refs/heads/outside &&
	(cd repo/worktrees/feature-b && sluice worktree create --path ../../../outside/wt2 >../../../out) &&
	test "$(json_field worktreePath out)" = "$TRASH/outside/wt2"
'

test_expect_success 'run in another worktree: the repository is the main one, HEAD the main checkout'\''s' '
	test "$(git -C repo/worktrees/feature-a rev-parse HEAD)" != "$SECOND" &&
	(cd repo/worktrees/feature-a && sluice worktree create --path ../from-a >"$TRASH/out") &&
	test "$(json_field worktreePath out)" = "$TRASH/repo/worktrees/from-a" &&
	test "$(json_field head out)" = "$SECOND" &&
	test "$(git -C repo/worktrees/from-a rev-parse --git-common-dir)" = "$TRASH/repo/.git"
'

test_expect_success 'a path with spaces and unicode' '
	(cd repo && sluice worktree create --path "worktrees/mit Leerzeichen ü 漢字" --branch "feature-ü" >../out) &&
	test "$(json_field worktreePath out)" = "$TRASH/repo/worktrees/mit Leerzeichen ü 漢字" &&
	test "$(json_field branch out)" = "feature-ü" &&
	test "$(git -C "repo/worktrees/mit Leerzeichen ü 漢字" symbolic-ref HEAD)" = "refs/heads/feature-ü" &&
	(cd repo && sluice worktree create --path "worktrees/mit Leerzeichen ü 漢字" --branch "feature-ü" >../out) &&
	test "$(json_field created out)" = false
'

test_expect_success 'a stale entry (the folder deleted by hand) is pruned and the worktree made again' '
	rm -rf repo/worktrees/feature-b &&
	(cd repo && sluice worktree create --path ./worktrees/feature-b --branch feature-b >../out) &&
	test "$(json_field created out)" = true &&
	test "$(git -C repo/worktrees/feature-b symbolic-ref HEAD)" = refs/heads/feature-b &&
	test "$(git -C repo worktree list --porcelain | grep -c "^worktree $TRASH/repo/worktrees/feature-b\$")" = 1
'

test_expect_success 'hooks stay off while the worktree is made; the hint is printed' '
	printf "#!/bin/sh\necho ran >>\"%s/hook-ran\"\n" "$TRASH" >repo/.git/hooks/post-checkout &&
	chmod +x repo/.git/hooks/post-checkout &&
	(cd repo && sluice worktree create --path worktrees/hooked --branch hooked >../out 2>../err &&
	 sluice worktree create --path worktrees/hooked-detached >../out 2>>../err) &&
	! test -e hook-ran &&
	test_grep "core.hooksPath GIT_CONFIG_VALUE_0=/dev/null" err &&
	git -C repo/worktrees/hooked checkout -q -b probe && test -e hook-ran
'

test_expect_success '-C DIR: the repository from -C, the path from the current directory' '
	sluice -C repo worktree create --path repo/worktrees/via-c --branch via-c >out &&
	test "$(json_field worktreePath out)" = "$TRASH/repo/worktrees/via-c" &&
	test "$(git -C repo/worktrees/via-c symbolic-ref HEAD)" = refs/heads/via-c
'

test_expect_success 'parallel: four at once, same folder name under different parents' '
	(cd repo &&
	 for i in 1 2 3 4; do
		sluice worktree create --path "par$i/wt" --branch "par$i" >"../par$i.json" 2>&1 &
	 done && wait) &&
	for i in 1 2 3 4; do
		test "$(json_field created par$i.json)" = true &&
		test "$(git -C repo/par$i/wt symbolic-ref HEAD)" = refs/heads/par$i || return 1
	done &&
	test "$(git -C repo worktree list --porcelain | grep -c "^worktree $TRASH/repo/par[1-4]/wt\$")" = 4
'

test_expect_success 'cleanup of such worktrees, also outside the repository; --keep-branch=false' '
	(cd repo && sluice worktree cleanup ./worktrees/feature-b --keep-branch=false >../out) &&
	test "$(json_field removed out)" = true &&
	test "$(json_field branchDeleted out)" = true &&
	! test -e repo/worktrees/feature-b &&
	test -z "$(git -C repo branch --list feature-b)" &&
	(cd repo && sluice worktree cleanup "$TRASH/outside/wt2" >../out) &&
	test "$(json_field path out)" = "$TRASH/outside/wt2" &&
	! test -e outside/wt2 && test -d outside/wt
'

# cleanup under create's lock (no .system/ here: the one in .git): blocked while
# another holds it. The holder holds it until told to let go; cleanup is seen
# waiting once it has the lock file open (it polls for it, sl_lock_acquire)
# and the worktree is still there, however long that takes to happen.
cleanup_under_held_lock() {
	_lock="$TRASH/repo/.git/sluice-worktree.lock"
	flock "$_lock" sh -c ": >'$TRASH/held'; while [ ! -f '$TRASH/let-go' ]; do sleep 0.1; done" &
	_holder=$!
	wait_until "[ -f '$TRASH/held' ]" || return 1
	cd repo && { "$SLUICE" worktree cleanup ./worktrees/locked >../locked.json 2>../locked.err & } &&
	_cleanup=$! && cd .. || return 1
	wait_until "ls -l /proc/$_cleanup/fd 2>/dev/null | grep -q ' -> $_lock\$' ||
		! kill -0 $_cleanup 2>/dev/null" || return 1
	test -d repo/worktrees/locked >still 2>&1 && echo there >still
	: >"$TRASH/let-go"
	wait $_holder
	wait $_cleanup
}

test_expect_success 'cleanup takes the same lock as create: it waits for the holder' '
	test_skip_unless_tool flock &&
	test -f repo/.git/sluice-worktree.lock &&
	sluice -C repo worktree create --path repo/worktrees/locked --branch locked >out &&
	cleanup_under_held_lock &&
	test "$(cat still)" = there &&
	test "$(json_field removed locked.json)" = true &&
	! test -e repo/worktrees/locked
'

test_done
