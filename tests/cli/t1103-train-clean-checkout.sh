#!/bin/sh
# The merge gates judge the merge commit, not what the builder left: a car
# is tested in a checkout of its own that holds the merge commit's files and
# none of the ignored ones the builder made in the run's worktree (they used
# to be there, and a merge that cannot build looked green). What a user
# wants kept for speed is named in merge.keep_ignored and copied across.
. "$(dirname "$0")/lib.sh"

# The builder writes gen.h (ignored) and cache/ (ignored) and a tracked
# file; the gate needs gen.h, so the merge commit alone fails it. The gate
# also records what it saw of cache/.
G="$TRASH/gate"
mkdir -p "$G"
cat >"$BUILDERS/A.sh" <<'EOS'
echo "#define GEN 1" >gen.h
mkdir -p cache && echo warm >cache/state
echo a >a.txt
EOS
cat >"$TRASH/needs-gen.sh" <<EOS
if git rev-parse -q --verify HEAD^2 >/dev/null; then
	if [ -f cache/state ]; then echo kept >"$G/cache"; else echo gone >"$G/cache"; fi
fi
test -f gen.h
EOS

setup_repo() { # extra config lines...
	rm -rf repo "$G"/* &&
	sluice_repo repo "gates:" "  build: [sh, $TRASH/needs-gen.sh]" "merge:" "  gates: [build]" \
		"$@" "$(approve_reviewer_config)" &&
	printf "%s\n" gen.h cache/ >repo/.gitignore &&
	git -C repo add .gitignore && git -C repo commit -q -m ignore
}

test_expect_success 'a gate that needs a file the builder left: the car is red' '
	setup_repo &&
	wo repo A && sluice -C repo tick >tick.out 2>&1 &&
	ra=$(run_of repo A) &&
	test "$(state_of repo $ra)" != merged &&
	test "$(git -C repo rev-list --merges --count main)" = 0 &&
	sluice -C repo log $ra >log &&
	test_grep "merge gates failed" log &&
	test "$(cat "$G/cache")" = gone &&
	test -f repo/.system/runs/$ra/worktree/gen.h &&
	! git -C repo worktree list | grep worktree-train
'

test_expect_success 'merge.keep_ignored copies the paths named, and only those' '
	setup_repo "  keep_ignored: [cache/]" &&
	wo repo A && sluice -C repo tick >tick.out 2>&1 &&
	ra=$(run_of repo A) &&
	test "$(state_of repo $ra)" != merged &&
	test "$(cat "$G/cache")" = kept
'

test_expect_success 'with gen.h kept too the car is green and lands' '
	setup_repo "  keep_ignored: [cache/, gen.h]" &&
	wo repo A && sluice -C repo tick >tick.out 2>&1 &&
	ra=$(run_of repo A) &&
	test "$(state_of repo $ra)" = merged &&
	! git -C repo cat-file -e main:gen.h
'

test_expect_success 'merge.keep_ignored is checked: relative, inside, not .git' '
	for bad in /etc ../up .git/hooks .system; do
		setup_repo "  keep_ignored: [$bad]" &&
		test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
		test_grep "merge.keep_ignored. entry .$bad" out || return 1
	done
'

test_done
