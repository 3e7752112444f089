#!/bin/sh
# The user's uncommitted work in the main checkout survives every run and
# merge byte for byte; a colliding edit defers the merge until it is committed.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a checkout with staged, unstaged and untracked changes' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	seq 1 5 >repo/staged.txt && seq 1 5 >repo/unstaged.txt && seq 1 5 >repo/shared.txt &&
	git -C repo add . && git -C repo commit -q -m files &&
	echo "staged change" >>repo/staged.txt && git -C repo add staged.txt &&
	echo "unstaged change" >>repo/unstaged.txt &&
	echo "untracked" >repo/untracked.txt &&
	printf "binary\0\001\002" >repo/untracked.bin &&
	i=1 && while [ $i -le 20 ]; do
		printf "echo run $i >new-%s.txt\n" $i >"$BUILDERS/W$i.sh" &&
		wo repo W$i || return 1
		i=$((i + 1))
	done &&
	checkout_digest repo >before
'

test_expect_success '20 runs merged: the user changes are byte for byte the same' '
	sluice -C repo tick --jobs 2 >/dev/null &&
	test "$(sluice -C repo runs --state merged | wc -l)" = 20 &&
	checkout_digest repo >after &&
	test_cmp before after &&
	git -C repo diff --cached --name-only >staged && test_cmp staged - <<-\EOF &&
	staged.txt
	EOF
	test "$(git -C repo show main:new-20.txt)" = "run 20" &&
	test -f repo/new-20.txt
'

test_expect_success 'a run touching a file the user edited: merge deferred, nothing touched' '
	echo "sed -i 1s/.*/one-by-run/ unstaged.txt" >"$BUILDERS/C1.sh" &&
	wo repo C1 &&
	tip=$(git -C repo rev-parse main) &&
	checkout_digest repo >before2 &&
	sluice -C repo tick >out &&
	run=$(run_of repo C1) &&
	test "$(state_of repo $run)" = approved &&
	sluice -C repo status --json $run >st && test_grep "deferred" st &&
	test "$(git -C repo rev-parse main)" = "$tip" &&
	checkout_digest repo >after2 &&
	test_cmp before2 after2
'

test_expect_success 'once the user commits, a later tick merges' '
	run=$(run_of repo C1) &&
	git -C repo commit -q -a -m "user work" &&
	sluice -C repo tick >/dev/null &&
	test "$(state_of repo $run)" = merged &&
	git -C repo show main:unstaged.txt >u &&
	test_grep "^one-by-run$" u && test_grep "^unstaged change$" u &&
	test_cmp u repo/unstaged.txt
'

test_done
