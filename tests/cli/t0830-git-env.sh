#!/bin/sh
# sluice started with git configuration in its environment (a `git -c` or an
# alias above it, GIT_CONFIG_COUNT/KEY/VALUE, GIT_CONFIG_PARAMETERS,
# GIT_CONFIG_GLOBAL/SYSTEM) that names hooks, a filter and a conflict style.
# None of it reaches a git that sluice starts (worktree population, the
# snapshot's `git add`, diff.patch, the merge of a conflict into a
# resolution worktree, the commits), and none reaches the builder's own git
# through the variables that beat the builder's hooks-off triple: one list of
# variables is dropped (src/core/git.c), the builder keeping on purpose only
# what src/build/builder.c names.
. "$(dirname "$0")/lib.sh"

# sluice with the planted configuration in its environment (only sluice: the
# test's own git commands run without it)
evil_sluice() {
	GIT_CONFIG_PARAMETERS="'core.hookspath'='$TRASH/hooks' 'merge.conflictstyle'='diff3' 'filter.fake.clean'='sh $TRASH/spy-clean.sh'" \
	GIT_CONFIG_COUNT=3 \
	GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0="$TRASH/hooks" \
	GIT_CONFIG_KEY_1=merge.conflictStyle GIT_CONFIG_VALUE_1=diff3 \
	GIT_CONFIG_KEY_2=filter.fake.clean GIT_CONFIG_VALUE_2="sh $TRASH/spy-clean.sh" \
	GIT_CONFIG_GLOBAL="$TRASH/evil.cfg" GIT_CONFIG_SYSTEM="$TRASH/evil.cfg" \
	"$SLUICE" "$@"
}

test_expect_success 'setup: planted hooks, filters and a conflict style; two conflicting runs' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	seq 1 10 >repo/lines.txt &&
	git -C repo config filter.fake.clean cat &&
	git -C repo config filter.fake.smudge cat &&
	echo "*.dat filter=fake" >repo/.gitattributes &&
	echo one >repo/a.dat &&
	git -C repo add lines.txt .gitattributes a.dat && git -C repo commit -q -m lines &&
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
	mkdir hooks &&
	for h in pre-commit post-commit commit-msg post-checkout post-merge reference-transaction; do
		printf "%s\n" "#!/bin/sh" \
			"if sh $TRASH/by-sluice.sh; then w=sluice; else w=builder; fi" \
			"touch $TRASH/ran-hook-$h-by-\$w" "exit 0" >hooks/$h && chmod +x hooks/$h ||
		return 1
	done &&
	printf "%s\n" "touch $TRASH/ran-clean" "cat" >spy-clean.sh &&
	printf "%s\n" "sh $TRASH/by-sluice.sh && touch $TRASH/ran-smudge-by-sluice" "cat" \
		>spy-smudge.sh &&
	echo "*.txt -diff filter=spy" >attrs &&
	cat >evil.cfg <<-EOF &&
	[core]
		hooksPath = $TRASH/hooks
		attributesFile = $TRASH/attrs
	[merge]
		conflictStyle = diff3
	[filter "spy"]
		smudge = sh $TRASH/spy-smudge.sh
		clean = cat
	EOF
	meeting_builders E1 E2 "sed -i \"5s/.*/five by %s/\" lines.txt && echo x >>a.dat && git commit -q -a -m edits" &&
	wo repo E1 && wo repo E2
'

test_expect_success 'built, approved, merged, the conflict resolved and landed' '
	evil_sluice -C repo tick --jobs 2 >out 2>err &&
	evil_sluice -C repo tick >>out 2>>err &&
	evil_sluice -C repo tick >>out 2>>err &&
	test "$(state_of repo $(run_of repo E1))" = merged &&
	test "$(state_of repo $(run_of repo E2))" = merged &&
	git -C repo show main:lines.txt >merged &&
	test_grep "^five by E1$" merged &&
	test_grep "^five by E2$" merged
'

test_expect_success 'the merge into the resolution worktree used git'"'"'s own markers' '
	test_grep -v "^|||||||" merged
'

test_expect_success 'diff.patch is a text diff: no attributes file from the environment' '
	run=$(run_of repo E1) &&
	test_grep "^+five by E1$" repo/.system/runs/$run/diff.patch &&
	test_grep -v "GIT binary patch" repo/.system/runs/$run/diff.patch
'

test_expect_success 'no hook, no filter from the environment ran, in sluice or in the builder' '
	{ ls ran-* >ran 2>/dev/null || :; } &&
	{ test ! -s ran || { cat ran; false; }; }
'

test_done
