#!/bin/sh
# sluice merge-preview: the seed's scenarios, git as the authority (libgit2's
# opinion apart), --json, usage.
. "$(dirname "$0")/lib.sh"

# repo r: a.txt with 5 lines on main; branch run from the same base.
setup_repo() {
	rm -rf r && test_repo r && cd r &&
	printf '1\n2\n3\n4\n5\n' >a.txt && git add a.txt && git commit -qm base &&
	git branch run && cd ..
}

test_expect_success 'different files merge cleanly, with git'"'"'s tree' '
	setup_repo && cd r &&
	echo c >c.txt && git add c.txt && git commit -qm c &&
	git checkout -q run && echo d >d.txt && git add d.txt && git commit -qm d &&
	git checkout -q main &&
	sluice merge-preview main run >out &&
	printf "clean\n%s\n" "$(git merge-tree --write-tree main run)" >want &&
	test_cmp want out
'

test_expect_success 'same file, other lines: a clean auto-merge' '
	setup_repo && cd r &&
	sed -i 1s/1/one/ a.txt && git commit -qam one &&
	git checkout -q run && sed -i 5s/5/five/ a.txt && git commit -qam five &&
	git checkout -q main &&
	sluice merge-preview main run >out &&
	test "$(head -n 1 out)" = clean &&
	test "$(sed -n 2p out)" = "$(git merge-tree --write-tree main run)"
'

test_expect_success 'same lines: a conflict naming the path, exit 1' '
	setup_repo && cd r &&
	sed -i 3s/3/ours/ a.txt && git commit -qam ours &&
	git checkout -q run && sed -i 3s/3/theirs/ a.txt && git commit -qam theirs &&
	git checkout -q main &&
	test_expect_failure_code 1 sluice merge-preview main run >out 2>err &&
	printf "conflict\na.txt\n" >want && test_cmp want out &&
	test_grep "conflicting changes in 1 path" err
'

test_expect_success '--json has the schema'"'"'s shape' '
	test_skip_unless_tool jq &&
	cd r &&
	test_expect_failure_code 1 sluice merge-preview --json main run >out.json &&
	test "$(jq -c "[.clean, .conflicts, .libgit2]" out.json)" = "[false,[\"a.txt\"],null]" &&
	test "$(jq -r .tree out.json)" = \
		"$(git merge-tree --write-tree "$(git rev-parse main)" "$(git rev-parse run)" | head -n 1)" &&
	jq -e ".reason | test(\"conflicting\")" out.json &&
	jq -e ".messages == [\"CONFLICT (content): Merge conflict in a.txt\"]" out.json &&
	test "$(jq -r .ours out.json)" = "$(git rev-parse main)" &&
	test_expect_failure_code 1 sluice merge-preview --json --libgit2 main run >lg.json &&
	test "$(jq -c "[.clean, .conflicts, .libgit2]" lg.json)" = \
		"[false,[\"a.txt\"],{\"clean\":false,\"tree\":null,\"conflicts\":[\"a.txt\"]}]" &&
	git checkout -q run && git reset -q --hard main~1 && git checkout -q main &&
	sluice -C . merge-preview --json main run >clean.json &&
	jq -e ".clean and .reason == null and (.conflicts | length) == 0" clean.json &&
	test "$(jq -r .tree clean.json)" = "$(git rev-parse main^{tree})"
'

test_expect_success 'a directory renamed while the other side adds to it: git'"'"'s conflict, libgit2 apart' '
	setup_repo && cd r &&
	mkdir dir && echo x >dir/x.txt && echo y >dir/y.txt && git add dir && git commit -qm dir &&
	git branch -f run && git mv dir newdir && git commit -qm mv &&
	git checkout -q run && echo e >dir/e.txt && git add dir/e.txt && git commit -qm e &&
	git checkout -q main &&
	test_expect_failure_code 1 git merge-tree --write-tree main run >/dev/null &&
	test_expect_failure_code 1 sluice merge-preview --libgit2 main run >out 2>err &&
	printf "conflict\nnewdir/e.txt\n" >want && head -n 2 out >got && test_cmp want got &&
	sed -n 3p out | grep -Eq "^libgit2: clean [0-9a-f]{40}$" && test "$(wc -l <out)" = 3 &&
	test_grep "conflicting changes in 1 path" err &&
	test_grep "CONFLICT (file location)" err &&
	test_expect_failure_code 1 sluice merge-preview --no-verify main run >plain 2>/dev/null &&
	test "$(cat plain)" = "$(printf "conflict\nnewdir/e.txt")"
'

test_expect_success 'the issue'"'"'s example: src/ moved to src/libgit2/, edited on the other side: only git'"'"'s paths' '
	setup_repo && cd r &&
	mkdir src && printf "s1\ns2\ns3\n" >src/s.c && printf "t1\nt2\nt3\n" >src/t.c &&
	git add src && git commit -qm src && git branch -f run &&
	mkdir src/libgit2 && git mv src/s.c src/t.c src/libgit2/ &&
	sed -i 2s/s2/moved/ src/libgit2/s.c && sed -i 3s/3/ours/ a.txt && git commit -qam mv &&
	git checkout -q run && sed -i 2s/s2/edited/ src/s.c && sed -i 3s/t3/edited/ src/t.c &&
	sed -i 3s/3/theirs/ a.txt && git commit -qam edit && git checkout -q main &&
	test_expect_failure_code 1 sluice merge-preview main run >out &&
	printf "conflict\na.txt\nsrc/libgit2/s.c\n" >want && test_cmp want out &&
	test_expect_failure_code 1 git merge-tree --write-tree --name-only main run >git.out &&
	sed -n "2,/^\$/p" git.out | sed "/^\$/d" >git.paths &&
	tail -n +2 out >sl.paths && test_cmp git.paths sl.paths &&
	for p in $(cat sl.paths); do git cat-file -e "main:$p" 2>/dev/null || git cat-file -e "run:$p" || return 1; done &&
	test_expect_failure_code 1 sluice merge-preview --libgit2 main run >lg &&
	test_grep "^libgit2: conflict in .* src/s.c" lg
'

test_expect_success 'an empty file renamed while the other side edits it: conflict' '
	setup_repo && cd r &&
	: >bar.c && git add bar.c && git commit -qm bar && git branch -f run &&
	git mv bar.c boo.c && git commit -qm mv &&
	git checkout -q run && echo content >bar.c && git commit -qam edit &&
	git checkout -q main &&
	test_expect_failure_code 1 sluice merge-preview main run >out &&
	test_grep "^bar.c$" out
'

test_expect_success 'usage errors exit 2; a bad revision is a clear failure' '
	cd r &&
	test_expect_failure_code 2 sluice merge-preview main &&
	test_expect_failure_code 2 sluice merge-preview --bogus main run &&
	sluice merge-preview --help >help && test_grep "usage: sluice merge-preview" help &&
	test_expect_failure_code 1 sluice merge-preview main nosuch 2>err &&
	test_grep "revision .nosuch. names no commit" err &&
	test_expect_failure_code 1 sluice merge-preview -- --output=x main 2>err &&
	test_grep "invalid revision" err && test ! -e x
'

test_done
