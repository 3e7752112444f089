#!/bin/sh
# What can never work is refused up front: 'sluice check' rejects a target
# that is no existing local branch and share/copy entries naming .git or
# .system; a tick without its target fails clearly and starts nothing;
# init refuses a target that could become an option; --jobs and queue.jobs
# share one limit.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	echo "echo one >one.txt" >"$BUILDERS/N1.sh" &&
	cp repo/.system/config.yaml good.yaml
'

for bad in "nosuchbranch|is not a branch of this repository" "-x|starts with '-'" \
	"HEAD|is not a branch" "refs/heads/main|is not a branch name (name the branch without 'refs/heads/')"; do
	target=${bad%%|*} msg=${bad#*|}
	test_expect_success "check rejects target '$target'" '
		sed "s|^target:.*|target: \"$target\"|" good.yaml >repo/.system/config.yaml &&
		test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
		test_grep "target .$target. $msg" out
	'
done

for bad in "share: [.git]" "share: [.git/hooks]" "copy: [.system]" "copy: [./.SYSTEM/x]" \
	"share: [a/../../x]"; do
	test_expect_success "check rejects worktree $bad" '
		{ cat good.yaml && echo "worktree:" && echo "  $bad"; } >repo/.system/config.yaml &&
		test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
		test_grep "worktree\.\(share\|copy\)" out
	'
done

test_expect_success 'check rejects a reviewer name that could never be a trailer' '
	{ cat good.yaml && printf "  name: \"bot\\\\nReviewed-by: someone else\"\n"; } >repo/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
	test_grep "reviewer.name .* control character" out &&
	long=$(printf "%0250d" 0) &&
	{ cat good.yaml && echo "  name: r$long"; } >repo/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
	test_grep "reviewer.name .* longer than 200" out &&
	cp good.yaml repo/.system/config.yaml
'

test_expect_success 'check rejects a share entry that is a link leading out of the repository' '
	mkdir -p elsewhere && ln -s "$TRASH/elsewhere" repo/vendor &&
	{ cat good.yaml && echo "worktree:" && echo "  share: [vendor]"; } >repo/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
	test_grep "worktree.share. entry .vendor. leads outside the repository" out &&
	rm repo/vendor
'

test_expect_success 'check rejects an unterminated placeholder in merge.message' '
	{ cat good.yaml && echo "merge:" && echo "  message: \"{work_order.title\""; } >repo/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
	test_grep "unterminated variable .{work_order.title" out
'

test_expect_success 'check of a long target name looks at that branch, not a cut name' '
	long=$(printf "%0200d/%0200d/%098d" 1 2 3) && # 500 bytes, the longest target
	git -C repo branch "$long" main &&
	echo tracked >repo/tracked.txt && git -C repo add tracked.txt &&
	git -C repo commit -q -m tracked && git -C repo branch -f "$long" main &&
	{ sed "s|^target:.*|target: \"$long\"|" good.yaml && echo "worktree:" &&
		echo "  share: [tracked.txt]"; } >repo/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
	test_grep "is tracked in branch" out &&
	test_grep -v "is not a branch of this repository" out &&
	cp good.yaml repo/.system/config.yaml &&
	git -C repo branch -D "$long" >/dev/null
'

test_expect_success 'a tick whose target does not exist fails clearly and starts nothing' '
	sed "s|^target:.*|target: nosuchbranch|" good.yaml >repo/.system/config.yaml &&
	wo repo N1 &&
	test_expect_failure_code 1 sluice -C repo tick >out 2>&1 &&
	test_grep "target branch .nosuchbranch. does not exist" out &&
	sluice -C repo runs >runs &&
	test_grep "no runs" runs &&
	test_expect_failure_code 1 sluice -C repo tick >out 2>&1 &&
	sluice -C repo runs >runs &&
	test_grep "no runs" runs
'

test_expect_success 'with the target back, the same work order runs and merges' '
	cp good.yaml repo/.system/config.yaml &&
	sluice -C repo check &&
	sluice -C repo tick >out 2>&1 &&
	test "$(state_of repo $(run_of repo N1))" = merged
'

test_expect_success 'a run whose target vanished after the tick began ends failed, with the reason' '
	test_skip_unless_tool flock &&
	git -C repo branch -f vanish main &&
	sed "s|^target:.*|target: vanish|" good.yaml >repo/.system/config.yaml &&
	echo "echo two >two.txt" >"$BUILDERS/N2.sh" &&
	wo repo N2 &&
	# the tick checks its target, then waits for the repository lock held here;
	# the branch goes meanwhile, and the run finds it gone when it prepares
	{ flock repo/.system/lock sh -c ": >held; sleep 1; git -C repo branch -D vanish >/dev/null" & } &&
	wait_until "test -f held" &&
	{ sluice -C repo tick >vanish.out 2>&1 || :; } &&
	wait &&
	# the tick checks the target under the lock before it claims anything
	# (then nothing starts); a run claimed before the branch went ends failed
	run=$(run_of repo N2) &&
	if test -z "$run"; then
		test_grep "does not exist.*nothing was started" vanish.out
	else
		test "$(state_of repo $run)" = failed &&
		sluice -C repo runs >runs &&
		test_grep "cannot read the target branch" runs &&
		test_grep -v "retried next tick" runs
	fi &&
	cp good.yaml repo/.system/config.yaml
'

test_expect_success 'init refuses --target -x and --target HEAD' '
	test_repo fresh &&
	test_expect_failure_code 1 sluice -C fresh init --target -x >out 2>&1 &&
	test_grep "starts with" out &&
	test_expect_failure_code 1 sluice -C fresh init --target HEAD >out 2>&1 &&
	test_grep "is not a branch" out &&
	! test -f fresh/.system/config.yaml
'

test_expect_success 'tick --jobs and queue.jobs share one limit' '
	test_expect_failure_code 2 sluice -C repo tick --jobs 257 >out 2>&1 &&
	test_grep "from 1 to 256" out &&
	{ cat good.yaml && echo "queue:" && echo "  jobs: 257"; } >repo/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
	test_grep "queue.jobs" out &&
	cp good.yaml repo/.system/config.yaml &&
	sluice -C repo tick --jobs 256 >out 2>&1
'

test_done
