#!/bin/sh
# Nothing sluice writes passes through a link: a builder that replaces its
# run folder, a folder in it or an artifact file by a symbolic link to a
# folder outside redirects none of sluice's writes; the run ends with a
# clear reason.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	printf "%s\n" "gates:" "  test: [sh, -c, \"true\"]" >>repo/.system/config.yaml &&
	mkdir outside1 outside2 outside3 &&
	cat >"$BUILDERS/L1.sh" <<-EOS &&
	echo one >one.txt
	mv "\$SLUICE_RUN_DIR" "\$SLUICE_RUN_DIR.moved"
	ln -s "$TRASH/outside1" "\$SLUICE_RUN_DIR"
	EOS
	cat >"$BUILDERS/L2.sh" <<-EOS &&
	echo two >two.txt
	mv "\$SLUICE_RUN_DIR/attempts" "\$SLUICE_RUN_DIR/attempts.moved"
	ln -s "$TRASH/outside2" "\$SLUICE_RUN_DIR/attempts"
	EOS
	cat >"$BUILDERS/L4.sh" <<-EOS &&
	echo four >four.txt
	mv "\$SLUICE_RUN_DIR" "\$SLUICE_RUN_DIR.moved"
	ln -s "\$SLUICE_RUN_DIR.moved" "\$SLUICE_RUN_DIR"
	EOS
	cat >"$BUILDERS/L3.sh" <<-EOS
	echo three >three.txt
	for f in gates.json diff.patch files_changed.json verdict.json manifest.json; do
		ln -s "$TRASH/outside3/\$f" "\$SLUICE_RUN_DIR/\$f"
	done
	EOS
'

test_expect_success 'a builder that replaced its run folder by a link: nothing written outside, the run ends' '
	wo repo L1 &&
	{ sluice -C repo tick >out 2>&1 || :; } &&
	test -z "$(ls -A outside1)" &&
	run=$(run_of repo L1) &&
	sluice -C repo status --json $run >st &&
	state=$(state_of repo $run) &&
	test "$state" = failed &&
	{ sluice -C repo tick >out2 2>&1 || :; } &&
	test -z "$(ls -A outside1)"
'

test_expect_success 'the reason of that run names the symbolic link' '
	test_grep "symbolic link" st
'

test_expect_success 'a builder that replaced attempts/ by a link: nothing written outside, the run goes on' '
	wo repo L2 &&
	sluice -C repo tick >out 2>&1 &&
	test -z "$(ls -A outside2)" &&
	run=$(run_of repo L2) &&
	test "$(state_of repo $run)" = merged &&
	test -d repo/.system/runs/$run/attempts && ! test -L repo/.system/runs/$run/attempts
'

test_expect_success 'artifact files replaced by links: replaced, never written through' '
	wo repo L3 &&
	sluice -C repo tick >out 2>&1 &&
	test -z "$(ls -A outside3)"
'

test_expect_success 'a run folder replaced by a link that still leads to the worktree: the run ends, said why' '
	wo repo L4 &&
	{ sluice -C repo tick >out 2>&1 || :; } &&
	run=$(run_of repo L4) &&
	test "$(state_of repo $run)" = failed &&
	sluice -C repo runs >runs &&
	test_grep "run folder was tampered with" runs &&
	! test -e repo/.system/runs/$run.moved/gates.json &&
	sluice -C repo tick >out 2>&1 &&
	test "$(state_of repo $run)" = failed
'

test_expect_success 'cleaning up a run whose folder is a link deletes nothing outside' '
	run=$(run_of repo L1) &&
	mkdir -p outside1/worktree && echo mine >outside1/worktree/keep.txt &&
	echo mine >outside1/work_order.md &&
	{ sluice -C repo abandon $run >out 2>&1 || :; } &&
	{ sluice -C repo tick >out 2>&1 || :; } &&
	{ sluice -C repo gc --keep-last 0 >out 2>&1 || :; } &&
	test -f outside1/worktree/keep.txt &&
	test -f outside1/work_order.md
'

test_done
