#!/bin/sh
# tick's numeric options: --jobs within what queue.jobs allows.
. "$(dirname "$0")/lib.sh"

test_expect_success 'setup' '
	sluice_repo repo
'

test_expect_success '--jobs takes 1 to 256, as queue.jobs does' '
	test_expect_failure_code 2 sluice -C repo tick --jobs 257 2>err &&
	test_grep "from 1 to 256" err &&
	test_expect_failure_code 2 sluice -C repo tick --jobs 0 2>err &&
	test_expect_failure_code 2 sluice -C repo tick --jobs "" 2>err &&
	sluice -C repo tick --jobs 256 >out &&
	test_expect_failure_code 2 sluice -C repo tick --max-runs 1001 2>err &&
	test_grep "from 1 to 1000" err
'

test_done
