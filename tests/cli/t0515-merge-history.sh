#!/bin/sh
# git is the authority for every merge (issue 12): on a generated history
# with directory renames, renames with edits, file/directory conflicts,
# deletes, binary files and odd names (spaces, a line break, a byte that is
# not UTF-8), sluice merge-preview --json gives git merge-tree's verdict,
# tree and conflicted paths for every merge commit and every pair of branch
# tips. See tests/merge/history.sh and tests/merge/compare.py.
. "$(dirname "$0")/lib.sh"

test_expect_success 'every merge of the history: merge-preview is git merge-tree' '
	test_skip_unless_tool python3 &&
	sh "$SLUICE_SOURCE_DIR/tests/merge/history.sh" hist &&
	test "$(git -C hist rev-list --merges --all | wc -l)" -ge 30 &&
	{ python3 "$SLUICE_SOURCE_DIR/tests/merge/compare.py" "$SLUICE" hist \
		"src/libgit2/a.c" "name with space.txt" "new\\nline.txt" "caf\\ufffd.txt" \
		conf data bin.dat link-target.txt docs/notes.txt >out 2>&1 ||
		{ cat out; false; }; } &&
	cat out && test_grep " 0 disagreements" out
'

test_expect_success 'the issue'"'"'s example in that history: the moved file under its new name only' '
	move=$(git -C hist rev-parse move) clash=$(git -C hist rev-parse clash) &&
	test_expect_failure_code 1 sluice -C hist merge-preview "$move" "$clash" >out &&
	printf "conflict\nsrc/libgit2/a.c\n" >want && test_cmp want out &&
	test_expect_failure_code 1 sluice -C hist merge-preview --libgit2 "$move" "$clash" >lg &&
	test_grep "^libgit2: conflict in 2 paths: src/a.c src/libgit2/a.c$" lg
'

test_done
