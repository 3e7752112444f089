#!/bin/sh
# A file with a working-tree-encoding attribute is stored in UTF-8 and
# checked out re-encoded (UTF-16 here); libgit2 does not know the attribute,
# so the snapshot stages such a file through git, as it does a file with a
# filter driver. A file the builder never changed (even one rewritten with
# the same bytes) keeps its blob; a changed one is stored in UTF-8.
. "$(dirname "$0")/lib.sh"

iconv -f UTF-8 -t UTF-16LE </dev/null >/dev/null 2>&1 || test_skip_all "no iconv with UTF-16LE"

test_expect_success 'setup: a file kept in UTF-16 in the work tree' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	echo "*.u16 text working-tree-encoding=UTF-16LE eol=lf" >repo/.gitattributes &&
	printf "hello\n" | iconv -f UTF-8 -t UTF-16LE >repo/a.u16 &&
	printf "first\n" | iconv -f UTF-8 -t UTF-16LE >repo/b.u16 &&
	git -C repo add .gitattributes a.u16 b.u16 &&
	git -C repo commit -q -m "encoded files" &&
	git -C repo cat-file -p HEAD:a.u16 >blob && printf "hello\n" >want && test_cmp want blob &&
	git -C repo rev-parse HEAD:a.u16 >base-a &&
	cat >"$BUILDERS/U1.sh" <<-\EOF
	cp a.u16 a.tmp && mv a.tmp a.u16 # rewritten with the same bytes, as editors do
	printf "second\n" | iconv -f UTF-8 -t UTF-16LE >>b.u16
	echo new >c.txt
	EOF
'

test_expect_success 'the run merges; the untouched file keeps its blob, the edited one is UTF-8' '
	wo repo U1 &&
	sluice -C repo tick >out 2>err &&
	run=$(run_of repo U1) &&
	test "$(state_of repo $run)" = merged &&
	git -C repo rev-parse main^2:a.u16 >run-a &&
	test_cmp base-a run-a &&
	git -C repo cat-file -p main:b.u16 >b && printf "first\nsecond\n" >want && test_cmp want b &&
	test_grep -v "a.u16" repo/.system/runs/$run/files_changed.json &&
	test_grep "b.u16" repo/.system/runs/$run/files_changed.json
'

test_done
