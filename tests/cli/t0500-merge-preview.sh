#!/bin/sh
# sluice merge-preview: the seed's scenarios, the libgit2/git disagreements,
# --json, usage.
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
	test "$(jq -c "[.clean, .tree, .conflicts, .verified, .gitConflicts]" out.json)" = \
		"[false,null,[\"a.txt\"],true,[\"a.txt\"]]" &&
	jq -e ".reason | test(\"conflicting\")" out.json &&
	test "$(jq -r .ours out.json)" = "$(git rev-parse main)" &&
	git checkout -q run && git reset -q --hard main~1 && git checkout -q main &&
	sluice -C . merge-preview --json main run >clean.json &&
	jq -e ".clean and .reason == null and (.conflicts | length) == 0" clean.json &&
	test "$(jq -r .tree clean.json)" = "$(git rev-parse main^{tree})"
'

test_expect_success 'a directory renamed while the other side adds to it: conflict, not a wrong clean merge' '
	setup_repo && cd r &&
	mkdir dir && echo x >dir/x.txt && echo y >dir/y.txt && git add dir && git commit -qm dir &&
	git branch -f run && git mv dir newdir && git commit -qm mv &&
	git checkout -q run && echo e >dir/e.txt && git add dir/e.txt && git commit -qm e &&
	git checkout -q main &&
	test_expect_failure_code 1 git merge-tree --write-tree main run >/dev/null &&
	sluice merge-preview --no-verify main run >lg &&
	test "$(head -n 1 lg)" = clean &&
	test_expect_failure_code 1 sluice merge-preview main run >out 2>err &&
	test "$(head -n 1 out)" = conflict &&
	test_grep "^newdir/e.txt$" out &&
	test_grep "libgit2 and git merge-tree disagree" err
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
