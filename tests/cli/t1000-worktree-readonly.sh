#!/bin/sh
# Worktree modes (docs/config.md "Worktree modes"): a read-only run's
# builder works in its worktree and must change nothing (the no_write
# guard); its report is reviewed over real HTTP on loopback and the run
# ends `reported`, never merged. Writes of every kind are failed attempts
# naming the paths, with the patch kept and nothing landing anywhere.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool python3

echo "{}" >"$TRASH/script.json"
start_reviewer "$TRASH/script.json" || exit 1

# The run folder of a run.
run_dir() { # DIR RUN
	echo "$1/.system/runs/$2"
}

test_expect_success 'setup: a repository, the loopback reviewer, retry rules' '
	test -n "$REVIEWER_URL" &&
	sluice_repo repo &&
	cat >>repo/.system/config.yaml <<-EOF &&
	retry:
	  - not: gate.no_write
	    prompt: "Read-only: do not change any file. {error}"
	  - not: gate.review
	  - exit: 3
	reviewer:
	  mode: http
	  protocol: sluice
	  url: $REVIEWER_URL
	  timeout: 60s
	  connect_timeout: 10s
	  retries: 1
	EOF
	printf "%s\n" "ignored.log" >repo/.gitignore &&
	git -C repo add .gitignore && git -C repo commit -q -m "ignore logs" &&
	sluice -C repo check &&
	git -C repo rev-parse main >main.before
'

