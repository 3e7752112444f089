#!/bin/sh
# gates.<name>.worktree: read-only: the no_write guard after that gate (Gump's
# validate steps): a gate that writes a file fails, naming it; one that
# writes only ignored files or nothing passes; a bad value is a config error.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: a read-only gate and a read-write one' '
	sluice_repo repo "$(approve_reviewer_config)" &&
	printf "%s\n" "*.log" >repo/.gitignore &&
	git -C repo add .gitignore && git -C repo commit -q -m "ignore logs" &&
	cat >>repo/.system/config.yaml <<-\EOF &&
	gates:
	  check:
	    command: [sh, -c, "echo checked >check.log; if [ -f WRITE ]; then echo out >check-output.txt; fi; exit 0"]
	    worktree: read-only
	  fmt:
	    command: [sh, -c, "echo formatted >fmt-output.txt"]
	EOF
	sluice -C repo check
'

test_expect_success 'a read-only gate that writes only an ignored file passes; the other gate may write' '
	echo "echo a >a.txt" >"$BUILDERS/A.sh" &&
	wo repo A &&
	sluice -C repo tick &&
	test "$(state_of repo $(run_of repo A))" = merged &&
	git -C repo show main:fmt-output.txt &&
	! git -C repo show main:check.log 2>/dev/null
'

test_expect_success 'a read-only gate that writes a file fails the attempt, naming it; nothing merges' '
	git -C repo rev-parse main >main.before &&
	echo "echo b >b.txt; : >WRITE" >"$BUILDERS/B.sh" &&
	wo repo B &&
	sluice -C repo tick &&
	run=$(run_of repo B) &&
	test "$(state_of repo $run)" = failed &&
	sluice -C repo status --json $run >st.json &&
	test_grep "gate .check. failed" st.json &&
	test_grep "no_write: the gate changed check-output.txt" repo/.system/runs/$run/gates.json &&
	test "$(git -C repo rev-parse main)" = "$(cat main.before)"
'

test_expect_success 'a bad gates.<name>.worktree is a config error' '
	cp repo/.system/config.yaml good.yaml &&
	sed -i "s/worktree: read-only/worktree: none/" repo/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C repo check >out 2>&1 &&
	test_grep "unknown gates.<name>.worktree .none.; use read-write (the default) or read-only" out &&
	cp good.yaml repo/.system/config.yaml
'

test_done
