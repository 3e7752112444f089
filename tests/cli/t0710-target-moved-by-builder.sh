#!/bin/sh
# A builder moves the target branch itself (the worktree shares refs with the
# main repository). The run is rejected, but the target carries its commit:
# the tick says so and exits non-zero, no run lands while the target carries
# it, `sluice status` and `sluice audit` show it, and the person either
# resets the target or accepts the commit with `sluice accept-target`.
. "$(dirname "$0")/lib.sh"

# A command reviewer that rejects the work orders whose title says "Evil"
# and approves the others.
cat >"$BUILDERS/picky-reviewer.sh" <<-'EOS'
req=$(cat)
case "$req" in
*'Work order E'*) echo '{"verdict": "reject", "comments": "no", "reviewer": "picky-bot"}' ;;
*) echo '{"verdict": "approve", "reviewer": "picky-bot"}' ;;
esac
EOS

picky_repo() { # DIR
	sluice_repo "$1" "reviewer:" "  mode: command" "  command: [sh, $BUILDERS/picky-reviewer.sh]"
}

# E1: commit on the run branch, move main to it.
cat >"$BUILDERS/E1.sh" <<-'EOS'
echo evil >evil.txt
git add evil.txt && git commit -q -m 'evil change'
git update-ref refs/heads/main HEAD
EOS
# E2: commit, move main to it, then take the commit off the run branch again.
cat >"$BUILDERS/E2.sh" <<-'EOS'
echo evil2 >evil2.txt
git add evil2.txt && git commit -q -m 'evil change, hidden'
git update-ref refs/heads/main HEAD
git reset -q --hard HEAD~1
echo cover >cover.txt
EOS
for g in G1 G2 G3; do echo "echo $g >$g.txt" >"$BUILDERS/$g.sh"; done

test_expect_success 'setup' '
	picky_repo repo &&
	sluice -C repo check
'

test_expect_success 'the tick that saw a builder move the target fails, naming commit and run' '
	before=$(git -C repo rev-parse main) && echo $before >before.id &&
	wo repo E1 &&
	test_expect_failure_code 1 sluice -C repo tick >out 2>err &&
	run=$(run_of repo E1) &&
	test "$(state_of repo $run)" = rejected &&
	evil=$(git -C repo rev-parse main) && echo $evil >evil.id && echo $run >run.id &&
	test "$evil" != "$before" &&
	test_grep "$(echo $evil | cut -c1-12)" err &&
	test_grep "$run" err &&
	test_grep "accept-target" err
'

test_expect_success 'every later tick says so too, and no run lands meanwhile' '
	evil=$(cat evil.id) &&
	wo repo G1 &&
	test_expect_failure_code 1 sluice -C repo tick >out 2>err &&
	test_grep "$(echo $evil | cut -c1-12)" err &&
	g1=$(run_of repo G1) && echo $g1 >g1.id &&
	test "$(state_of repo $g1)" = approved &&
	test "$(git -C repo rev-parse main)" = "$evil" &&
	sluice -C repo status --json "$g1" >st.json &&
	test_grep "unreviewed" st.json &&
	test_expect_failure_code 1 sluice -C repo tick --json >tick.json 2>err &&
	test_grep "\"commit\": \"$evil\"" tick.json &&
	test "$(git -C repo rev-parse main)" = "$evil"
'

test_expect_success 'status shows it, the event log has it' '
	evil=$(cat evil.id) && before=$(cat before.id) && run=$(cat run.id) && g1=$(cat g1.id) &&
	sluice -C repo status >st &&
	test_grep "$(echo $evil | cut -c1-12)" st &&
	test_grep "accept-target" st &&
	sluice -C repo status --json >st.json &&
	test_grep "\"unreviewed\"" st.json &&
	sluice -C repo log >log &&
	test_grep "$(echo $evil | cut -c1-12)" log
'

test_expect_success 'audit fails on the commit' '
	evil=$(cat evil.id) && before=$(cat before.id) && run=$(cat run.id) && g1=$(cat g1.id) &&
	(cd repo && test_expect_failure_code 1 sluice audit >../out 2>../err) &&
	test_grep "$(echo $evil | cut -c1-12)" out &&
	test_grep "$run" out
'

