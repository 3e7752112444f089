#!/bin/sh
# worktree.recycle (issue 14): what a pooled worktree keeps of the run before.
# `clean` (the default) keeps nothing: ignored files (node_modules/, build/)
# go with the untracked ones; `keep-ignored` keeps the ignored ones, byte for
# byte, and removes every untracked file that is not ignored (here: tmp/,
# ignored at the old base and not at the new one), also in a read-only
# folder; an ignored repository of its own (node_modules/gitdep) is kept.
# (An untracked repository in a merged run's worktree keeps it out of the
# pool: t0970 checks one with an abandoned run.) In both the tracked files are those of the base, also a
# path that was ignored in the old worktree and is tracked at the new base.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool jq

# A: the dependencies and the build output a gate would make (one folder
# read-only), leftovers the snapshot does not commit (tmp/, ignored at A's
# base and not at B's, one folder read-only), and its own file.
cat >"$BUILDERS/A.sh" <<'EOS'
stat -c %i . >"$SEEN/A.inode"
mkdir -p node_modules/dep build/obj gen && echo dep >node_modules/dep/index.js &&
echo obj >build/obj/a.o && echo gen >gen/x.txt && echo log >debug.log &&
mkdir -p node_modules/gitdep && git -C node_modules/gitdep init -q &&
mkdir -p build/ro && echo r >build/ro/r.txt && chmod 555 build/ro &&
mkdir -p tmp/sub tmp/ro && echo t >tmp/sub/t.txt && echo r >tmp/ro/r.txt && chmod 555 tmp/ro &&
echo A >A.txt
EOS
# B: what it finds; then its own file.
cat >"$BUILDERS/B.sh" <<'EOS'
stat -c %i . >"$SEEN/B.inode"
git status --porcelain --ignored --untracked-files=normal >"$SEEN/B.status"
for f in node_modules/dep/index.js build/obj/a.o debug.log node_modules/gitdep/.git \
	build/ro/r.txt tmp/sub/t.txt tmp/ro/r.txt gen/x.txt; do
	[ ! -e "$f" ] || echo "$f $(cat "$f" 2>/dev/null)"
done >"$SEEN/B.files"
git diff HEAD --stat >"$SEEN/B.diff"
echo B >B.txt
EOS

# recycle_repo DIR [recycle line]: a repository whose main gets, after A,
# a commit that tracks gen/x.txt (ignored in A's worktree) with other bytes
# and no longer ignores tmp/.
recycle_repo() {
	sluice_repo "$1" "$(approve_reviewer_config)" "worktree:" "  pool: 2" ${2:+"  recycle: $2"} &&
	printf "node_modules/\nbuild/\ngen/\ntmp/\n*.log\n" >"$1/.gitignore" &&
	git -C "$1" add .gitignore && git -C "$1" commit -q -m ignores
}

# run_ab DIR: A, then a commit on main, then B; B took A's worktree.
run_ab() {
	SEEN=$TRASH/seen-$1 && export SEEN && rm -rf "$SEEN" && mkdir -p "$SEEN" &&
	wo "$1" A && sluice -C "$1" tick >"$TRASH/tick-$1.out" 2>&1 &&
	test "$(state_of "$1" "$(run_of "$1" A)")" = merged &&
	mkdir -p "$1/gen" && echo tracked >"$1/gen/x.txt" && git -C "$1" add -f gen/x.txt &&
	sed -i /tmp/d "$1/.gitignore" && git -C "$1" add .gitignore &&
	git -C "$1" commit -q -m "track gen/x.txt, do not ignore tmp/" &&
	wo "$1" B && sluice -C "$1" tick >>"$TRASH/tick-$1.out" 2>&1 &&
	b=$(run_of "$1" B) && test "$(state_of "$1" "$b")" = merged &&
	test "$(cat "$SEEN/A.inode")" = "$(cat "$SEEN/B.inode")" &&
	sluice -C "$1" log "$b" >"$TRASH/log-$1" && test_grep "worktree from the pool" "$TRASH/log-$1" &&
	test ! -s "$SEEN/B.diff" &&
	test "$(git -C "$1" show "$(git -C "$1" rev-parse main)^2" --format= --name-only)" = B.txt
}

test_expect_success 'clean (the default): nothing of the run before is left, ignored files too' '
	recycle_repo dflt &&
	run_ab dflt &&
	test ! -s "$SEEN/B.status" &&
	echo "gen/x.txt tracked" >want && test_cmp want "$SEEN/B.files"
'

test_expect_success 'recycle: clean, said: the same' '
	recycle_repo clean clean &&
	run_ab clean &&
	test ! -s "$SEEN/B.status" &&
	echo "gen/x.txt tracked" >want && test_cmp want "$SEEN/B.files"
'

test_expect_success 'recycle: keep-ignored keeps the ignored files, removes every untracked one' '
	recycle_repo keep keep-ignored &&
	run_ab keep &&
	printf "%s\n" "build/obj/a.o obj" "build/ro/r.txt r" "debug.log log" "gen/x.txt tracked" \
		"node_modules/dep/index.js dep" "node_modules/gitdep/.git " >want.raw &&
	sort want.raw >want && sort "$SEEN/B.files" >got && test_cmp want got &&
	printf "%s\n" "!! build/" "!! debug.log" "!! node_modules/" >want &&
	test_cmp want "$SEEN/B.status"
'

test_expect_success 'sluice check accepts both values and refuses another' '
	sluice -C keep check >out 2>&1 &&
	sed -i "s/^  pool: 2\$/  pool: 2\n  recycle: sometimes/" dflt/.system/config.yaml &&
	test_grep "recycle: sometimes" dflt/.system/config.yaml &&
	! sluice -C dflt check >out 2>&1 &&
	test_grep "recycle" out
'

test_done
