#!/bin/sh
# sluice diff RUN [--stat] [--attempt N] [--no-pager]: the reviewed diff of a
# run (base..head, what diff.patch holds), or of one attempt (the run's base
# to that attempt's head), through the pager as git does: GIT_PAGER, then
# core.pager of the person's own config (never the repository's), then PAGER, with LESS=FRX when LESS is unset; no
# pager when stdout is not a terminal or with --no-pager. The terminal is
# script(1)'s.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a run built twice (a person asked for changes)' '
	sluice_repo repo "retry:" "  - exit: 3" &&
	cat >"$BUILDERS/W1.sh" <<-\EOS &&
	echo "line of attempt $SLUICE_ATTEMPT" >>notes.txt
	EOS
	wo repo W1 &&
	sluice -C repo tick >out &&
	run=$(run_of repo W1) &&
	sluice -C repo request-changes $run -m "one more line" &&
	sluice -C repo tick >out &&
	test "$(state_of repo $run)" = awaiting_review
'

test_expect_success 'diff prints diff.patch, the reviewed diff, without a pager off a terminal' '
	run=$(run_of repo W1) &&
	PAGER="echo paged; cat" sluice -C repo diff $run >out &&
	test_cmp repo/.system/runs/$run/diff.patch out &&
	test_grep "line of attempt 2" out &&
	sluice -C repo diff W1 --no-pager >out2 &&
	test_cmp out out2
'

test_expect_success '--attempt N shows the run base to that attempt'"'"'s head' '
	run=$(run_of repo W1) &&
	sluice -C repo diff --attempt 1 ${run##*-} >out &&
	test_grep "line of attempt 1" out &&
	! test_grep "line of attempt 2" out &&
	test_expect_failure_code 1 sluice -C repo diff --attempt 7 $run 2>err &&
	test_grep "attempt 7" err &&
	test_expect_failure_code 2 sluice -C repo diff --attempt x $run 2>err
'

test_expect_success '--stat counts the lines per file, as git diff --stat' '
	run=$(run_of repo W1) &&
	sluice -C repo diff --stat $run >out &&
	test_grep "^ notes.txt | 2 ++$" out &&
	test_grep "^ 1 file changed, 2 insertions(+)$" out
'

test_expect_success 'on a terminal: PAGER, LESS=FRX, a global core.pager first, --no-pager' '
	test_skip_unless_tool script &&
	run=$(run_of repo W1) &&
	cat >pager.sh <<-\EOF &&
	echo "LESS=$LESS" >"$PAGED"
	cat >>"$PAGED"
	EOF
	PAGED=$TRASH/paged1 PAGER="sh $TRASH/pager.sh" script -qec "$SLUICE -C repo diff $run" /dev/null >/dev/null &&
	test_grep "^LESS=FRX$" paged1 &&
	test_grep "line of attempt 2" paged1 &&
	git config --global core.pager "sh $TRASH/pager.sh core" &&
	LESS=S PAGED=$TRASH/paged2 PAGER="false" script -qec "$SLUICE -C repo diff $run" /dev/null >/dev/null &&
	test_grep "^LESS=S$" paged2 &&
	git config --global --unset core.pager &&
	PAGED=$TRASH/paged3 script -qec "$SLUICE -C repo diff --no-pager $run" /dev/null >/dev/null &&
	! test -e paged3
'

# The repository's .git/config is every builder's to write: a core.pager
# there would run a builder's program on the person's terminal.
test_expect_success 'on a terminal: a core.pager of the repository is never run' '
	test_skip_unless_tool script &&
	run=$(run_of repo W1) &&
	printf "%s\n" "#!/bin/sh" "touch $TRASH/planted-pager-ran" "cat" >planted.sh &&
	git -C repo config core.pager "sh $TRASH/planted.sh" &&
	PAGED=$TRASH/paged4 PAGER="sh $TRASH/pager.sh" script -qec "$SLUICE -C repo diff $run" /dev/null >/dev/null &&
	! test -e planted-pager-ran &&
	test_grep "line of attempt 2" paged4
'

test_done
