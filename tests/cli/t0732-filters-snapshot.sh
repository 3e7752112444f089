#!/bin/sh
# A user's filter driver (LFS-style smudge/clean in .git/config, selected in
# .gitattributes): the run's worktree is filled through the smudge filter, so
# the snapshot must go through the clean filter. A file the builder never
# changed (even one rewritten with the same bytes) keeps its blob; a changed
# file is stored cleaned.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a repository with a smudge/clean filter' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	git -C repo config filter.fake.smudge "sed -e \"s/^/SMUDGED /\"" &&
	git -C repo config filter.fake.clean "sed -e \"s/^SMUDGED //\"" &&
	git -C repo config filter.fake.required true &&
	echo "*.dat filter=fake" >repo/.gitattributes &&
	echo one >repo/a.dat && echo two >repo/b.dat &&
	git -C repo add .gitattributes a.dat b.dat &&
	git -C repo commit -q -m "filtered files" &&
	git -C repo cat-file -p HEAD:a.dat >blob && test_cmp blob - <<-\EOF &&
	one
	EOF
	git -C repo rev-parse HEAD:a.dat >base-a &&
	cat >"$BUILDERS/F1.sh" <<-\EOF
	grep -q "^SMUDGED one$" a.dat || { echo "a.dat not smudged" >&2; exit 1; }
	cp a.dat a.tmp && mv a.tmp a.dat # rewritten with the same bytes, as editors do
	echo three >>b.dat
	echo new >c.txt
	EOF
'

test_expect_success 'the run merges; the untouched file keeps its blob' '
	wo repo F1 &&
	sluice -C repo tick >out 2>err &&
	run=$(run_of repo F1) &&
	test "$(state_of repo $run)" = merged &&
	git -C repo rev-parse main^2:a.dat >run-a &&
	test_cmp base-a run-a &&
	git -C repo rev-parse main:a.dat >main-a &&
	test_cmp base-a main-a
'

test_expect_success 'the touched file is stored cleaned; the diff shows only it and the new file' '
	git -C repo cat-file -p main:b.dat >b && printf "two\nthree\n" >want && test_cmp want b &&
	run=$(run_of repo F1) &&
	test_grep -v "a.dat" repo/.system/runs/$run/files_changed.json &&
	test_grep "b.dat" repo/.system/runs/$run/files_changed.json &&
	test_grep -v SMUDGED repo/.system/runs/$run/diff.patch
'

test_done
