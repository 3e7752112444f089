#!/bin/sh
# audit quotes what it found in git (a Sluice-Run trailer anyone can write
# into a commit on the target): printed escaped, never an escape code or a
# line of its own.
. "$(dirname "$0")/lib.sh"

ESC=$(printf '\033')

test_expect_success 'setup: one landing, then a commit with a forged trailer holding an escape code' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	echo "echo a >a.txt" >"$BUILDERS/A1.sh" &&
	wo repo A1 &&
	sluice -C repo tick >/dev/null &&
	echo z >repo/z.txt && git -C repo add z.txt &&
	git -C repo commit -q -m "$(printf "forged\n\nSluice-Run: \033[31mred\nWork-Order: A1")"
'

test_expect_success 'audit fails and prints the finding escaped' '
	test_expect_failure_code 1 sluice -C repo audit >out 2>err &&
	test_grep "Sluice-Run: .x1b\[31mred" out &&
	! grep -q "$ESC" out &&
	! grep -q "$ESC" err
'

test_done
