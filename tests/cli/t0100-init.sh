#!/bin/sh
# sluice init: .system/, the exclude line, the target branch, idempotence.
. "$(dirname "$0")/lib.sh"

test_expect_success 'init sets up .system/ and the inbox' '
	test_repo r1 &&
	sluice -C r1 init >out &&
	test -f r1/.system/config.yaml &&
	test -f r1/.system/sluice.db &&
	test -d r1/.system/runs &&
	test -f r1/.system/lock &&
	test -d r1/work_orders &&
	test_grep "initialized sluice" out &&
	test_grep "^target: main$" r1/.system/config.yaml &&
	test_grep "^  inbox: work_orders$" r1/.system/config.yaml
'

test_expect_success 'the exclude line hides .system/ from git status' '
	test "$(grep -c "^/\.system/$" r1/.git/info/exclude)" = 1 &&
	(cd r1 && git status --porcelain --untracked-files=all >../status) &&
	test_grep -v ".system" status
'

test_expect_success 'init twice changes nothing and says so' '
	cp r1/.system/config.yaml config.before &&
	cp r1/.git/info/exclude exclude.before &&
	sluice -C r1 init >out2 &&
	test_grep "already initialized" out2 &&
	test_grep "nothing changed" out2 &&
	test_cmp config.before r1/.system/config.yaml &&
	test_cmp exclude.before r1/.git/info/exclude
'

test_expect_success 'a missing exclude file and info/ directory are created' '
	test_repo r2 &&
	rm -rf r2/.git/info &&
	sluice -C r2 init >out &&
	test "$(grep -c "^/\.system/$" r2/.git/info/exclude)" = 1
'

test_expect_success 'an existing exclude line is not duplicated' '
	test_repo r3 &&
	printf "*.tmp\n/.system/" >r3/.git/info/exclude &&
	sluice -C r3 init >out &&
	test "$(grep -c "^/\.system/$" r3/.git/info/exclude)" = 1 &&
	test_grep "^\*\.tmp$" r3/.git/info/exclude
'

test_expect_success 'a removed database is put back on the next init' '
	rm r3/.system/sluice.db &&
	sluice -C r3 init >out &&
	test -f r3/.system/sluice.db &&
	test_grep "put back" out
'

test_expect_success 'the target is the branch HEAD names' '
	test_repo r4 &&
	(cd r4 && git checkout -q -b develop) &&
	sluice -C r4 init &&
	test_grep "^target: develop$" r4/.system/config.yaml
'

test_expect_success 'a detached HEAD is refused without --target' '
	test_repo r5 &&
	(cd r5 && git checkout -q --detach) &&
	test_expect_failure_code 1 sluice -C r5 init 2>err &&
	test_grep "HEAD is detached" err &&
	test_grep "target BRANCH" err &&
	test ! -f r5/.system/config.yaml &&
	sluice -C r5 init --target main &&
	test_grep "^target: main$" r5/.system/config.yaml
'

test_expect_success 'a branch without commits is refused without --target' '
	git init -q r6 &&
	test_expect_failure_code 1 sluice -C r6 init 2>err &&
	test_grep "has no commits yet" err
'

test_expect_success '--inbox and --target are written into the config' '
	test_repo r7 &&
	sluice -C r7 init --inbox tasks/inbox --target release >out &&
	test -d r7/tasks/inbox &&
	test_grep "^  inbox: tasks/inbox$" r7/.system/config.yaml &&
	test_grep "^target: release$" r7/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C r7 check >out &&
	test_grep "target .release. is not a branch of this repository" out &&
	git -C r7 branch release &&
	sluice -C r7 check
'

test_expect_success 'an inbox outside the repository is refused' '
	test_repo r8 &&
	test_expect_failure_code 1 sluice -C r8 init --inbox ../elsewhere 2>err &&
	test_grep "inside the repository" err
'

test_expect_success 'init from a subdirectory sets up the root' '
	test_repo r9 &&
	mkdir -p r9/sub/dir &&
	(cd r9/sub/dir && sluice init) &&
	test -f r9/.system/config.yaml
'

test_expect_success 'usage errors exit 2; --help exits 0' '
	test_expect_failure_code 2 sluice -C r1 init --bogus 2>err &&
	test_expect_failure_code 2 sluice -C r1 init extra 2>err &&
	sluice init --help >help &&
	test_grep "usage: sluice init" help &&
	test_grep "examples:" help
'

test_expect_success 'outside a git repository init fails clearly' '
	mkdir plain &&
	test_expect_failure_code 1 sluice -C plain init 2>err &&
	test_grep "not inside a git repository" err
'

test_done
