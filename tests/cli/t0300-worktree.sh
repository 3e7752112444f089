#!/bin/sh
# sluice worktree: the rp1 worktree tool (seeds/001), its JSON and its errors.
. "$(dirname "$0")/lib.sh"

json_field() { # FIELD FILE: the string or literal value of "FIELD" in pretty JSON
	sed -n "s/^ *\"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$2"
}

main_state() { # a hash of everything the user sees in the main checkout
	{ git status --porcelain=v2 -z; git diff; git diff --cached; git rev-parse HEAD
	  git ls-files -z --others --exclude-standard | xargs -0 -r sha256sum; } | sha256sum
}

test_expect_success 'setup' '
	test_repo repo &&
	(cd repo && echo one >f.txt && git add f.txt && git commit -q -m second)
'

test_expect_success 'create: JSON shape, branch from the slug, path, basedOn' '
	(cd repo && sluice worktree create "Fix the authentication bug in login" >../out 2>../err) &&
	test_grep "\"success\": true" out &&
	test_grep "\"tool\": \"worktree\"" out &&
	test "$(json_field branch out)" = quick-build-fix-authentication-bug-login &&
	test "$(json_field path out)" = "$TRASH/repo/.system/worktrees/quick-build-fix-authentication-bug-login" &&
	test "$(json_field basedOn out)" = "$(git -C repo rev-parse HEAD)" &&
	test "$(git -C "$(json_field path out)" symbolic-ref HEAD)" = refs/heads/quick-build-fix-authentication-bug-login &&
	test -f "$(json_field path out)/f.txt" &&
	test_grep "core.hooksPath" err &&
	test -z "$(git -C repo status --porcelain)"
'

test_expect_success 'create: slugs of the seed examples' '
	(cd repo && sluice worktree create "Add dark mode toggle to settings" >../out) &&
	test "$(json_field branch out)" = quick-build-add-dark-mode-toggle-settings &&
	(cd repo && sluice worktree create "REQ-123: Improve performance" --prefix feat >../out) &&
	test "$(json_field branch out)" = feat-req-123-improve-performance
'

test_expect_success 'create: collisions get -2, -3' '
	(cd repo && sluice worktree create fix-auth >../o1 && sluice worktree create fix-auth >../o2 &&
	 sluice worktree create fix-auth >../o3) &&
	test "$(json_field branch o1)" = quick-build-fix-auth &&
	test "$(json_field branch o2)" = quick-build-fix-auth-2 &&
	test "$(json_field branch o3)" = quick-build-fix-auth-3
'

test_expect_success 'create: Path already exists' '
	mkdir -p repo/.system/worktrees/quick-build-taken &&
	(cd repo && test_expect_failure_code 1 sluice worktree create taken >../out 2>../err) &&
	test_grep "\"success\": false" out &&
	test_grep "Path already exists" out &&
	test_grep "Path already exists" err &&
	test -z "$(git -C repo branch --list quick-build-taken)"
'

test_expect_success 'create: --base and a dirty main checkout left alone' '
	(cd repo && echo staged >f.txt && git add f.txt && echo unstaged >f.txt &&
	 echo new >untracked.txt && main_state >../before &&
	 sluice worktree create based --base HEAD~1 >../out && main_state >../after) &&
	test_cmp before after &&
	test "$(json_field basedOn out)" = "$(git -C repo rev-parse HEAD~1)" &&
	! test -f "$(json_field path out)/f.txt" &&
	(cd repo && test_expect_failure_code 1 sluice worktree create x --base nosuchref >../out) &&
	test_grep "cannot resolve base" out
'

test_expect_success 'status: in a worktree and in the main checkout' '
	wt=$TRASH/repo/.system/worktrees/quick-build-fix-auth &&
	(cd "$wt" && sluice worktree status >"$TRASH/out") &&
	test "$(json_field isWorktree out)" = true &&
	test "$(json_field path out)" = "$wt" &&
	test "$(json_field branch out)" = quick-build-fix-auth &&
	test "$(json_field mainRepoPath out)" = "$TRASH/repo" &&
	(cd repo && sluice worktree status >../out) &&
	test "$(json_field isWorktree out)" = false &&
	! grep -q mainRepoPath out
'

test_expect_success 'cleanup: refuses a dirty worktree, --force removes it, branch kept' '
	wt=$TRASH/repo/.system/worktrees/quick-build-fix-auth &&
	echo dirty >"$wt/scratch.txt" &&
	(cd repo && test_expect_failure_code 1 sluice worktree cleanup "$wt" >../out) &&
	test_grep "uncommitted changes" out && test_grep "force" out &&
	test -f "$wt/scratch.txt" &&
	(cd repo && sluice worktree cleanup "$wt" --force >../out) &&
	test "$(json_field removed out)" = true &&
	test "$(json_field branchDeleted out)" = false &&
	test "$(json_field path out)" = "$wt" &&
	! test -e "$wt" &&
	test -n "$(git -C repo branch --list quick-build-fix-auth)"
'

test_expect_success 'cleanup: --keep-branch=false deletes the branch; relative paths' '
	(cd repo && sluice worktree cleanup .system/worktrees/quick-build-fix-auth-2 --keep-branch=false >../out) &&
	test "$(json_field branchDeleted out)" = true &&
	test -z "$(git -C repo branch --list quick-build-fix-auth-2)" &&
	(cd repo && sluice worktree cleanup --keep-branch .system/worktrees/quick-build-fix-auth-3 >../out) &&
	test "$(json_field branchDeleted out)" = false
'

test_expect_success 'cleanup: paths outside the repository and unknown ones are refused' '
	mkdir -p outside &&
	(cd repo && test_expect_failure_code 1 sluice worktree cleanup ../outside >../out) &&
	test_grep "not inside the repository" out && test -d outside &&
	(cd repo && test_expect_failure_code 1 sluice worktree cleanup "$TRASH/repo/f.txt" >../out) &&
	test_grep "no worktree" out &&
	(cd repo && test_expect_failure_code 2 sluice worktree cleanup x --keep-branch=maybe)
'

test_expect_success 'hooks: the printed environment keeps the repository hooks out' '
	printf "#!/bin/sh\nexit 1\n" >repo/.git/hooks/pre-commit && chmod +x repo/.git/hooks/pre-commit &&
	(cd repo && sluice worktree create hooks >../out) &&
	wt=$(json_field path out) &&
	echo h >"$wt/h.txt" && git -C "$wt" add h.txt &&
	! git -C "$wt" commit -q -m blocked &&
	GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/dev/null \
		git -C "$wt" commit -q -m passes
'

test_expect_success 'help and usage errors' '
	sluice worktree --help >out && test_grep "worktree create SLUG" out &&
	sluice worktree create --help >out && test_grep "quick-build" out &&
	sluice worktree cleanup --help >out && test_grep "keep-branch" out &&
	sluice worktree status --help >out && test_grep "isWorktree" out &&
	(cd repo && test_expect_failure_code 2 sluice worktree frobnicate) &&
	(cd repo && test_expect_failure_code 2 sluice worktree create) &&
	(cd repo && test_expect_failure_code 2 sluice worktree create "!!!")
'

test_done
