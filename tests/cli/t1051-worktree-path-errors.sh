#!/bin/sh
# sluice worktree create --path/--branch: each refusal, with the seed's
# messages (seeds/004: "error: ..." and "suggestion: ..." lines, after
# sluice's "sluice: "), exit 1 and a JSON error; hostile names and paths
# never reach git as options and leave nothing behind. Cleanup of a dirty
# worktree: the seed's message, --force loses the changes.
. "$(dirname "$0")/lib.sh"

json_field() { # FIELD FILE: the string or literal value of "FIELD" in pretty JSON
	sed -n "s/^ *\"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p" "$2"
}

has_line() { # LINE FILE: FILE holds exactly LINE
	if ! grep -Fxq -e "$1" "$2"; then
		echo "expected the line '$1' in $2:" >&2
		cat "$2" >&2
		return 1
	fi
}

state() { # everything the refusals must leave as it was
	git -C "$TRASH/repo" worktree list --porcelain
	git -C "$TRASH/repo" for-each-ref --format='%(refname) %(objectname)'
	(cd "$TRASH" && find . -path ./.out.\* -prune -o -path ./state.\* -prune -o -path ./out -prune \
		-o -path ./err -prune -o -path "./repo/.git/logs" -prune -o -print | LC_ALL=C sort)
}

refused() { # EXIT ERROR-LINE SUGGESTION-LINE sluice-args...: refused, nothing changed
	_code=$1 _e=$2 _s=$3
	shift 3
	state >"$TRASH/state.before" &&
	test_expect_failure_code "$_code" sluice "$@" >"$TRASH/out" 2>"$TRASH/err" &&
	state >"$TRASH/state.after" &&
	test_cmp "$TRASH/state.before" "$TRASH/state.after" &&
	has_line "sluice: error: $_e" "$TRASH/err" &&
	has_line "sluice: suggestion: $_s" "$TRASH/err" &&
	test "$(json_field success "$TRASH/out")" = false &&
	has_line "  \"error\": \"$_e\"," "$TRASH/out"
}

SUGGEST_PLACE="use a path outside the repository's .git and .system/ folders, such as ./worktrees/NAME"
SUGGEST_NAME="use a name git accepts (git check-ref-format --branch NAME) that does not start with '-'"

test_expect_success 'setup' '
	test_repo repo &&
	(cd repo && echo one >f.txt && git add f.txt && git commit -q -m second) &&
	(cd repo && sluice worktree create --path ./worktrees/feature-a --branch feature-a >/dev/null 2>&1)
'

test_expect_success 'a path that exists and is not a worktree: the seed message' '
	mkdir -p repo/worktrees/taken && echo mine >repo/worktrees/taken/keep.txt &&
	cd repo &&
	refused 1 "path '\''./worktrees/taken'\'' already exists and is not a git worktree" \
		"use a different path or remove the existing directory" \
		worktree create --path ./worktrees/taken --branch taken &&
	test -z "$(git branch --list taken)" &&
	test "$(cat worktrees/taken/keep.txt)" = mine &&
	echo file >plain.txt &&
	refused 1 "path '\''plain.txt'\'' already exists and is not a git worktree" \
		"use a different path or remove the existing directory" \
		worktree create --path plain.txt
'

test_expect_success 'outside a git repository: the seed message' '
	mkdir -p nogit &&
	(cd nogit && GIT_CEILING_DIRECTORIES=$TRASH &&  export GIT_CEILING_DIRECTORIES &&
	 refused 1 "cannot create worktree - not in a git repository" \
		"run it inside a git repository, or pass -C DIR" \
		worktree create --path wt --branch x) &&
	! test -e nogit/wt &&
	GIT_CEILING_DIRECTORIES=$TRASH refused 1 "cannot create worktree - not in a git repository" \
		"run it inside a git repository, or pass -C DIR" \
		-C nogit worktree create --path wt
'

test_expect_success 'a bare repository is refused' '
	git clone -q --bare repo bare.git &&
	(cd bare.git && refused 1 "cannot create worktree - '\''$TRASH/bare.git/'\'' is a bare repository" \
		"run it in a clone that has a work tree (git clone REPO DIR)" \
		worktree create --path ../from-bare --branch x) &&
	! test -e from-bare && test "$(git -C bare.git worktree list | wc -l)" = 1
'

test_expect_success 'the worktree there is on another branch, or detached' '
	cd repo &&
	refused 1 "worktree '\''./worktrees/feature-a'\'' already exists on branch '\''feature-a'\'', not on branch '\''other'\''" \
		"use another path, or remove that worktree first (sluice worktree cleanup PATH)" \
		worktree create --path ./worktrees/feature-a --branch other &&
	test -z "$(git branch --list other)" &&
	refused 1 "worktree '\''./worktrees/feature-a'\'' already exists on branch '\''feature-a'\'', not detached" \
		"use another path, or remove that worktree first (sluice worktree cleanup PATH)" \
		worktree create --path ./worktrees/feature-a &&
	sluice worktree create --path worktrees/det >/dev/null 2>&1 &&
	refused 1 "worktree '\''worktrees/det'\'' already exists with a detached HEAD, not on branch '\''feature-a'\''" \
		"use another path, or remove that worktree first (sluice worktree cleanup PATH)" \
		worktree create --path worktrees/det --branch feature-a
'

test_expect_success 'a branch checked out in another worktree, or in the main checkout' '
	cd repo &&
	refused 1 "branch '\''feature-a'\'' is already checked out at '\''$TRASH/repo/worktrees/feature-a'\''" \
		"use another branch, or remove that worktree first" \
		worktree create --path worktrees/second-a --branch feature-a &&
	refused 1 "branch '\''main'\'' is already checked out at '\''$TRASH/repo'\''" \
		"use another branch, or remove that worktree first" \
		worktree create --path worktrees/main-again --branch main &&
	test_expect_failure_code 128 git worktree add -q worktrees/git-too feature-a 2>/dev/null
