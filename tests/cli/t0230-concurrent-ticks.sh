#!/bin/sh
# Two sluice tick processes started together on 20 ready work orders: each
# work order is built exactly once (counted by the builder itself) and
# merged exactly once.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup: 20 ready work orders and a counting builder' '
	sluice_repo repo &&
	approve_reviewer_config >>repo/.system/config.yaml &&
	i=1 && while [ $i -le 20 ]; do
		cat >"$BUILDERS/P$i.sh" <<-EOS || return 1
		echo P$i >>"$TRASH/count"
		sleep 0.1
		echo "work of P$i" >p$i.txt
		EOS
		wo repo P$i || return 1
		i=$((i + 1))
	done
'

test_expect_success 'two ticks at once build each work order once' '
	{ (sluice -C repo tick --jobs 2 >tick1.out 2>&1; echo $? >tick1.rc) & } &&
	{ (sluice -C repo tick --jobs 2 >tick2.out 2>&1; echo $? >tick2.rc) & } &&
	wait &&
	test "$(cat tick1.rc)" = 0 && test "$(cat tick2.rc)" = 0 &&
	sort "$TRASH/count" >counted &&
	sort -u "$TRASH/count" >unique &&
	test_cmp unique counted &&
	test "$(wc -l <counted)" = 20
'

test_expect_success 'every work order merged exactly once' '
	sluice -C repo tick >/dev/null &&
	test "$(sluice -C repo runs | wc -l)" = 20 &&
	test "$(sluice -C repo runs --state merged | wc -l)" = 20 &&
	test "$(git -C repo log --merges --oneline main | wc -l)" = 20 &&
	i=1 && while [ $i -le 20 ]; do
		test "$(git -C repo log --merges --grep "^Work-Order: P$i\$" --oneline main | wc -l)" = 1 ||
			return 1
		i=$((i + 1))
	done
'

test_done
