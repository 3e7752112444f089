#!/bin/sh
# Odd but valid index formats of the user's repository: a split index
# (core.splitIndex) and a sparse index (index.sparse). libgit2 1.5 reads
# neither; every run must still build, merge, and leave the user's checkout
# as git would.
. "$(dirname "$0")/lib.sh"

for kind in split sparse; do
	test_expect_success "a repository with a $kind index: the run merges, the checkout follows" "
		sluice_repo $kind \"\$(approve_reviewer_config)\" &&
		mkdir -p $kind/src $kind/docs && echo code >$kind/src/a.c && echo doc >$kind/docs/a.md &&
		git -C $kind add . && git -C $kind commit -q -m files &&
		if test $kind = split; then
			git -C $kind config core.splitIndex true &&
			git -C $kind update-index --split-index
		else
			git -C $kind sparse-checkout set --cone --sparse-index src
		fi &&
		echo 'echo new >>src/a.c' >\"\$BUILDERS/S-$kind.sh\" &&
		wo $kind S-$kind &&
		echo mine >$kind/src/untracked.txt &&
		sluice -C $kind tick >$kind.out 2>&1 &&
		run=\$(run_of $kind S-$kind) &&
		test \"\$(state_of $kind \$run)\" = merged &&
		test \"\$(git -C $kind show main:src/a.c)\" = \"\$(printf 'code\nnew')\" &&
		test \"\$(cat $kind/src/a.c)\" = \"\$(printf 'code\nnew')\" &&
		test \"\$(cat $kind/src/untracked.txt)\" = mine &&
		git -C $kind status --porcelain >st &&
		test_cmp - st <<-\EOS
		?? src/untracked.txt
		?? work_orders/
		EOS
	"
done

test_done
