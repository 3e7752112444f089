#!/bin/sh
# Build a repository whose history has the merges git's rename detection
# decides and libgit2 1.5 does not see the same way (DESIGN.md 7, issue 12):
#
#   tests/merge/history.sh DIR      (DIR must not exist; prints nothing)
#
# Topic branches off one base, each with one kind of change: src/ moved
# into src/libgit2/ (directory rename) and edits of the moved files; a new
# file in the old directory; the same lines edited twice; a file replaced by
# a directory and the file edited; deletes against edits; a binary file
# changed on both sides; a rename with an edit against edits; rename/rename;
# a file turned into a symlink; names with spaces, a line break and a byte
# that is not UTF-8, edited on both sides. Then integration branches merge
# the topics in different orders (a conflicted merge keeps its first
# parent's tree, as a person who resolved it "ours" would), merge each
# other (criss-cross), and main takes them. Every merge commit of the
# result, and every pair of branch tips, is a case for compare.py.
set -eu

dir=$1
nl='
'
git init -q -b main "$dir"
cd "$dir"
git config user.name hist && git config user.email hist@example.com
export GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'

lines() { # PREFIX N: N numbered lines
	i=1
	while [ "$i" -le "$2" ]; do echo "$1 line $i"; i=$((i + 1)); done
}
edit() { # FILE LINE TEXT
	sed -i "$2s/.*/$3/" "$1"
}
commit() { git add -A && git commit -qm "$1"; }
topic() { git checkout -q -B "$1" base; }

odd_nl="new${nl}line.txt"
odd_8bit=$(printf 'caf\351.txt')

mkdir src docs lib data
for f in a b c d e; do lines "src/$f" 12 >"src/$f.c"; done
lines guide 12 >docs/guide.md
lines notes 12 >docs/notes.txt
lines x 12 >lib/x.h
lines y 12 >lib/y.h
lines conf 6 >conf
lines data 6 >data/one.txt
lines space 6 >"name with space.txt"
lines newline 6 >"$odd_nl"
lines latin 6 >"$odd_8bit"
printf 'bin\000base\000' >bin.dat
lines link 3 >link-target.txt
: >empty.c
commit base
git branch base

topic move   # the example: src/*.c into src/libgit2/, one file edited too
mkdir src/libgit2 && git mv src/a.c src/b.c src/c.c src/d.c src/e.c src/libgit2/
edit src/libgit2/a.c 2 "moved edit" && commit move

topic edit   # edits of the files the move moved, and a new file in src/
edit src/a.c 8 "edit tail" && edit src/b.c 5 "edit b" && lines new 4 >src/new.c
commit edit

topic clash  # the line the move edited, differently; and the move's neighbour
edit src/a.c 2 "clash edit" && edit src/c.c 3 "clash c" && commit clash

topic filedir  # a file becomes a directory; a directory becomes a file
git rm -q conf && mkdir conf && lines inner 3 >conf/inner.txt
git rm -qr data && lines flat 3 >data && commit filedir

topic fileedit  # edits of what filedir replaced
edit conf 2 "conf edit" && edit data/one.txt 2 "data edit" && commit fileedit

topic delete  # deletes against edits
git rm -q docs/guide.md lib/x.h && commit delete

topic modify
edit docs/guide.md 4 "guide edit" && edit lib/x.h 4 "x edit" && edit link-target.txt 2 "edited"
commit modify

topic binary
printf 'bin\000one\000' >bin.dat && commit binary

topic binary2
printf 'bin\000two\000' >bin.dat && commit binary2

topic renedit  # a rename with an edit, and rename/rename
mkdir include && git mv lib/y.h include/y.h && edit include/y.h 1 "renamed y"
git mv docs/notes.txt notes-one.txt && commit renedit

topic yedit  # edits of the renamed file (one clean, one on the same line), the other rename
edit lib/y.h 12 "y tail" && edit lib/y.h 1 "edited y"
git mv docs/notes.txt notes-two.txt && commit yedit

topic symlink  # a file becomes a symlink; the other side edits it
rm link-target.txt && ln -s src/a.c link-target.txt && commit symlink

topic odd  # odd names edited on both sides, renamed, an empty file renamed
edit "name with space.txt" 2 "odd space" && edit "$odd_nl" 2 "odd newline"
edit "$odd_8bit" 2 "odd latin" && git mv empty.c "empty moved.c"
lines "sp ace" 3 >"odd new file.txt" && commit odd

topic odd2
edit "name with space.txt" 2 "odd2 space" && edit "$odd_nl" 2 "odd2 newline"
edit "$odd_8bit" 2 "odd2 latin" && echo content >empty.c && commit odd2

# merge SOURCE into the checked-out branch: git's tree when clean, else ours
merge_in() {
	if tree=$(git merge-tree --write-tree HEAD "$1" 2>/dev/null | head -n 1) &&
		git merge-tree --write-tree HEAD "$1" >/dev/null 2>&1; then
		:
	else
		tree=$(git rev-parse 'HEAD^{tree}')
	fi
	c=$(git commit-tree "$tree" -p HEAD -p "$1" -m "merge $1")
	git reset -q --hard "$c"
}

topics="move edit clash filedir fileedit delete modify binary binary2 renedit yedit symlink odd odd2"
git checkout -q -B int1 base
for t in $topics; do merge_in "$t"; done
git checkout -q -B int2 base
for t in odd2 symlink yedit renedit binary2 modify fileedit edit move clash filedir delete binary odd; do
	merge_in "$t"
done
# criss-cross: each integration branch takes the other's old tip
old1=$(git rev-parse int1) old2=$(git rev-parse int2)
git checkout -q int1 && merge_in "$old2"
git checkout -q int2 && merge_in "$old1"
git checkout -q int1 && edit "name with space.txt" 6 "int1 after criss" && commit int1-more
git checkout -q int2 && edit "name with space.txt" 6 "int2 after criss" && commit int2-more
git checkout -q main && merge_in int1 && merge_in int2
# topics merged into each other pairwise (a side branch per pair)
git checkout -q -B side1 edit && merge_in move && merge_in clash
git checkout -q -B side2 fileedit && merge_in filedir && merge_in delete
git checkout -q -B side3 odd && merge_in odd2 && merge_in renedit && merge_in yedit
git checkout -q main && merge_in side1 && merge_in side2 && merge_in side3
git checkout -q main
