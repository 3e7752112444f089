#!/bin/sh
# bench/run.sh --quick (issues 14 and 29): the benchmarks' smoke run, as CI
# calls it. It must exit 0 and print the header and each table, with the
# pool's rows measured (this binary has the pool), every run merged, issue
# 29's goal lines and its table of figures by round. Nothing here looks at a
# time. Then: two rounds give two columns, a sluice whose tick does nothing
# makes it exit 1 and say what is broken, and an unknown option or a ROUNDS
# of 0 is a usage error.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool git jq awk

BENCH="$SLUICE_SOURCE_DIR/bench/run.sh"
export TMPDIR="$TRASH"

test_expect_success 'bench/run.sh --quick exits 0 and prints each table' '
	{ sh "$BENCH" --quick "$SLUICE" >out 2>err || { cat out err && false; }; } &&
	cat out &&
	test_grep "^# bench/run.sh --quick, 20[0-9-]* [0-9:]* UTC$" out &&
	test_grep "^- machine: .*, [0-9]* CPUs (.*), .* RAM;" out &&
	test_grep "^- git version [0-9.]*, libgit2 [0-9]" out &&
	test_grep "^- load average at the start: [0-9.]* [0-9.]* [0-9.]*" out &&
	test_grep "^- worktree pool (.worktree.pool.): in this binary$" out &&
	test_grep "^- 1 round(s) of the parts (acquire overhead e2e npm) in a row, each on repositories made afresh$" out &&

	test_grep "^## 1. Worktree acquisition$" out &&
	test_grep "^| 1000 | .git worktree add -b. | [1-9][0-9]* | [0-9]* ms | 1.00 | 1.00x |$" out &&
	test_grep "^| 1000 | sluice, fresh (.worktree.pool: 0.) | 1 | [0-9]* ms |" out &&
	for k in "1 file" "10 files" "100 files"; do
		test_grep "^| 1000 | sluice, from the pool, base $k away | 1 | [0-9]* ms | [0-9.]* | [0-9.]*x |$" out ||
			return 1
	done &&
	test_grep "^- 1000 files, fresh: " out &&
	test_grep "^- 10000 files, a slot from the pool: not measured (no 10000 in WT_SIZES, or no pool)$" out &&

	test_grep "^## 2. Per-run overhead against the git pipeline$" out &&
	test_grep "^| step | git CLI | sluice, cold: pool 0 | sluice, cold: pool emptied | sluice, warm pool |$" out &&
	test_grep "^| worktree: .git worktree add. / preparing | [0-9]* | [0-9]* ([0-9.]*) | [0-9]* ([0-9.]*) | [0-9]* ([0-9.]*) |$" out &&
	test_grep "^| \*\*end to end\*\* (sluice: the whole .sluice tick.) | [0-9]* | [0-9]* ([0-9.]*) | [0-9]* ([0-9.]*) | [0-9]* ([0-9.]*) |$" out &&
	test_grep "^- 1000 files, warm pool: [0-9.]*x (target <= 0.5): " out &&
	test_grep "^| files | sluice, warm pool | ratio to the 1k cost |$" out &&
	test_grep "^| 1000 | [0-9]* ms | 1.00 |$" out &&
	test_grep "^- 10000 files, warm pool: not measured (OH_SIZES needs 1000 and 10000, and the pool)$" out &&
	test_grep "^- 100000 files, warm pool: not measured (OH_SIZES needs 1000 and 100000, and the pool)$" out &&
	test_grep "^- cold (.worktree.pool: 0.), 1000 files: [0-9.]*x the git pipeline (goal <= 1.0 at each size): \(met\|not met\)$" out &&

	test_grep "^## 3. 20 work orders end to end, .sluice tick --jobs 2.$" out &&
	test_grep "^| runs of the benchmark | 1 of 1 with all 20 merged" out &&
	test_grep "^| wall time, median | [0-9.]* s " out &&
	test_grep "^| the first tick alone: wall time, median | [0-9.]* s (each: [0-9.]*; all 20 merged by it in [01] of 1 runs) |$" out &&
	test_grep "^| the first tick per work order: 20 / 5 work orders (median of 1 each) | [0-9.]* / [0-9.]* ms (5 merged by the first tick in [01] of 1 runs) |$" out &&
	test_grep "^- 20 work orders in one tick: [0-9.]* s (the goal is for 200: not judged)$" out &&
	test_grep "^- per work order in one tick: [0-9.]* ms for 20, [0-9.]* ms for 5: [0-9.]*x (goal <= 1.1): \(met\|not met\)$" out &&
	if ldd "$SLUICE" | grep -q libasan; then
		test_grep "^| peak resident memory of each sluice process | not run: the binary is built with AddressSanitizer |" out
	elif command -v cc >/dev/null; then
		test_grep "^| peak resident memory, the tick process: max (median), [1-9][0-9]* processes | [0-9.]* MB" out &&
		test_grep "^| peak resident memory, a worker (.advance-run.): max (median), [1-9][0-9]* processes | [0-9.]* MB" out
	fi &&

	test_grep "^## 4. A gate running npm on a small project with a lockfile$" out &&
	if grep -q "^skipped" out; then
		test_grep "^skipped: npm" out
	else
		test_grep "^| .npm ci. (the literal gate) | [0-9]* ms | [0-9]* ms | [0-9.]*x |$" out &&
		test_grep "^| .npm install --prefer-offline --no-audit --no-fund. | [0-9]* ms | [0-9]* ms |" out &&
		test_grep "^| .npm ci. unless node_modules/.lock-sha .* | [0-9]* ms | [0-9]* ms |" out
	fi &&

	test_grep "^## Issue 29.s figures, round by round$" out &&
	test_grep "^| figure | goal | round 1 | met in |$" out &&
	test_grep "^| a run, warm pool, 1k files (the base of the next two) | - | [0-9]* ms | - |$" out &&
	test_grep "^| cold (.worktree.pool: 0.), 1k files, against the git pipeline | <= 1.0x | [0-9.]*x | [01] of 1 |$" out &&
	test_grep "^| 20 work orders in one .sluice tick. | - | [0-9.]* s | - |$" out &&
	test_grep "^| per work order in one tick, 20 against 5 | <= 1.1x (no growth) | [0-9.]* / [0-9.]* ms ([0-9.]*x) | [01] of 1 |$" out &&

	grep -v "no /usr/bin/time" out >measured &&
	test_grep -v "n/a" measured &&
	test_grep -v "did not say" out &&
	test_grep -v "Broken" out &&
	test_grep "^Done: " out
