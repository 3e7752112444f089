#!/bin/sh
# An init that refuses its target (--target -x, HEAD, a detached HEAD, a
# branch without commits) creates nothing: no .system/ left behind, no
# "created" line before the error.
. "$(dirname "$0")/lib.sh"

for how in "--target -x" "--target HEAD" "--target a..b" "detached" "unborn"; do
	test_expect_success "init refused ($how): nothing created" '
		rm -rf r &&
		if test "$how" = unborn; then git init -q r; else test_repo r; fi &&
		if test "$how" = detached; then git -C r checkout -q --detach; fi &&
		case "$how" in --*) set -- $how ;; *) set -- ;; esac &&
		test_expect_failure_code 1 sluice -C r init "$@" >out 2>err &&
		test_grep "^sluice: " err &&
		test_grep -v "created" out &&
		! test -e r/.system
	'
done

test_expect_success 'the same repository then initializes' '
	rm -rf r && test_repo r &&
	sluice -C r init >out &&
	test_grep "created .system/config.yaml" out &&
	sluice -C r check
'

test_done