test_expect_success 'the person resets the target: landing goes on, audit holds' '
	evil=$(cat evil.id) && before=$(cat before.id) && run=$(cat run.id) && g1=$(cat g1.id) &&
	rm -rf reset && cp -a repo reset &&
	(cd reset && git worktree repair .system/runs/*/worktree) &&
	git -C reset reset -q --hard "$before" &&
	sluice -C reset tick >out 2>err &&
	test "$(state_of reset $g1)" = merged &&
	(cd reset && sluice audit >../out) &&
	test_grep "all hold" out &&
	sluice -C reset status >st && test_grep -v "unreviewed" st
'

# A copy of the repository (cp -a) whose run worktrees still point into
# the original's .git (git keeps absolute paths; git worktree repair would
# fix them): the copy's run fails with the reason, and nothing of the
# original changes (before, the copy's snapshot committed into it).
test_expect_success 'a copy whose worktrees point into the original: the run fails, the original is untouched' '
	g1=$(cat g1.id) && before=$(cat before.id) &&
	rm -rf copy && cp -a repo copy &&
	git -C copy reset -q --hard "$before" &&
	git -C repo for-each-ref >refs.before &&
	(cd repo/.system/runs/$g1/worktree && git status --porcelain && git rev-parse HEAD) >wt.before &&
	sluice -C copy tick >out 2>err &&
	test "$(state_of copy $g1)" = failed &&
	sluice -C copy status $g1 >st && test_grep "names another folder" st &&
	git -C repo for-each-ref >refs.after && test_cmp refs.before refs.after &&
	(cd repo/.system/runs/$g1/worktree && git status --porcelain && git rev-parse HEAD) >wt.after &&
	test_cmp wt.before wt.after &&
	test "$(state_of repo $g1)" = approved
'

test_expect_success 'or accepts it: accept-target records it as the user'"'"'s' '
	evil=$(cat evil.id) && before=$(cat before.id) && run=$(cat run.id) && g1=$(cat g1.id) &&
	test_expect_failure_code 2 sluice -C repo accept-target &&
	test_expect_failure_code 2 sluice -C repo accept-target --json "$evil" 2>err &&
	test_grep "json" err &&
	test_expect_failure_code 1 sluice -C repo accept-target 0123456789012345678901234567890123456789 2>err &&
	sluice -C repo accept-target "$evil" >out &&
	test_grep "$(echo $evil | cut -c1-12)" out &&
	sluice -C repo tick >out 2>err &&
	test "$(state_of repo $g1)" = merged &&
	(cd repo && sluice audit >../out) &&
	test_grep "all hold" out &&
	sluice -C repo log >log && test_grep "accepted" log
'

test_expect_success 'a builder that moves the target and hides its commit is caught too' '
	picky_repo hide &&
	wo hide E2 &&
	test_expect_failure_code 1 sluice -C hide tick >out 2>err &&
	run2=$(run_of hide E2) &&
	test "$(state_of hide $run2)" = rejected &&
	evil2=$(git -C hide rev-parse main) &&
	! git -C hide merge-base --is-ancestor "$evil2" "run/$(sluice -C hide status --json $run2 | sed -n "s/^ *\"branch_name\": \"run\/\(.*\)\",\{0,1\}$/\1/p")" &&
	test_grep "$(echo $evil2 | cut -c1-12)" err &&
	test_grep "$run2" err
'

test_expect_success 'a person committing on the target is not an alarm' '
	picky_repo person &&
	wo person G2 &&
	(cd person && echo mine >mine.txt && git add mine.txt && git commit -q -m "my own work") &&
	sluice -C person tick >out 2>err &&
	test "$(state_of person $(run_of person G2))" = merged &&
	(cd person && echo more >>mine.txt && git commit -q -am "more of my work") &&
	(cd person && sluice audit >../out) && test_grep "all hold" out &&
	wo person G3 &&
	sluice -C person tick >out 2>err &&
	test "$(state_of person $(run_of person G3))" = merged &&
	(cd person && sluice audit >../out) && test_grep "all hold" out
'

test_expect_success 'a person merging a run branch by hand is an unreviewed landing' '
	picky_repo byhand &&
	wo byhand E1 &&
	cat >"$BUILDERS/E1.sh" <<-\EOS &&
	echo notevil >notevil.txt
	EOS
	sluice -C byhand tick >out 2>err &&
	r=$(run_of byhand E1) &&
	test "$(state_of byhand $r)" = rejected &&
	br=$(sluice -C byhand status --json $r | sed -n "s/^ *\"branch_name\": \"\(.*\)\",\{0,1\}$/\1/p") &&
	git -C byhand merge -q --no-ff -m "merge it anyway" "$br" &&
	(cd byhand && test_expect_failure_code 1 sluice audit >../out) &&
	test_grep "$r" out &&
	test_expect_failure_code 1 sluice -C byhand tick >out 2>err &&
	test_grep "$r" err
'

test_done
