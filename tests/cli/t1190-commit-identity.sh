#!/bin/sh
# The merge and snapshot commits sluice makes carry a person's identity, not
# always sluice <sluice@localhost> (projects with DCO or identity checks could
# not take them): commit.name/commit.email from the config, else git's
# user.name/user.email as the repository sees them (its own config, then the
# global one), else sluice <sluice@localhost>. `sluice audit` holds for them.
. "$(dirname "$0")/lib.sh"

# The builder leaves its file uncommitted: the run's head is sluice's snapshot.
echo 'echo one >one.txt' >"$BUILDERS/W1.sh"

land() { # extra config lines...
	rm -rf repo &&
	sluice_repo repo "$(approve_reviewer_config)" "$@" &&
	wo repo W1 &&
	settle repo &&
	test "$(state_of repo "$(run_of repo W1)")" = merged &&
	git -C repo log -1 --format='%an <%ae>|%cn <%ce>' main >merge.who &&
	git -C repo log -1 --format='%an <%ae>|%cn <%ce>|%s' main^2 >snap.who &&
	sluice -C repo audit >audit.out 2>&1
}

test_expect_success 'by default: git user.name and user.email of the global config' '
	land &&
	echo "Test User <user@example.com>|Test User <user@example.com>" >expect &&
	test_cmp expect merge.who &&
	test_grep "^Test User <user@example.com>|Test User <user@example.com>|sluice snapshot" \
		snap.who
'

test_expect_success 'the repository'\''s own user.name wins over the global one' '
	rm -rf repo &&
	sluice_repo repo "$(approve_reviewer_config)" &&
	git -C repo config user.name "Repo Person" &&
	git -C repo config user.email repo@example.org &&
	wo repo W1 && settle repo &&
	git -C repo log -1 --format="%an <%ae>|%cn <%ce>" main >merge.who &&
	echo "Repo Person <repo@example.org>|Repo Person <repo@example.org>" >expect &&
	test_cmp expect merge.who &&
	git -C repo log -1 --format="%an <%ae>" main^2 >snap.who &&
	echo "Repo Person <repo@example.org>" >expect &&
	test_cmp expect snap.who &&
	sluice -C repo audit
'

test_expect_success 'commit.name and commit.email in the config win' '
	land "commit:" "  name: Merge Bot" "  email: bot@example.net" &&
	echo "Merge Bot <bot@example.net>|Merge Bot <bot@example.net>" >expect &&
	test_cmp expect merge.who &&
	test_grep "^Merge Bot <bot@example.net>|" snap.who
'

test_expect_success 'only commit.email: the name is still git'\''s' '
	land "commit:" "  email: bot@example.net" &&
	echo "Test User <bot@example.net>|Test User <bot@example.net>" >expect &&
	test_cmp expect merge.who
'

test_expect_success 'the conflict resolution sluice commits on the run branch too' '
	rm -rf repo &&
	sluice_repo repo "$(approve_reviewer_config)" "commit:" "  name: Merge Bot" \
		"  email: bot@example.net" &&
	meeting_builders A B "echo %s >same.txt" &&
	wo repo A && wo repo B &&
	sluice -C repo tick --jobs 2 >tick.out 2>&1 &&
	settle repo &&
	test "$(state_of repo "$(run_of repo A)")" = merged &&
	test "$(state_of repo "$(run_of repo B)")" = merged &&
	git -C repo log --format=%H --grep="^Resolved-with:" main >resolved &&
	test "$(wc -l <resolved)" = 1 &&
	git -C repo log -1 --format="%an <%ae>|%cn <%ce>|%p" "$(cat resolved)^2" >res.who &&
	test_grep "^Merge Bot <bot@example.net>|Merge Bot <bot@example.net>|[0-9a-f]* [0-9a-f]*$" \
		res.who &&
	sluice -C repo audit
'

test_expect_success 'no identity anywhere: sluice <sluice@localhost>' '
	git config --global --unset user.name &&
	git config --global --unset user.email &&
	test_when_finished "git config --global user.name \"Test User\" &&
		git config --global user.email user@example.com" &&
	land &&
	echo "sluice <sluice@localhost>|sluice <sluice@localhost>" >expect &&
	test_cmp expect merge.who &&
	test_grep "^sluice <sluice@localhost>|" snap.who
'

test_expect_success 'sluice check refuses a name git would refuse' '
	rm -rf repo &&
	sluice_repo repo "commit:" "  name: \"Eve <eve@x>\"" "  mail: x" &&
	test_expect_failure_code 1 sluice -C repo check >check.out 2>&1 &&
	test_grep "commit.name. must be one line" check.out &&
	test_grep "unknown key .mail." check.out
'

test_done
