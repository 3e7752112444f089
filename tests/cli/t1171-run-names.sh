#!/bin/sh
# A run is named as people see it: its full id, any unique prefix, the random
# suffix of its branch name (run/W1-vb5n92jk: vb5n92jk), the branch name, or
# a work-order id (its latest run). The commands echo the full id; an
# ambiguous name is refused with the candidates listed; bash completion offers
# only the runs a command applies to.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: two work orders, both runs awaiting review' '
	sluice_repo repo &&
	echo "echo one >>one.txt" >"$BUILDERS/W1.sh" &&
	echo "echo two >>two.txt" >"$BUILDERS/W2.sh" &&
	wo repo W1 && wo repo W2 &&
	sluice -C repo tick >out &&
	test "$(state_of repo $(run_of repo W1))" = awaiting_review &&
	test "$(state_of repo $(run_of repo W2))" = awaiting_review
'

test_expect_success 'status, show and log take the random suffix of the branch name' '
	run=$(run_of repo W2) &&
	short=${run##*-} &&
	git -C repo rev-parse --verify -q "refs/heads/run/W2-$short" &&
	sluice -C repo status --json $short >st &&
	test_grep "\"id\": \"$run\"" st &&
	sluice -C repo show $short >sh &&
	test_grep "$run" sh &&
	sluice -C repo log $short >lg &&
	test_grep "run $run" lg
'

test_expect_success 'the branch name, with or without run/, names the run' '
	run=$(run_of repo W2) && short=${run##*-} &&
	sluice -C repo show --json "run/W2-$short" >sh &&
	test_grep "$run" sh &&
	sluice -C repo show --json "W2-$short" >sh &&
	test_grep "$run" sh
'

test_expect_success 'a work-order id names its latest run; approve echoes the full id' '
	run=$(run_of repo W2) &&
	sluice -C repo approve W2 >out &&
	test_grep "approved $run" out &&
	test "$(state_of repo $run)" = approved
'

test_expect_success 'a prefix naming two runs is refused, listing both' '
	runs=$(sluice -C repo runs | cut -d" " -f1) &&
	common=$(printf "%s\n" $runs | sed -n "1p" | cut -c1-4) &&
	test_expect_failure_code 1 sluice -C repo abandon $common 2>err &&
	test_grep "ambiguous" err &&
	for r in $runs; do
		test_grep "$r" err || return 1
	done
'

test_expect_success 'an unknown name says what a run may be named by' '
	test_expect_failure_code 1 sluice -C repo reject zzzzzzzz -m x 2>err &&
	test_grep "no run .zzzzzzzz." err
'

test_expect_success 'bash completion offers only the runs the command applies to' '
	test_skip_unless_tool bash &&
	w1=$(run_of repo W1) && w2=$(run_of repo W2) &&
	cat >complete.sh <<-EOF &&
	. "$SLUICE_SOURCE_DIR/contrib/sluice.bash-completion"
	COMP_WORDS=(sluice -C repo "\$@" "")
	COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1))
	_sluice
	printf "%s\n" "\${COMPREPLY[@]}"
	EOF
	mkdir -p bin && ln -sf "$SLUICE" bin/sluice &&
	PATH="$TRASH/bin:$PATH" bash complete.sh approve >c &&
	test_grep "$w1" c && ! test_grep "$w2" c &&
	PATH="$TRASH/bin:$PATH" bash complete.sh abandon >c &&
	test_grep "$w1" c && test_grep "$w2" c &&
	PATH="$TRASH/bin:$PATH" bash complete.sh retry >c &&
	! test_grep "$w1" c && ! test_grep "$w2" c &&
	sluice -C repo reject $w1 -m "no" &&
	PATH="$TRASH/bin:$PATH" bash complete.sh retry >c &&
	test_grep "$w1" c && ! test_grep "$w2" c &&
	PATH="$TRASH/bin:$PATH" bash complete.sh show >c &&
	test_grep "$w1" c && test_grep "$w2" c
'

test_done
