#!/bin/sh
# The reviewer token is readable by nothing sluice starts, in every command:
# `sluice worktree create` fills the new worktree through git, which runs
# the filters of the shared .git/config (a builder may have planted one
# there); none of them sees the token, nor any git merge-preview starts. A command reviewer is not handed the
# token either (docs/reviewer.md): a concurrent builder could read it in
# that process's environ.
. "$(dirname "$0")/lib.sh"

TOKEN="wt-token-$$-do-not-leak"
export WT_TOKEN="$TOKEN"

test_expect_success 'setup: a repository whose shared git config holds a spying filter' '
	sluice_repo repo &&
	printf "%s\n" "reviewer:" "  mode: command" "  command: [sh, $TRASH/review.sh]" \
		"  token_env: WT_TOKEN" >>repo/.system/config.yaml &&
	printf "%s\n" "env >\"$TRASH/reviewer-env\"" "cat >/dev/null" \
		"echo \"{\\\"verdict\\\": \\\"approve\\\", \\\"reviewer\\\": \\\"bot\\\"}\"" >review.sh &&
	sluice -C repo check &&
	git -C repo config filter.spy.smudge "sh -c \"env >>$TRASH/filter-env; cat\"" &&
	git -C repo config filter.spy.clean cat &&
	echo "* filter=spy" >repo/.git/info/attributes
'

test_expect_success 'sluice worktree create: the filter ran, without the token' '
	sluice -C repo worktree create tool >out 2>err &&
	test_grep "\"success\": true" out &&
	test -s filter-env &&
	test_grep -v "$TOKEN" filter-env
'

test_expect_success 'a command reviewer runs without the token variable' '
	echo "echo one >one.txt" >"$BUILDERS/K1.sh" &&
	wo repo K1 &&
	sluice -C repo tick >out 2>err &&
	test "$(state_of repo $(run_of repo K1))" = merged &&
	test -s reviewer-env &&
	test_grep -v "$TOKEN" reviewer-env &&
	test_grep -v "WT_TOKEN" reviewer-env
'

test_expect_success 'sluice merge-preview: no git it starts has the token' '
	printf "%s\n" "#!/bin/sh" "env >>\"$TRASH/git-env\"" "exec git \"\$@\"" >git-spy.sh &&
	chmod +x git-spy.sh &&
	git -C repo branch side main~1 &&
	SLUICE_GIT="$TRASH/git-spy.sh" sluice -C repo merge-preview main side >out 2>err &&
	test -s git-env &&
	test_grep -v "$TOKEN" git-env
'

test_done