'

test_expect_success 'ROUNDS=2 runs the parts twice and gives each round a column' '
	{ env ROUNDS=2 PARTS=e2e E2E_N=2 sh "$BENCH" --quick "$SLUICE" >out 2>err ||
		{ cat out err && false; }; } &&
	cat out &&
	test_grep "^- 2 round(s) of the parts (e2e) in a row" out &&
	test_grep "^# Round 1 of 2, [0-9:]* UTC, load average " out &&
	test_grep "^# Round 2 of 2, [0-9:]* UTC, load average " out &&
	test $(grep -c "^## 3. 2 work orders end to end" out) = 2 &&
	test_grep "round 2 of 2: end to end, 1 work orders: run 1 of 1" err &&
	test_grep "^| figure | goal | round 1 | round 2 | met in |$" out &&
	test_grep "^| 2 work orders in one .sluice tick. | - | [0-9.]* s | [0-9.]* s | - |$" out &&
	test_grep "^| per work order in one tick, 2 against 1 | <= 1.1x (no growth) | [0-9.]* / [0-9.]* ms ([0-9.]*x) | [0-9.]* / [0-9.]* ms ([0-9.]*x) | [012] of 2 |$" out &&
	test_grep -v "Broken" out
'

test_expect_success 'a run that does not merge makes it exit 1, saying so' '
	cat >fake-sluice <<-EOF &&
	#!/bin/sh
	for a in "\$@"; do [ "\$a" != tick ] || exit 0; done
	exec "$SLUICE" "\$@"
	EOF
	chmod +x fake-sluice &&
	test_expect_failure_code 1 env PARTS=e2e E2E_N=2 sh "$BENCH" --quick "$PWD/fake-sluice" >out 2>err &&
	cat out err &&
	test_grep "BROKEN: end to end: 0 of 2 runs merged in 5 ticks" err &&
	test_grep "^\*\*Broken\*\* ([1-9][0-9]* problem(s)" out
'

test_expect_success 'an unknown option or ROUNDS=0 is a usage error' '
	test_expect_failure_code 2 sh "$BENCH" --slow "$SLUICE" 2>err &&
	test_grep "usage: bench/run.sh \[--quick\] \[SLUICE_BINARY\]" err &&
	test_expect_failure_code 2 env ROUNDS=0 sh "$BENCH" --quick "$SLUICE" 2>err &&
	test_grep "ROUNDS must be a number of 1 or more" err
'

test_done