'

test_expect_success 'hostile branch names: -x, a..b, and others git refuses; never an option' '
	cd repo &&
	for b in -x --force -b "a..b" "a b" "x~1" "x^" "x:y" "x?" "x*" "x[" "x.lock" ".x" \
		"x/" "/x" "x//y" "@" HEAD "x@{1}" "HEAD~" ""; do
		refused 1 "'\''$b'\'' is not a valid branch name" "$SUGGEST_NAME" \
			worktree create --path worktrees/hostile --branch "$b" || return 1
	done &&
	! test -e worktrees/hostile &&
	! test -e ./-x && ! test -e worktrees/-x
'

test_expect_success 'a bad --base is refused before anything is made' '
	cd repo &&
	refused 1 "cannot resolve base '\''-x'\'' to a commit: revspec '\''-x'\'' not found" \
		"pass --base with a branch, tag or commit" \
		worktree create --path worktrees/b --branch newb --base -x &&
	refused 1 "cannot resolve base '\''nosuch'\'' to a commit: revspec '\''nosuch'\'' not found" \
		"pass --base with a branch, tag or commit" \
		worktree create --path worktrees/b --base nosuch
'

test_expect_success '--path at .git, inside .git, the root, .system/: refused' '
	cd repo && mkdir -p sub &&
	refused 1 "path '\''.git'\'' is inside the git directory '\''$TRASH/repo/.git'\''" \
		"$SUGGEST_PLACE" worktree create --path .git --branch g1 &&
	refused 1 "path '\''.git/worktrees/x'\'' is inside the git directory '\''$TRASH/repo/.git'\''" \
		"$SUGGEST_PLACE" worktree create --path .git/worktrees/x --branch g2 &&
	refused 1 "path '\''sub/../.git/hooks'\'' is inside the git directory '\''$TRASH/repo/.git'\''" \
		"$SUGGEST_PLACE" worktree create --path sub/../.git/hooks &&
	refused 1 "path '\''sub/.git'\'' is inside the git directory '\''$TRASH/repo/.git'\''" \
		"$SUGGEST_PLACE" worktree create --path sub/.git &&
	refused 1 "path '\''.'\'' is the repository itself; a worktree needs a folder of its own" \
		"$SUGGEST_PLACE" worktree create --path . --branch g3 &&
	(cd sub && refused 1 "path '\''..'\'' is the repository itself; a worktree needs a folder of its own" \
		"$SUGGEST_PLACE" worktree create --path ..) &&
	refused 1 "path '\''.system/worktrees/x'\'' is inside .system/, sluice'\''s own folder" \
		"$SUGGEST_PLACE" worktree create --path .system/worktrees/x --branch g4 &&
	refused 1 "path '\''worktrees/new/../x'\'' has '\''.'\'' or '\''..'\'' after a folder that does not exist" \
		"give the path without them, such as ./worktrees/NAME" worktree create --path worktrees/new/../x
'

test_expect_success 'a symbolic link as --path: refused, its target untouched' '
	mkdir -p target && ln -s "$TRASH/target" repo/link && ln -s "$TRASH/nowhere" repo/dangling &&
	ln -s "$TRASH/repo/worktrees/feature-a" repo/to-wt &&
	cd repo &&
	for l in link dangling to-wt link/; do
		refused 1 "path '\''$l'\'' is a symbolic link; a worktree is never made or reused through a link" \
			"pass the folder it points to, or another path" \
			worktree create --path "$l" --branch feature-a || return 1
	done &&
	test -z "$(ls -A ../target)" && ! test -e ../nowhere
'

test_expect_success 'cleanup of a dirty worktree: the seed message; --force loses the changes' '
	cd repo &&
	echo wip >worktrees/feature-a/wip.txt &&
	refused 1 "cannot remove worktree '\''./worktrees/feature-a'\'' - uncommitted changes present" \
		"either commit the changes, or keep the worktree; --force removes it and loses them" \
		worktree cleanup ./worktrees/feature-a &&
	test -f worktrees/feature-a/wip.txt &&
	sluice worktree cleanup ./worktrees/feature-a --force >../out 2>../err &&
	test "$(json_field removed ../out)" = true &&
	! test -e worktrees/feature-a &&
	test -n "$(git branch --list feature-a)"
'

test_expect_success 'usage errors: exit 2' '
	cd repo &&
	test_expect_failure_code 2 sluice worktree create --branch x 2>../err &&
	test_grep "branch needs --path" ../err &&
	test_expect_failure_code 2 sluice worktree create slug --path wt 2>../err &&
	test_grep "takes no SLUG" ../err &&
	test_expect_failure_code 2 sluice worktree create --path wt --prefix p &&
	test_expect_failure_code 2 sluice worktree create --path &&
	! test -e wt &&
	bad=$(printf "wt-\377") &&
	test_expect_failure_code 2 sluice worktree create --path "$bad" 2>../err &&
	test_grep "must be UTF-8" ../err && ! test -e "$bad" &&
	test_expect_failure_code 2 sluice worktree create --path wt --branch "$bad" &&
	test -z "$(git branch --list "$bad")"
'

test_expect_success 'help: every option, the Smithers example, the exit codes' '
	sluice worktree create --help >out &&
	for o in --path --branch --base --prefix "created" "worktreePath" "cleanedUp" \
		"./worktrees/feature-a --branch feature-a" "./worktrees/feature-b --branch feature-b" \
		"Exit status"; do
		test_grep "$o" out || return 1
	done &&
	sluice worktree --help >out && test_grep "create --path" out
'

test_done
