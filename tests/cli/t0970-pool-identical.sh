#!/bin/sh
# The worktree pool (issue 14): a run that takes a pooled worktree gets one
# identical to a fresh checkout of its base, whatever the run before it left
# there. A builder litters its worktree every way a user or an agent could:
# untracked files and folders (one a repository of its own, which the
# snapshot leaves out), ignored files, tracked files modified (one with its
# size kept and its mtime set back), deleted, made executable, replaced by a
# symbolic link, a folder replaced by a file, read-only folders (tracked,
# untracked and ignored), index bits that hide changes (skip-worktree,
# assume-unchanged), a stash, a MERGE_HEAD and an ORIG_HEAD left behind, a
# worktree-only config. The run then merges (first case) or is abandoned
# (second case, so that the next base is one the pooled worktree no longer
# matches), and the next run's builder records what it finds: the same
# status, index, index flags and files (bytes, executable bits, types) as
# a fresh `git worktree add --detach` of its base; its own branch at its
# base, its own entry .git/worktrees/<run>; no git state and no reflog of the
# run before; a diff.patch with only its own change; and (tests of their
# own) the permissions git does not track: files and folders as a fresh
# checkout makes them, whatever chmod the run before did. That the worktree did
# come from the pool is checked by the inode of the worktree folder (a
# rename keeps it) and by the event log.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool jq sha256sum stat

# record.sh DIR OUT: what a worktree holds (tests/cli/record-worktree.sh).
cp "$SLUICE_SOURCE_DIR/tests/cli/record-worktree.sh" "$TRASH/record.sh"

# litter.sh S [no-nested]: everything a builder can leave in its worktree,
# on the files of set S (the setup makes sets 1 and 2: a merged litter
# changes set 1). A repository of its own in the worktree keeps a merged
# run's worktree out of the pool (sluice keeps it, with a warning, as it
# cannot be committed): the merged case leaves it out (no-nested).
cat >"$TRASH/litter.sh" <<'EOS'
S=$1
# untracked files and folders, one a repository of its own
echo u >untracked$S.txt && mkdir -p udir$S/sub && echo x >udir$S/sub/f.txt &&
if [ "$2" != no-nested ]; then
	mkdir nested$S && git -C nested$S init -q && echo n >nested$S/n.txt &&
	git -C nested$S add n.txt && git -C nested$S commit -q -m nested || exit 1
fi &&
# ignored files (.gitignore: node_modules/, build/, *.log)
mkdir -p node_modules/pkg$S build/obj$S && echo dep >node_modules/pkg$S/index.js &&
echo obj >build/obj$S/a.o && echo log >debug$S.log && echo log >src/deep$S.log &&
# a stash (a change stashed away, the file back as it was)
echo stashed >>stash$S.txt && git stash -q &&
# tracked files modified, one with its size and mtime kept
echo changed >>a$S.txt &&
m=$(stat -c %Y same$S.txt) && printf 'SAME-1\n' >same$S.txt && touch -d "@$m" same$S.txt &&
# deleted, mode changed, replaced by a link, a folder replaced by a file
rm del$S.txt && chmod +x mode$S.sh &&
rm tolink$S.txt && ln -s a$S.txt tolink$S.txt &&
rm -r dir$S && echo "now a file" >dir$S &&
# permissions git does not track: a file read-only, a file and a folder private
chmod 444 perm-ro$S.txt && chmod 600 perm-private$S.txt && chmod 700 permdir$S &&
# index bits that hide a change from status
echo hidden >>skip$S.txt && git update-index --skip-worktree skip$S.txt &&
echo hidden >>assume$S.txt && git update-index --assume-unchanged assume$S.txt &&
# read-only folders: untracked, ignored, tracked
mkdir rodir$S && echo r >rodir$S/r.txt && chmod 555 rodir$S &&
mkdir -p build/ro$S && echo r >build/ro$S/r.txt && chmod 555 build/ro$S &&
chmod 555 rotracked$S &&
# git state left behind
gd=$(git rev-parse --absolute-git-dir) &&
git rev-parse HEAD >"$gd/MERGE_HEAD" && echo "Merge stale" >"$gd/MERGE_MSG" &&
git rev-parse HEAD >"$gd/ORIG_HEAD" &&
{ git config --worktree litter.key litter-value 2>/dev/null || true; }
EOS

# A builder that records its worktree, then adds its own file.
recording_builder() { # WO
	printf '%s\n' "sh \"$TRASH/record.sh\" . \"$TRASH/seen/$1\"" "echo $1 >$1.txt" >"$BUILDERS/$1.sh"
}

