#!/bin/sh
# record-worktree.sh DIR OUT: what the worktree DIR holds, into files in OUT,
# for comparing a worktree from the pool with a fresh checkout (t0970,
# t0976): status, index and its flags, every path with its type, mode and
# bytes (and tree-git without the modes git does not track), the git dir,
# git state files, ORIG_HEAD, the HEAD reflog, HEAD, the folder's inode and
# the worktree config. Run by the builders and on the fresh worktree.
wt=$1 out=$2
mkdir -p "$out" && cd "$wt" || exit 1
git status --porcelain --ignored --untracked-files=all >"$out/status" 2>&1
git ls-files -s >"$out/index" 2>&1
git ls-files -v | grep -v '^H ' >"$out/flags"
git diff-index --cached HEAD >"$out/diff-index" 2>&1
find . -path ./.git -prune -o ! -path . -print | LC_ALL=C sort | while IFS= read -r p; do
	if [ -L "$p" ]; then echo "$p link $(readlink "$p")"
	elif [ -d "$p" ]; then echo "$p dir $(stat -c %a "$p")"
	else echo "$p file $(stat -c %a "$p") $(sha256sum <"$p" | cut -c1-64)"
	fi
done >"$out/tree"
# the same without the permissions git does not track (folders; a file's
# bits but the executable one)
sed -e 's/ dir [0-7]*$/ dir/' -e 's/ file [0-7]\{0,1\}[1357][0-7][0-7] / file x /' \
	-e 's/ file [0-7]\{3,4\} / file - /' "$out/tree" >"$out/tree-git"
gd=$(git rev-parse --absolute-git-dir)
echo "$gd" >"$out/git-dir"
for f in MERGE_HEAD MERGE_MSG MERGE_MODE CHERRY_PICK_HEAD REVERT_HEAD REBASE_HEAD BISECT_LOG \
	config.worktree info/sparse-checkout rebase-merge rebase-apply; do
	[ ! -e "$gd/$f" ] || echo "$f"
done >"$out/git-state"
[ ! -e "$gd/ORIG_HEAD" ] || cat "$gd/ORIG_HEAD" >"$out/orig-head"
[ ! -e "$gd/logs/HEAD" ] || cat "$gd/logs/HEAD" >"$out/reflog"
git symbolic-ref HEAD >"$out/head-ref" 2>&1
git rev-parse HEAD >"$out/head"
git config --worktree --list >"$out/wt-config" 2>/dev/null
stat -c %i . >"$out/inode"
