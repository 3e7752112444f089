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
# Three processes for the whole tree, not three a file: find names each
# path with its type, mode and link target, one sha256sum hashes every file,
# awk puts them together (t0976's 700 files, recorded eleven times, cost
# half a minute of CPU as a loop of stat and sha256sum a file).
tab=$(printf '\t')
find . -path ./.git -prune -o ! -path . -printf '%p\t%y\t%m\t%l\n' |
	LC_ALL=C sort -t "$tab" -k1,1 >"$out/tree.paths"
find . -path ./.git -prune -o ! -path . -type f -print0 | xargs -0 -r sha256sum >"$out/tree.sums"
LC_ALL=C awk -F "$tab" '
	FILENAME == ARGV[1] {
		# "HASH  PATH"; a name with a backslash or a line break is escaped,
		# the line then starting with a backslash
		if (substr($0, 1, 1) == "\\") {
			p = substr($0, 68)
			gsub(/\\\\/, "\\", p)
			sum[p] = substr($0, 2, 64)
		} else {
			sum[substr($0, 67)] = substr($0, 1, 64)
		}
		next
	}
	$2 == "l" { print $1 " link " $4; next }
	$2 == "d" { print $1 " dir " $3; next }
	{ print $1 " file " $3 " " sum[$1] }
' "$out/tree.sums" "$out/tree.paths" >"$out/tree"
rm -f "$out/tree.sums" "$out/tree.paths"
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