test_expect_success 'read-only, nothing written: reviewed as a report, reported, nothing merged' '
	cat >"$BUILDERS/RO1.sh" <<-\EOF &&
	{ echo "## Findings"; echo "README.md has one line."; } >"$SLUICE_SUMMARY_FILE"
	pwd >"$SLUICE_RUN_DIR/cwd.txt"
	echo "$SLUICE_WORKTREE_MODE" >"$SLUICE_RUN_DIR/mode.txt"
	echo scratch >ignored.log
	EOF
	wo repo RO1 "worktree: read-only" "acceptance_criteria:" "  - says how long README.md is" &&
	sluice -C repo tick >said &&
	test_grep "^tick: 1 started, 0 merged, 1 reported, 0 failed" said &&
	run=$(run_of repo RO1) &&
	test "$(state_of repo $run)" = reported &&
	d=$(run_dir repo $run) &&
	test "$(cat $d/cwd.txt)" = "$(cd $d && pwd -P)/worktree" &&
	test "$(cat $d/mode.txt)" = read-only &&
	test_grep "README.md has one line." $d/report.md &&
	test_grep "Verdict: approve" $d/report.md &&
	req=$(grep -l "$run" "$REVIEWER_DIR"/requests/*.body | head -n 1) && test -n "$req" &&
	test_grep "\"kind\": *\"report\"" $req &&
	test_grep "\"worktree\": *\"read-only\"" $req &&
	test_grep "README.md has one line." $req &&
	! grep -q "\"diff\":" $req &&
	test "$(git -C repo rev-parse main)" = "$(cat main.before)" &&
	test "$(git -C repo rev-parse run/RO1-${run##*-})" = "$(cat main.before)" &&
	sluice -C repo status $run >st && test_grep "reported" st &&
	sluice -C repo show $run >sh && test_grep "reported" sh
'

test_expect_success 'the work order of a reported run is done' '
	sluice -C repo queue >q && test_grep "done .*RO1" q
'

test_expect_success 'a reported run is done with its worktree: it goes to the pool' '
	run=$(run_of repo RO1) &&
	sluice -C repo tick &&
	! test -e $(run_dir repo $run)/worktree &&
	sluice -C repo worktree pool >pool && test_grep "$run\|slot\|pool" pool
'

# A read-only builder that writes: each way fails its attempt with the paths named.
check_write() { # WO WHAT-IN-REASON...
	_wo=$1 && shift &&
	run=$(run_of repo $_wo) &&
	test "$(state_of repo $run)" = failed &&
	sluice -C repo status --json $run >st.json &&
	for _w in "$@"; do test_grep "$_w" st.json || return 1; done &&
	test_grep "no_write: the builder changed" st.json &&
	test "$(git -C repo rev-parse main)" = "$(cat main.before)" &&
	test "$(git -C repo rev-parse run/$_wo-${run##*-})" = "$(cat main.before)" &&
	test -z "$(git -C $(run_dir repo $run)/worktree status --porcelain)"
}

test_expect_success 'read-only builder changes a tracked file: failed, patch kept, branch and target untouched' '
	cat >"$BUILDERS/W1.sh" <<-\EOF &&
	echo "more" >>README.md
	echo x >"$SLUICE_SUMMARY_FILE"
	exit 0
	EOF
	cat >script.json <<-\EOF &&
	{}
	EOF
	wo repo W1 "worktree: read-only" &&
	sed -i "s/exit: 3/exit: 1/" repo/.system/config.yaml &&
	sluice -C repo tick &&
	check_write W1 "README.md" &&
	run=$(run_of repo W1) &&
	test_grep "^+more" $(run_dir repo $run)/attempts/1/no_write.patch &&
	git -C repo log --all --format=%s >subjects &&
	! grep -q "sluice snapshot" subjects
'

test_expect_success 'read-only builder adds an untracked file: failed, named' '
	cat >"$BUILDERS/W2.sh" <<-\EOF &&
	mkdir -p deep/er && echo new >deep/er/new.txt
	EOF
	wo repo W2 "worktree: read-only" &&
	sluice -C repo tick &&
	check_write W2 "deep/er/new.txt" &&
	test_grep "^+new" $(run_dir repo $(run_of repo W2))/attempts/1/no_write.patch
'

test_expect_success 'read-only builder commits: failed, the commit named, the branch put back' '
	cat >"$BUILDERS/W3.sh" <<-\EOF &&
	echo c >c.txt && git add c.txt && git commit -q -m "builder commit"
	EOF
	wo repo W3 "worktree: read-only" &&
	sluice -C repo tick &&
	check_write W3 "c.txt" "moved to" &&
	test_grep "^+c" $(run_dir repo $(run_of repo W3))/attempts/1/no_write.patch
'

test_expect_success 'read-only builder deletes a file: failed, named' '
	cat >"$BUILDERS/W4.sh" <<-\EOF &&
	rm README.md
	EOF
	wo repo W4 "worktree: read-only" &&
	sluice -C repo tick &&
	check_write W4 "README.md"
'

test_expect_success 'hostile: the builder moves its branch ref through the .git data' '
	cat >"$BUILDERS/W5.sh" <<-\EOF &&
	git update-ref "refs/heads/$(git symbolic-ref --short HEAD)" "$(git commit-tree -m evil HEAD^{tree})"
	EOF
	wo repo W5 "worktree: read-only" &&
	sluice -C repo tick &&
	check_write W5 "moved to"
'

test_expect_success 'hostile: the builder points HEAD at the target branch; the target never moves' '
	cat >"$BUILDERS/W6.sh" <<-\EOF &&
	gd=$(git rev-parse --git-dir) && echo "ref: refs/heads/main" >"$gd/HEAD" && echo y >y.txt
	EOF
	wo repo W6 "worktree: read-only" &&
	sluice -C repo tick &&
	check_write W6 "HEAD" &&
	test "$(git -C repo rev-parse main)" = "$(cat main.before)" &&
	test "$(git -C $(run_dir repo $(run_of repo W6))/worktree symbolic-ref HEAD)" = "refs/heads/run/W6-$(run_of repo W6 | sed "s/.*-//")"
'

test_expect_success 'hostile: the builder deletes the worktree .git file' '
	cat >"$BUILDERS/W7.sh" <<-\EOF &&
	rm -f .git
	EOF
	wo repo W7 "worktree: read-only" &&
	sluice -C repo tick &&
	check_write W7 ".git"
'

test_expect_success 'retry rules: a write, then a second attempt from a clean worktree, reported' '
	sed -i "s/exit: 1/exit: 3/" repo/.system/config.yaml &&
	cat >"$BUILDERS/R1.sh" <<-\EOF &&
	if [ "$SLUICE_ATTEMPT" = 1 ]; then echo oops >>README.md; echo junk >junk.txt; exit 0; fi
	git status --porcelain >"$SLUICE_RUN_DIR/status-$SLUICE_ATTEMPT.txt"
	cp "$SLUICE_PROMPT_FILE" "$SLUICE_RUN_DIR/prompt-$SLUICE_ATTEMPT.txt"
	echo "clean this time" >"$SLUICE_SUMMARY_FILE"
	EOF
	wo repo R1 "worktree: read-only" &&
	sluice -C repo tick &&
	run=$(run_of repo R1) &&
	test "$(state_of repo $run)" = reported &&
	d=$(run_dir repo $run) &&
	test -f $d/status-2.txt && ! test -s $d/status-2.txt &&
	test_grep "Read-only: do not change any file" $d/prompt-2.txt &&
	test_grep "no_write" $d/prompt-2.txt &&
	test -f $d/attempts/1/no_write.patch &&
	test_grep "clean this time" $d/report.md
'

test_expect_success 'request_changes on a report: the retry rules run the builder again' '
	cat >script.json <<-\EOF &&
	{"R2": [{"verdict": "request_changes", "comments": "Say more about README."},
	        {"verdict": "approve", "comments": "thorough"}]}
	EOF
	cat >"$BUILDERS/R2.sh" <<-\EOF &&
	echo "report $SLUICE_ATTEMPT" >"$SLUICE_SUMMARY_FILE"
	EOF
	wo repo R2 "worktree: read-only" &&
	sluice -C repo tick &&
	run=$(run_of repo R2) &&
	test "$(state_of repo $run)" = reported &&
	d=$(run_dir repo $run) &&
	test_grep "report 2" $d/report.md &&
	test_grep "thorough" $d/report.md &&
	test_grep "Say more about README" $d/attempts/2/prompt.md
'

test_expect_success 'reject on a report: rejected, report.md says why' '
	cat >script.json <<-\EOF &&
	{"R3": [{"verdict": "reject", "comments": "Not an audit at all."}]}
	EOF
	cat >"$BUILDERS/R3.sh" <<-\EOF &&
	echo "meh" >"$SLUICE_SUMMARY_FILE"
	EOF
	wo repo R3 "worktree: read-only" &&
	sluice -C repo tick &&
	run=$(run_of repo R3) &&
	test "$(state_of repo $run)" = rejected &&
	test_grep "Not an audit at all" $(run_dir repo $run)/report.md
'

test_expect_success 'audit: reported runs are neither unmerged nor missing' '
	sluice -C repo audit >audit.out 2>&1 &&
	! grep -i "RO1" audit.out
'

test_expect_success 'the target and the user checkout are untouched by every report run' '
	test "$(git -C repo rev-parse main)" = "$(cat main.before)" &&
	git -C repo diff --quiet HEAD &&
	git -C repo status --porcelain >st &&
	! grep -v "work_orders/" st
'

test_done
