#!/bin/sh
# kill -9 at random moments of the merge train: ticks are started and
# killed (with everything in their session) after a random delay, over and
# over, while eight approved runs go through a train of depth 3 whose merge
# gate takes 0.2 s; one run (R3) is red on top of R1 (the gate finds a1.txt
# and c.txt together) and is resolved by its builder. Then ticks until the
# queue settles: each work order landed once, every landing is the very
# commit and tree that passed the gate (hold-gate.sh's log) and none had a
# red test, train.json names each landing, the gate is green on every
# first-parent commit, no car ref is left, audit holds (fault_check). The
# delays come from a seeded sequence (SLUICE_KILL_SEED) so that a failure
# can be replayed; SLUICE_TEST_STRESS=1 takes a new seed and more kills.
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool setsid pkill jq
if [ "${SLUICE_TEST_STRESS:-0}" = 1 ]; then
	SEED=${SLUICE_KILL_SEED:-$$}
	KILLS=${SLUICE_KILL_COUNT:-60}
else
	SEED=${SLUICE_KILL_SEED:-1}
	KILLS=${SLUICE_KILL_COUNT:-20}
fi
WOS="R1 R2 R3 R4 R5 R6 R7 R8"
echo "# seed $SEED, at most $KILLS killed ticks"

G="$TRASH/gate"
mkdir -p "$G"
for w in $WOS; do
	echo "echo $w >$w.txt" >"$BUILDERS/$w.sh"
done
echo "echo a1 >a1.txt" >>"$BUILDERS/R1.sh"
echo "echo c >c.txt" >>"$BUILDERS/R3.sh"
cat >"$BUILDERS/resolve.sh" <<'EOS'
if [ -f c.txt ] && [ -f a1.txt ]; then
	rm -f c.txt
	echo c >c2.txt
fi
echo "c.txt became c2.txt" >"$SLUICE_RUN_DIR/summary.md"
EOS

test_expect_success 'setup: eight work orders, a train of depth 3, a dirty checkout' '
	sluice_repo repo "queue:" "  jobs: 3" "worktree:" "  setup: [\"true\"]" "gates:" \
		"  check: [sh, $FIXTURES/train/hold-gate.sh, $G]" "merge:" "  gates: [check]" \
		"  train_depth: 3" "$(approve_reviewer_config)" &&
	seq 1 20 >repo/lines.txt &&
	echo "the user'"'"'s notes" >repo/notes.txt &&
	printf "%s\n" "sleep 0.2" "! { [ -f a1.txt ] && [ -f c.txt ]; } || { echo a1.txt and c.txt clash; exit 1; }" \
		>repo/check.sh &&
	git -C repo add lines.txt notes.txt check.sh && git -C repo commit -q -m "lines, notes, check" &&
	git -C repo rev-parse main >base &&
	echo "an uncommitted line" >>repo/notes.txt &&
	cp repo/notes.txt "$TRASH/notes.orig" &&
	for w in $WOS; do wo repo $w || return 1; done
'

test_expect_success 'ticks killed at random moments, then the queue settles with every promise kept' '
	kill_ticks repo "$SEED" "$KILLS" "${SLUICE_KILL_MAX_MS:-600}" 8 >&3 &&
	settle repo &&
	fault_check repo "$WOS" "" &&
	landed_tested repo "$G" &&
	train_records_hold repo &&
	gate_first_parents repo "$(cat base)" "sh check.sh" &&
	test -z "$(git -C repo for-each-ref refs/sluice/train)" &&
	git -C repo cat-file -e main:c2.txt
' 3>&1

test_done
