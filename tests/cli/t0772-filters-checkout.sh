#!/bin/sh
# The target checked out, with a filter driver (smudge/clean) and a file
# kept in another encoding (working-tree-encoding): libgit2 knows neither,
# so a merge that changes such a file must bring the checkout along through
# git, which smudges and re-encodes it, as `git checkout` or `git merge`
# would. Written through libgit2 the checkout held the raw blobs: the clean
# form of the filtered file and UTF-8 bytes in a UTF-16 file (git then
# cannot even read it back).
. "$(dirname "$0")/lib.sh"

iconv -f UTF-8 -t UTF-16LE </dev/null >/dev/null 2>&1 || test_skip_all "no iconv with UTF-16LE"

test_expect_success 'setup: main checked out, a filtered file and a UTF-16 file' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	git -C repo config filter.fake.smudge "sed -e \"s/^/SMUDGED /\"" &&
	git -C repo config filter.fake.clean "sed -e \"s/^SMUDGED //\"" &&
	git -C repo config filter.fake.required true &&
	printf "%s\n" "*.dat filter=fake" "*.u16 text working-tree-encoding=UTF-16LE eol=lf" \
		>repo/.gitattributes &&
	echo one >repo/a.dat &&
	printf "hello\n" | iconv -f UTF-8 -t UTF-16LE >repo/a.u16 &&
	git -C repo add .gitattributes a.dat a.u16 &&
	git -C repo commit -q -m "filtered files" &&
	rm repo/a.dat && git -C repo checkout -- a.dat &&
	printf "SMUDGED one\n" >want && test_cmp want repo/a.dat &&
	cat >"$BUILDERS/C1.sh" <<-\EOF
	echo two >>a.dat
	printf "more\n" | iconv -f UTF-8 -t UTF-16LE >>a.u16
	echo new >c.txt
	EOF
'

test_expect_success 'the merge writes the checkout as git would: smudged, re-encoded' '
	wo repo C1 &&
	sluice -C repo tick >out 2>err &&
	run=$(run_of repo C1) &&
	test "$(state_of repo $run)" = merged &&
	printf "SMUDGED one\nSMUDGED two\n" >want && test_cmp want repo/a.dat &&
	printf "hello\nmore\n" | iconv -f UTF-8 -t UTF-16LE >want16 && cmp want16 repo/a.u16 &&
	printf "%s\n" "?? work_orders/" >status.want &&
	git -C repo status --porcelain >status.now 2>status.err &&
	test_cmp status.want status.now &&
	test_grep -v "failed to encode" status.err
'

test_done
