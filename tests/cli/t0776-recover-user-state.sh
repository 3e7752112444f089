#!/bin/sh
# Recovery of a merge killed while it brought the checkout along touches
# nothing of the user's: not while the user's git holds .git/index.lock
# (it wrote the files under the user's lock, then failed), and nothing at
# all when the dead merge never came to write a file (a user's empty file
# at a path the merge adds was deleted, a deleted file brought back).
. "$(dirname "$0")/lib.sh"

digest() { # DIR
	(cd "$1" && git rev-parse HEAD && git ls-files -s --debug && git ls-files -v &&
		git status --porcelain=v2 --untracked-files=all &&
		find . -path ./.git -prune -o -path ./.system -prune -o -print | sort &&
		find . -path ./.git -prune -o -path ./.system -prune -o -type f -print0 |
			sort -z | xargs -0 -r sha256sum)
}

# A journal of a merge from main's tree to a tree that changes a.txt, adds
# new.txt and removes b.txt, left by a dead process; with "write" when it
# had come to write the checkout's files.
journal() { # [write]
	{ printf "%s\n%s\n%s\n" "1:1" "$(git -C repo rev-parse main^{tree})" "$NEW"
	  [ $# = 0 ] || echo "$1"; } >repo/.system/merge.journal &&
	touch -d "30 seconds ago" repo/.system/merge.journal
}

test_expect_success 'setup' '
	sluice_repo repo &&
	echo a >repo/a.txt && echo b >repo/b.txt && git -C repo add . &&
	git -C repo commit -q -m ab &&
	git -C repo checkout -q -b tmp && echo a2 >repo/a.txt && echo new >repo/new.txt &&
	git -C repo rm -q b.txt && git -C repo add . && git -C repo commit -q -m t &&
	git -C repo rev-parse HEAD^{tree} >new.tree && git -C repo checkout -q main &&
	git -C repo branch -q -D tmp
'
NEW=$(cat "$TRASH/new.tree" 2>/dev/null)

test_expect_success 'a dead merge that wrote no file: recovery touches nothing' '
	NEW=$(cat new.tree) && journal &&
	: >repo/new.txt && rm repo/b.txt &&
	digest repo >before &&
	sluice -C repo tick >out 2>&1 &&
	digest repo >after && test_cmp before after &&
	! test -e repo/.system/merge.journal &&
	git -C repo checkout -q b.txt && rm repo/new.txt
'

test_expect_success 'the user index.lock held: recovery waits, touching nothing' '
	NEW=$(cat new.tree) && journal write &&
	rm repo/a.txt && echo "the user git" >repo/.git/index.lock &&
	digest repo >before &&
	sluice -C repo tick >out 2>&1 &&
	digest repo >after && test_cmp before after &&
	test "$(cat repo/.git/index.lock)" = "the user git" &&
	test -e repo/.system/merge.journal &&
	test_grep "index.lock" out &&
	rm repo/.git/index.lock &&
	sluice -C repo tick >out 2>&1 &&
	test "$(cat repo/a.txt)" = a && ! test -e repo/.system/merge.journal &&
	test -z "$(git -C repo status --porcelain --untracked-files=no)"
'

test_done
