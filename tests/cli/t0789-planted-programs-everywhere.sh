#!/bin/sh
# A builder plants, in the shared .git/config (directly and through an
# include.path to a file it controls), every program git could run for
# sluice: fsmonitor, an ssh command, an askpass, an external diff, a
# textconv, a pager, an editor, hooks (a hooksPath with post-commit,
# post-merge, reference-transaction, pre-auto-gc) with gc.auto set low, a
# merge driver by merge.default, rerere switched on.
# Through build, review, a merge, a resolution of a conflict and the
# landing of both, none of them runs from a git that sluice started (the
# builder's and resolver's own git commands may run them: they are the
# builder's code). A spy counts when an ancestor is a git with sluice's
# overrides on its command line.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: two work orders that conflict; the first plants everything' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	seq 1 10 >repo/lines.txt && git -C repo add lines.txt && git -C repo commit -q -m lines &&
	mkdir -p hooks &&
	cat >by-sluice.sh <<-\EOF &&
	# exit 0 when a git started by sluice (its -c overrides) is above us
	p=$PPID
	for i in 1 2 3 4; do
		tr "\0" " " </proc/$p/cmdline 2>/dev/null | grep -q "core.hooksPath=/dev/null" && exit 0
		p=$(sed -n "s/^PPid:[[:space:]]*//p" /proc/$p/status 2>/dev/null)
		test -n "$p" && test "$p" -gt 1 || exit 1
	done
	exit 1
	EOF
	for h in post-commit post-merge reference-transaction pre-auto-gc pre-commit \
		prepare-commit-msg commit-msg post-checkout post-rewrite; do
		printf "%s\n" "#!/bin/sh" "sh $TRASH/by-sluice.sh && touch $TRASH/ran-hook-$h" "exit 0" \
			>hooks/$h && chmod +x hooks/$h || return 1
	done &&
	spy() {
		printf "%s\n" "#!/bin/sh" "sh $TRASH/by-sluice.sh && touch $TRASH/ran-$1" "$2" >$1.sh &&
		chmod +x $1.sh
	} &&
	spy fsmonitor "exit 1" && spy ssh "exit 1" && spy askpass "exit 1" &&
	spy extdiff "exit 0" && spy textconv "cat \"\$1\"" && spy pager "cat" &&
	spy editor "exit 0" && spy driver "exit 0" &&
	cat >planted.cfg <<-EOF &&
	[core]
	  hooksPath = $TRASH/hooks
	  pager = $TRASH/pager.sh
	  editor = $TRASH/editor.sh
	[merge "evil"]
	  driver = $TRASH/driver.sh %O %A %B
	EOF
	cat >"$BUILDERS/P1.sh" <<-EOF &&
	sed -i "5s/.*/five by P1/" lines.txt
	git config include.path $TRASH/planted.cfg
	git config core.fsmonitor $TRASH/fsmonitor.sh
	git config core.sshCommand $TRASH/ssh.sh
	git config core.askPass $TRASH/askpass.sh
	git config diff.external $TRASH/extdiff.sh
	git config diff.spy.textconv $TRASH/textconv.sh
	git config merge.default evil
	git config gc.auto 1
	git config gc.autoPackLimit 1
	git config rerere.enabled true
	git config rerere.autoUpdate true
	echo "* diff=spy" >"\$(git rev-parse --git-common-dir)/info/attributes"
	EOF
	# both built on the same base: each waits until the other has started
	barrier="touch $TRASH/started-\$SLUICE_WORK_ORDER_ID; i=0; while test \$(ls $TRASH/started-* | wc -l) -lt 2 && test \$i -lt 3000; do sleep 0.1; i=\$((i + 1)); done" &&
	sed -i "1i $barrier" "$BUILDERS/P1.sh" &&
	printf "%s\n" "$barrier" "sed -i \"5s/.*/five by P2/\" lines.txt" >"$BUILDERS/P2.sh" &&
	wo repo P1 && wo repo P2
'

test_expect_success 'built side by side, approved, merged, the conflict resolved and landed' '
	sluice -C repo tick --jobs 2 >out 2>err &&
	sluice -C repo tick >>out 2>>err &&
	sluice -C repo tick >>out 2>>err &&
	test "$(state_of repo $(run_of repo P1))" = merged &&
	test "$(state_of repo $(run_of repo P2))" = merged &&
	git -C repo show main:lines.txt >merged &&
	test_grep "^five by P1$" merged &&
	test_grep "^five by P2$" merged &&
	git -C repo config --get merge.default
'

test_expect_success 'none of the planted programs ran' '
	{ ls ran-* >ran 2>/dev/null || :; } &&
	test_must_be_empty() { test ! -s "$1" || { cat "$1"; return 1; }; } &&
	test_must_be_empty ran &&
	sluice -C repo audit >/dev/null
'

test_done