# A builder that records its worktree, litters it, then adds its own file.
littering_builder() { # WO SET [no-nested]
	printf '%s\n' "sh \"$TRASH/record.sh\" . \"$TRASH/seen/$1\"" \
		"sh -e \"$TRASH/litter.sh\" $2 ${3:-} || exit 1" "echo $1 >$1.txt" >"$BUILDERS/$1.sh"
}

field() { # RUN FIELD
	sluice -C repo status --json "$1" | jq -r ".$2"
}

# compare_fresh RUN WO: what WO's builder saw against a fresh worktree of the
# run's base, and the rest of the promises. Every promise is checked and
# each broken one named, so that one does not hide another.
compare_fresh() {
	_run=$1 _wo=$2 _seen=$TRASH/seen/$2 _bad=0
	_base=$(field "$_run" base_commit) &&
	rm -rf "$TRASH/fresh" "$TRASH/seen/fresh-$_wo" &&
	git -C repo worktree add -q --detach "$TRASH/fresh" "$_base" &&
	sh "$TRASH/record.sh" "$TRASH/fresh" "$TRASH/seen/fresh-$_wo" &&
	git -C repo worktree remove --force "$TRASH/fresh" || return 1
	for f in status index flags diff-index tree-git; do
		test_cmp "$TRASH/seen/fresh-$_wo/$f" "$_seen/$f" >&2 ||
			{ echo "$f differs from a fresh checkout" >&2; _bad=1; }
	done
	test ! -s "$_seen/status" && test ! -s "$_seen/flags" || _bad=1
	test "$(cat "$_seen/git-dir")" = "$TRASH/repo/.git/worktrees/$_run" ||
		{ echo "git dir $(cat "$_seen/git-dir")" >&2; _bad=1; }
	test "$(cat "$_seen/head-ref")" = "refs/heads/run/$_wo-${_run##*-}" &&
	test "$(cat "$_seen/head-ref")" = "refs/heads/$(field "$_run" branch_name)" ||
		{ echo "HEAD is $(cat "$_seen/head-ref")" >&2; _bad=1; }
	test "$(cat "$_seen/head")" = "$_base" || { echo "HEAD is not the base" >&2; _bad=1; }
	test ! -s "$_seen/git-state" || { echo "git state left:" >&2; cat "$_seen/git-state" >&2; _bad=1; }
	test ! -s "$_seen/wt-config" || { echo "worktree config left:" >&2; cat "$_seen/wt-config" >&2; _bad=1; }
	test ! -e "$_seen/orig-head" || test "$(cat "$_seen/orig-head")" = "$_base" ||
		{ echo "ORIG_HEAD is not the base" >&2; _bad=1; }
	return $_bad
}

# no_history_of SEEN-WO RUN: the reflog WO's builder saw names no commit of
# RUN (its branch's own commits) and not RUN itself.
no_history_of() {
	_prev_base=$(field "$2" base_commit) && _prev_head=$(field "$2" head_commit) &&
	test "$_prev_head" != null &&
	for c in $(git -C repo rev-list "$_prev_base..$_prev_head") $2; do
		if grep -q "$c" "$TRASH/seen/$1/reflog" "$TRASH/seen/$1/orig-head" 2>/dev/null; then
			echo "the reflog of the new run carries $c of run $2:" >&2
			cat "$TRASH/seen/$1/reflog" >&2
			return 1
		fi
	done
}

only_own_diff() { # RUN WO
	grep "^diff --git" "repo/.system/runs/$1/diff.patch" >"$TRASH/diff-heads" &&
	echo "diff --git a/$2.txt b/$2.txt" >"$TRASH/diff-want" &&
	test_cmp "$TRASH/diff-want" "$TRASH/diff-heads"
}

from_pool() { # RUN PREV-WO NEW-WO: the run took PREV-WO's worktree from the pool
	test "$(cat "$TRASH/seen/$2/inode")" = "$(cat "$TRASH/seen/$3/inode")" ||
		{ echo "run $1 did not get the pooled worktree (another inode)" >&2; return 1; }
	sluice -C repo log "$1" >"$TRASH/log.out" &&
	test_grep "worktree from the pool" "$TRASH/log.out"
}

