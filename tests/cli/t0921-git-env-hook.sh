#!/bin/sh
# sluice started from a git hook (a pre-receive hook runs with GIT_DIR,
# GIT_QUARANTINE_PATH, GIT_OBJECT_DIRECTORY, GIT_ALTERNATE_OBJECT_DIRECTORIES
# and, for a shallow push, GIT_SHALLOW_FILE), or under a shell with other
# GIT_* variables set: `sluice tick`, `sluice worktree create` and `sluice
# audit` work on the repository as without them, the builder's own git
# commits work, the user's checkout and the repository the variables name
# are left as they were. GIT_QUARANTINE_PATH used to reach every git sluice
# starts, which then refused every ref update: no run got past preparing.
. "$(dirname "$0")/lib.sh"

# sluice in a hook's environment, pointed at the repository "decoy"
hook_sluice() {
	GIT_DIR="$TRASH/decoy/.git" GIT_WORK_TREE="$TRASH/decoy" \
	GIT_QUARANTINE_PATH="$TRASH/decoy/.git/objects/incoming-x" \
	GIT_OBJECT_DIRECTORY="$TRASH/decoy/.git/objects/incoming-x" \
	GIT_ALTERNATE_OBJECT_DIRECTORIES="$TRASH/decoy/.git/objects" \
	GIT_SHALLOW_FILE="$TRASH/shallow" GIT_INDEX_FILE="$TRASH/index" \
	GIT_NAMESPACE=ns GIT_CEILING_DIRECTORIES="$TRASH" \
	GIT_EXTERNAL_DIFF=false GIT_SSH_COMMAND=false GIT_PAGER=false \
	GIT_TRACE="$TRASH/trace" \
	"$SLUICE" "$@"
}

# what the decoy repository holds: refs, objects, index, files
decoy_digest() {
	(cd decoy && git for-each-ref && find . -path ./.git/logs -prune -o -print | sort &&
		git ls-files -s && cat .git/HEAD) | sha256sum
}

test_expect_success 'setup: a decoy repository, a work order whose builder commits' '
	test_repo decoy &&
	mkdir decoy/.git/objects/incoming-x &&
	sluice_repo repo "$(approve_reviewer_config)" &&
	echo "a line of the user" >>repo/README.md &&
	git -C repo rev-parse HEAD >shallow &&
	printf "%s\n" "echo w >w.txt" "git add w.txt" "git commit -q -m w" >"$BUILDERS/W1.sh" &&
	wo repo W1 &&
	decoy_digest >decoy.before &&
	git -C repo diff >diff.before
'

test_expect_success 'a tick in a hook environment builds and merges' '
	hook_sluice -C repo tick >out 2>&1 &&
	run=$(run_of repo W1) &&
	test "$(state_of repo $run)" = merged &&
	git -C repo show main:w.txt >w &&
	test_grep "^w$" w &&
	git -C repo diff >diff.after &&
	test_cmp diff.before diff.after &&
	decoy_digest >decoy.after &&
	test_cmp decoy.before decoy.after
'

test_expect_success 'worktree create and audit in a hook environment' '
	(cd repo && hook_sluice worktree create agent-1 >../wt.json) &&
	test_grep "\"success\": true" wt.json &&
	test -f "$(sed -n "s/^ *\"path\": \"\(.*\)\",\{0,1\}$/\1/p" wt.json)/README.md" &&
	hook_sluice -C repo audit >audit.out 2>&1 &&
	git -C repo diff >diff.after &&
	test_cmp diff.before diff.after &&
	decoy_digest >decoy.after &&
	test_cmp decoy.before decoy.after
'

test_done
