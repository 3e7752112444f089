#!/bin/sh
# A builder that replaces .system/runs itself by a link to a copy of it
# outside: sluice writes nothing there (diff.patch was written by
# `git diff --output` through the link), the run ends failed with the
# reason, and gc and abandon delete nothing outside.
. "$(dirname "$0")/lib.sh"

listing() { # DIR: every file below with its bytes' digest
	(cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}

test_expect_success 'setup' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	mkdir outside &&
	cat >"$BUILDERS/R1.sh" <<-EOS &&
	echo r >r.txt
	cp -a "$TRASH/repo/.system/runs" "$TRASH/outside/runs"
	mv "$TRASH/repo/.system/runs" "$TRASH/repo/.system/runs.moved"
	ln -s "$TRASH/outside/runs" "$TRASH/repo/.system/runs"
	(cd "$TRASH/outside" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum) >"$TRASH/planted"
	EOS
	wo repo R1
'

test_expect_success 'nothing is written through a link planted at .system/runs; the run ends' '
	{ sluice -C repo tick >out 2>&1 || :; } &&
	listing outside >now && test_cmp planted now &&
	test_grep "symbolic link" out
'

test_expect_success 'gc and abandon delete nothing outside, and say why' '
	test_expect_failure_code 1 sluice -C repo gc --keep-last 0 >gc.out 2>&1 &&
	run=$(ls repo/.system/runs.moved) &&
	{ sluice -C repo abandon $run >ab.out 2>&1 || :; } &&
	listing outside >now && test_cmp planted now &&
	test_grep "symbolic link" gc.out
'

test_expect_success 'with the folder put back, the run is failed and gc cleans it up' '
	rm repo/.system/runs && mv repo/.system/runs.moved repo/.system/runs &&
	{ sluice -C repo tick >out 2>&1 || :; } &&
	run=$(run_of repo R1) && test "$(state_of repo $run)" = failed &&
	sluice -C repo gc --keep-last 0 --force >gc.out 2>&1 &&
	! test -d repo/.system/runs/$run &&
	listing outside >now && test_cmp planted now
'

test_done