test_expect_success 'setup: a repository with files of every kind, a manual reviewer' '
	sluice_repo repo "worktree:" "  pool: 2" "  recycle: clean" &&
	(cd repo && git config extensions.worktreeConfig true &&
	 printf "node_modules/\nbuild/\n*.log\n" >.gitignore &&
	 mkdir src && echo s >src/main.c &&
	 for S in 1 2; do
		seq 1 10 >a$S.txt && printf "same-0\n" >same$S.txt && echo del >del$S.txt &&
		printf "#!/bin/sh\necho hi\n" >mode$S.sh && echo target >tolink$S.txt &&
		mkdir -p dir$S rotracked$S && echo d >dir$S/d.txt &&
		echo ro >rotracked$S/f.txt && echo skip >skip$S.txt && echo assume >assume$S.txt &&
		echo stash >stash$S.txt && echo ro >perm-ro$S.txt && echo p >perm-private$S.txt &&
		mkdir permdir$S && echo d >permdir$S/f.txt || exit 1
	 done &&
	 git add -A && git commit -q -m "files of every kind") &&
	littering_builder L1 1 no-nested && recording_builder N1 &&
	littering_builder L2 2 && recording_builder N2
'

test_expect_success 'the first run gets a fresh worktree (the pool is empty)' '
	wo repo L1 && sluice -C repo tick >tick.out 2>&1 &&
	r=$(run_of repo L1) && test "$(state_of repo $r)" = awaiting_review &&
	compare_fresh "$r" L1 &&
	wt=repo/.system/runs/$r/worktree &&
	test "$(git -C "$wt" config --worktree --get litter.key)" = litter-value &&
	test -f "repo/.git/worktrees/$r/MERGE_HEAD" && test -L "$wt/tolink1.txt" &&
	test -f "$wt/node_modules/pkg1/index.js" &&
	git -C "$wt" ls-files -v | grep -q "^S skip1.txt" &&
	sluice -C repo log "$r" >log.out && test_grep -v "worktree from the pool" log.out
'

test_expect_success 'a littering run merges: the next run takes its worktree, identical to a fresh checkout' '
	l=$(run_of repo L1) && sluice -C repo approve "$l" >/dev/null &&
	sluice -C repo tick >tick.out 2>&1 && test "$(state_of repo $l)" = merged &&
	wo repo N1 && sluice -C repo tick >tick.out 2>&1 &&
	n=$(run_of repo N1) && test "$(state_of repo $n)" = awaiting_review &&
	from_pool "$n" L1 N1 &&
	compare_fresh "$n" N1 &&
	no_history_of N1 "$l" &&
	only_own_diff "$n" N1
'

same_modes() { # WO: the permissions of WO's worktree are those of a fresh checkout
	test_cmp "$TRASH/seen/fresh-$1/tree" "$TRASH/seen/$1/tree"
}

test_expect_success 'and its files and folders have the permissions of a fresh checkout' '
	same_modes N1
'

test_expect_success 'the run merges with only its own change' '
	n=$(run_of repo N1) && sluice -C repo approve "$n" >/dev/null &&
	sluice -C repo tick >tick.out 2>&1 && test "$(state_of repo $n)" = merged &&
	git -C repo diff --name-only "$(field $n merge_commit)^1" "$(field $n merge_commit)" >names &&
	echo N1.txt >want && test_cmp want names
'

test_expect_success 'a littering run abandoned: the next run (on a base it no longer matches) is identical too' '
	wo repo L2 && sluice -C repo tick >tick.out 2>&1 &&
	l=$(run_of repo L2) && test "$(state_of repo $l)" = awaiting_review &&
	from_pool "$l" N1 L2 &&
	: "N1 merged clean: only what differs from its commit is written (L1 hid changes: in full)" &&
	test_grep "worktree from the pool at [0-9a-f]* (0 paths rewritten)" log.out &&
	sluice -C repo log "$(run_of repo N1)" >log-n1.out &&
	test_grep "worktree from the pool (reset in full)" log-n1.out &&
	sluice -C repo abandon "$l" >abandon.out 2>&1 &&
	test "$(state_of repo $l)" = abandoned &&
	wo repo N2 && sluice -C repo tick >tick.out 2>&1 &&
	n=$(run_of repo N2) && test "$(state_of repo $n)" = awaiting_review &&
	from_pool "$n" L2 N2 &&
	test_grep "worktree from the pool (reset in full)" log.out &&
	compare_fresh "$n" N2 &&
	no_history_of N2 "$l" &&
	only_own_diff "$n" N2 &&
	sluice -C repo approve "$n" >/dev/null && sluice -C repo tick >tick.out 2>&1 &&
	test "$(state_of repo $n)" = merged &&
	git -C repo fsck --no-progress >fsck.out 2>&1 && sluice -C repo audit >audit.out
'

test_expect_success 'and its files and folders have the permissions of a fresh checkout' '
	same_modes N2
'

test_done
