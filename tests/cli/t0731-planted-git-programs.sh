#!/bin/sh
# A builder plants programs in the shared .git/config for git to run: a
# merge driver selected by .git/info/attributes and .gitattributes (the
# cross-check `git merge-tree` must not run it: it would hang the merge with
# the repository lock held, or write content nobody reviewed), a filter whose
# clean step hangs (bounded by the git timeout), a gpg program, an
# auto-maintenance hook. None of them runs where sluice does not mean it to,
# and every run reaches its end state.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a repository with a file both sides will change' '
	sluice_repo repo &&
	seq 1 20 >repo/f.txt &&
	git -C repo add f.txt && git -C repo commit -q -m "f" &&
	cat >"$BUILDERS/M1.sh" <<-EOF
	sed -i "s/^2\$/two/" f.txt
	git config merge.evil.driver "touch $TRASH/driver-ran; sleep 1000"
	git config merge.evil.name evil
	echo "* merge=evil" >"\$(git rev-parse --git-common-dir)/info/attributes"
	echo "f.txt merge=evil" >.gitattributes
	EOF
'

test_expect_success 'the run waits for review; meanwhile the user changes the same file' '
	wo repo M1 &&
	timeout 600 "$SLUICE" -C repo tick >out 2>err &&
	run=$(run_of repo M1) &&
	test "$(state_of repo $run)" = awaiting_review &&
	sed -i "s/^19\$/nineteen/" repo/f.txt &&
	git -C repo -c commit.gpgSign=false commit -q -a -m "user edit"
'

test_expect_success 'approved and merged: the planted merge driver never ran' '
	run=$(run_of repo M1) &&
	sluice -C repo approve $run >/dev/null &&
	timeout 600 "$SLUICE" -C repo tick >out 2>err &&
	test "$(state_of repo $run)" = merged &&
	! test -e driver-ran &&
	git -C repo show main:f.txt >merged &&
	test_grep "^two$" merged &&
	test_grep "^nineteen$" merged
'

test_expect_success 'a planted filter whose clean step hangs: git is ended, the run ends' '
	sluice_repo hang &&
	approve_reviewer_config >>hang/.system/config.yaml &&
	cat >"$BUILDERS/H1.sh" <<-EOF &&
	git config filter.hang.clean "touch $TRASH/clean-ran; sleep 1000"
	echo "*.hang filter=hang" >.gitattributes
	echo x >a.hang
	EOF
	wo hang H1 &&
	SLUICE_GIT_TIMEOUT_MS=15000 timeout 600 "$SLUICE" -C hang tick >out 2>err &&
	run=$(run_of hang H1) &&
	test "$(state_of hang $run)" = failed &&
	test -e clean-ran &&
	sluice -C hang status $run >st &&
	test_grep "a filter did not end" st
'

test_expect_success 'a planted gpg.program does not run when sluice commits a resolution' '
	sluice_repo sig &&
	seq 1 10 >sig/lines.txt && git -C sig add lines.txt && git -C sig commit -q -m lines &&
	printf "%s\n" "#!/bin/sh" "touch $TRASH/gpg-ran; exit 1" >gpg-ran.sh && chmod +x gpg-ran.sh &&
	cat >"$BUILDERS/G1.sh" <<-EOF &&
	sed -i "5s/.*/five by G1/" lines.txt
	git config commit.gpgSign true
	git config gpg.program "$TRASH/gpg-ran.sh"
	EOF
	echo "sed -i \"5s/.*/five by G2/\" lines.txt" >"$BUILDERS/G2.sh" &&
	wo sig G1 && wo sig G2 &&
	sluice -C sig tick --jobs 2 >/dev/null &&
	r1=$(run_of sig G1) && r2=$(run_of sig G2) &&
	test "$(state_of sig $r1)" = awaiting_review &&
	test "$(state_of sig $r2)" = awaiting_review &&
	sluice -C sig approve $r1 >/dev/null && sluice -C sig approve $r2 >/dev/null &&
	timeout 600 "$SLUICE" -C sig tick --jobs 1 >out 2>err &&
	s1=$(state_of sig $r1) && s2=$(state_of sig $r2) &&
	echo "$s1 $s2" >states &&
	{ test "$s1 $s2" = "merged awaiting_review" || test "$s1 $s2" = "awaiting_review merged"; } &&
	! test -e gpg-ran
'

test_done
