#!/bin/sh
# bench/batch.sh --quick and bench/replay.sh (issue 28), as smoke runs: each
# exits 0 and prints its table; the counts, which do not depend on the
# machine, are checked (batch 4 lands 8 runs after 2 gate runs, the red
# run alone is left, two lanes land all 8 runs with one test each and their
# red run alone is left; the replay lands jsmn's own tree, running its suite 15
# times with merge.reuse_gating and 30 without). Nothing here looks at a time.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool git jq awk make cc cksum
export TMPDIR="$TRASH"

test_expect_success 'bench/batch.sh --quick: batches, a red among them, a flaky round' '
	{ sh "$SLUICE_SOURCE_DIR/bench/batch.sh" --quick "$SLUICE" >out 2>err ||
		{ cat out err && false; }; } &&
	test_grep "^| serial: merge.batch 1 | [0-9.]* s | [0-9.]* | 8 | 8 of 8 | [0-9.]* |  |$" out &&
	test_grep "^| batch: merge.batch 4 | [0-9.]* s | [0-9.]* | 2 | 8 of 8 | [0-9.]* |  |$" out &&
	test_grep "^| red: merge.batch 4, W07 red merged | [0-9.]* s | [0-9.]* | [0-9]* | 7 of 8 | [0-9.]* | W07  |$" out &&
	test_grep "^| shared: queue.jobs 2 | [0-9.]* s | [0-9.]* | [0-9]* | 8 of 8 | [0-9.]* |  |$" out &&
	test_grep "^| lanes: queue.jobs 2, merge.lanes web, api | [0-9.]* s | [0-9.]* | 8 | 8 of 8 | [0-9.]* |  |$" out &&
	test_grep "^| lanes-red: queue.jobs 2, merge.lanes web, api, W07 red merged | [0-9.]* s | [0-9.]* | [0-9]* | 7 of 8 | [0-9.]* | W07  |$" out &&
	test_grep "^| flaky round 1: .* | 8 of 8 | [0-9.]* |  |$" out &&
	test_grep "^flake rates shown by sluice status: slow: flaky on [0-9]* of [0-9]* trees" out &&
	test -z "$(ls -d "$TRASH"/sluice-bench-batch.* 2>/dev/null)"
'

test_expect_success 'bench/replay.sh: jsmn replayed, its suite once per commit with reuse_gating' '
	{ sh "$SLUICE_SOURCE_DIR/bench/replay.sh" "$SLUICE" >rout 2>rerr ||
		{ cat rout rerr && false; }; } &&
	test_grep "^| 1 | [0-9.]* s (15) | [0-9.]* s (30) | [0-9.]* | [0-9.]* s (15) | [0-9.]* |$" rout &&
	test -z "$(ls -d "$TRASH"/sluice-bench-replay.* 2>/dev/null)"
'

test_done
