#!/bin/sh
# bench/run.sh --quick (issue 14): the benchmarks' smoke run, as CI calls it.
# It must exit 0 and print the header and each table, with the pool's rows
# measured (this binary has the pool) and every run merged. Nothing here
# looks at a time. Then: a sluice whose tick does nothing makes it exit 1
# and say what is broken, and an unknown option is a usage error.
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

	test_grep "^## 1. Worktree acquisition$" out &&
	test_grep "^| 1000 | .git worktree add -b. | [1-9][0-9]* | [0-9]* ms | 1.00 | 1.00x |$" out &&
	test_grep "^| 1000 | sluice, fresh (.worktree.pool: 0.) | 1 | [0-9]* ms |" out &&
	for k in "1 file" "10 files" "100 files"; do
		test_grep "^| 1000 | sluice, from the pool, base $k away | 1 | [0-9]* ms | [0-9.]* | [0-9.]*x |$" out ||
			return 1
	done &&
	test_grep "^- 1000 files, fresh: " out &&

	test_grep "^## 2. Per-run overhead against the git pipeline$" out &&
	test_grep "^| step | git CLI | sluice, cold: pool 0 | sluice, cold: pool emptied | sluice, warm pool |$" out &&
	test_grep "^| worktree: .git worktree add. / preparing | [0-9]* | [0-9]* ([0-9.]*) | [0-9]* ([0-9.]*) | [0-9]* ([0-9.]*) |$" out &&
	test_grep "^| \*\*end to end\*\* (sluice: the whole .sluice tick.) | [0-9]* | [0-9]* ([0-9.]*) | [0-9]* ([0-9.]*) | [0-9]* ([0-9.]*) |$" out &&
	test_grep "^- 1000 files, warm pool: [0-9.]*x (target <= 0.5): " out &&

	test_grep "^## 3. 20 work orders end to end, .sluice tick --jobs 2.$" out &&
	test_grep "^| runs of the benchmark | 1 of 1 with all 20 merged" out &&
	test_grep "^| wall time, median | [0-9.]* s " out &&
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

	grep -v "no /usr/bin/time" out >measured &&
	test_grep -v "n/a" measured &&
	test_grep -v "did not say" out &&
	test_grep -v "Broken" out &&
	test_grep "^Done: " out
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

test_expect_success 'an unknown option is a usage error' '
	test_expect_failure_code 2 sh "$BENCH" --slow "$SLUICE" 2>err &&
	test_grep "usage: bench/run.sh \[--quick\] \[SLUICE_BINARY\]" err
'

test_done
