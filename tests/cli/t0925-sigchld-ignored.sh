#!/bin/sh
# sluice started with SIGCHLD ignored (a disposition that exec keeps: some
# daemons, supervisors and cron wrappers hand it down). The kernel then
# reaps children by itself, so no exit status could be read: a builder that
# failed and a gate that failed were taken as passed and the run merged,
# and the tick gave up waiting for its workers ("cannot wait for process").
# sluice sets SIGCHLD back to its default first thing.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool perl

# sluice with SIGCHLD ignored
sluice_nochld() {
	perl -e '$SIG{CHLD} = "IGNORE"; exec @ARGV or die' "$SLUICE" "$@"
}

test_expect_success 'setup: a builder that fails, and a gate that fails' '
	sluice_repo r "$(approve_reviewer_config)" "gates:" "  g: [sh, -c, \"exit 5\"]" &&
	printf "%s\n" "echo f >f.txt" "exit 3" >"$BUILDERS/F.sh" &&
	printf "%s\n" "echo g >g.txt" >"$BUILDERS/G.sh" &&
	wo r F && wo r G &&
	perl -e "\$SIG{CHLD} = \"IGNORE\"; exec @ARGV or die" grep SigIgn /proc/self/status >ign &&
	test_grep -v "SigIgn:[[:space:]]*0*$" ign
'

test_expect_success 'with SIGCHLD ignored: the failed builder and the failed gate fail their runs' '
	sluice_nochld -C r tick --jobs 2 >out 2>&1 &&
	test_grep -v "cannot wait" out &&
	test "$(state_of r "$(run_of r F)")" = failed &&
	test "$(state_of r "$(run_of r G)")" = failed &&
	sluice -C r status "$(run_of r F)" >st &&
	test_grep "exit 3" st &&
	test_expect_failure_code 128 git -C r cat-file -e main:f.txt &&
	test_expect_failure_code 128 git -C r cat-file -e main:g.txt
'

test_done
