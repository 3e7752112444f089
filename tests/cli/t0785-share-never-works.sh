#!/bin/sh
# A worktree.share or worktree.copy entry that can never work: the
# repository itself ('.'), or a path the target branch tracks (each worktree
# has its own copy, so the link or copy always finds it there). 'sluice
# check' rejects them; a run whose share entry became tracked after the
# check ends failed with the reason instead of being retried on every tick.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	mkdir -p repo/sub && echo x >repo/sub/f && git -C repo add sub &&
	git -C repo commit -q -m sub &&
	cp repo/.system/config.yaml good.yaml
'

for e in "share: [.]" "share: [./]" "copy: [.]"; do
	test_expect_success "check rejects worktree $e" '
		{ cat good.yaml && echo "worktree:" && echo "  $e"; } >repo/.system/config.yaml &&
		test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
		test_grep "config.yaml:[0-9]*:[0-9]*: .worktree\.\(share\|copy\). entry .\./*. is the repository itself" out &&
		test_expect_failure_code 1 sluice -C repo check --json >out.json &&
		test_grep "is the repository itself" out.json
	'
done

for e in "share: [sub]" "share: [README.md]" "copy: [sub/f]" "share: [./sub]"; do
	test_expect_success "check rejects worktree $e (tracked in main)" '
		{ cat good.yaml && echo "worktree:" && echo "  $e"; } >repo/.system/config.yaml &&
		test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
		test_grep "entry .*is tracked in branch .main." out
	'
done

test_expect_success 'an untracked entry is fine' '
	{ cat good.yaml && echo "worktree:" && echo "  share: [cache]"; } >repo/.system/config.yaml &&
	sluice -C repo check
'

test_expect_success 'a share entry tracked after the check: the run fails once, with the reason' '
	echo c >repo/cache && git -C repo add cache && git -C repo commit -q -m cache &&
	echo "echo s >s.txt" >"$BUILDERS/S1.sh" &&
	wo repo S1 &&
	sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo S1) &&
	test "$(state_of repo $run)" = failed &&
	sluice -C repo runs >runs &&
	test_grep "cache. already exists in the worktree" runs &&
	test_grep -v "retried next tick" runs
'

test_done
