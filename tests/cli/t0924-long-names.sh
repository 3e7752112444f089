#!/bin/sh
# Names at and over their limits: a target branch of 500 bytes (the longest,
# refs/heads/ and it fill sluice's 512) is merged into; one of 501 bytes is
# refused by `sluice init` (checked out or --target), before anything is
# made, and by `sluice check`, each with the reason (a name of 1200 bytes
# used to cut the message before it, and init took it). A work-order id of
# 64 characters runs. A worktree tool prefix that makes the name too long
# is refused as too long (it used to be "use letters, digits, ...").
. "$(dirname "$0")/lib.sh"

# a branch name of N bytes in components of at most 200
long_name() { # N
	_r=$1 _s=
	while [ "$_r" -gt 200 ]; do _s=$_s$(printf "%0199d" 0)/ && _r=$((_r - 200)); done
	printf "%s%s" "$_s" "$(printf "%0${_r}d" 0)"
}

test_expect_success 'a checked-out branch of 501 or 1200 bytes: init refuses, nothing made' '
	for n in 501 1200; do
		test_repo r$n &&
		git -C r$n branch -m "$(long_name $n)" &&
		test_expect_failure_code 1 sluice -C r$n init 2>err &&
		test_grep "is over 500 bytes long; name a shorter branch; check out another or pass --target" err &&
		test ! -e r$n/.system || return 1
	done
'

test_expect_success 'init --target of 501 bytes: refused with the reason' '
	test_expect_failure_code 1 sluice -C r501 init --target "$(long_name 501)" 2>err &&
	test_grep "is over 500 bytes long" err &&
	test ! -e r501/.system
'

test_expect_success 'a config whose target is 1200 bytes: sluice check names the reason' '
	sluice_repo c &&
	sed -i "s|^target: .*|target: $(long_name 1200)|" c/.system/config.yaml &&
	test_expect_failure_code 1 sluice -C c check >out 2>&1 &&
	test_grep "is over 500 bytes long" out
'

test_expect_success 'a target of 500 bytes and a work-order id of 64 characters: merged' '
	id=W$(printf "%063d" 0) &&
	test_repo t &&
	git -C t branch -m "$(long_name 500)" &&
	(cd t && "$SLUICE" init >/dev/null) &&
	printf "%s\n" "builder:" "  command: [sh, -c, \"echo w >w.txt\"]" >>t/.system/config.yaml &&
	approve_reviewer_config >>t/.system/config.yaml &&
	wo t "$id" &&
	sluice -C t tick >out 2>&1 &&
	test "$(state_of t "$(run_of t "$id")")" = merged &&
	git -C t show "$(long_name 500):w.txt" >w &&
	test_grep "^w$" w
'

test_expect_success 'worktree create with a prefix that makes the name too long: says so' '
	test_expect_failure_code 1 sluice -C t worktree create slug --prefix "$(printf "p%0130d" 0)" >out 2>&1 &&
	test_grep "characters long, over the limit of 128; use a shorter prefix or slug" out &&
	test -z "$(git -C t branch --list "p0*")"
'

test_done
