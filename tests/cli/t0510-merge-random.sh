#!/bin/sh
# 200 random merges (seeded): sluice merge-preview and git merge-tree give the
# same verdict, the same clean tree and the same conflicted paths (git is the
# authority). See tests/merge/gen.sh.
. "$(dirname "$0")/lib.sh"

test_expect_success '200 random merges agree with git merge-tree' '
	{ SLUICE="$SLUICE" sh "$SLUICE_SOURCE_DIR/tests/merge/gen.sh" -n 200 -s 42 >out 2>&1 ||
		{ grep -v "^error\|^    \|^(use" out; false; }; } &&
	tail -n 1 out && test_grep "200 merges" out && test_grep " 0 violations" out
'

test_done
