#!/bin/sh
# kill -9 at each fault point of the merge train (train.after_car,
# train.after_gates, train.after_result, train.before_land) and of a train
# landing (merge.*, cleanup.after_worktree_remove), the worker at the point
# alone and the whole tick: then ticks until the queue settles. Three runs
# in one train, the third red on top of the first (the gate finds a1.txt
# and c.txt together) and resolved by its builder. Never a landing of an
# untested or red car (every landed merge is the very commit and tree that
# passed the gate, as the gate logged it, and no test of it failed; a car
# was red), one merge per work order, the gate green on every first-parent
# commit, train.json names each landing, audit clean, nothing left behind
# (fault_check).
. "$(dirname "$0")/lib.sh"
test_skip_unless_tool setsid jq

G="$TRASH/gate"
mkdir -p "$G"
printf '%s\n' 'echo a1 >a1.txt' 'echo a2 >a2.txt' 'echo a3 >a3.txt' \
	'sed -i 5s/.*/five-by-A/ lines.txt' >"$BUILDERS/A.sh"
printf '%s\n' 'echo b >b.txt' >"$BUILDERS/B.sh"
# C brings c.txt, or c2.txt when it is built on a base that has a1.txt
# (requeued after a kill, once A landed): its own gate passes either way.
printf '%s\n' 'if [ -f a1.txt ]; then echo c >c2.txt; else echo c >c.txt; fi' >"$BUILDERS/C.sh"
# The resolver: c.txt clashes with a1.txt, so C brings c2.txt instead.
cat >"$BUILDERS/resolve.sh" <<'EOS'
if [ -f c.txt ] && [ -f a1.txt ]; then
	rm -f c.txt
	echo c >c2.txt
fi
echo "c.txt became c2.txt" >"$SLUICE_RUN_DIR/summary.md"
EOS

# train_repo DIR: fault_repo's promises (the user's uncommitted edit of the
# checked-out main) with the logging gate as the build's and the train's
# gate, three jobs, depth 3, an approving reviewer.
train_repo() {
	sluice_repo "$1" "queue:" "  jobs: 3" "worktree:" "  setup: [\"true\"]" "gates:" \
		"  check: [sh, $FIXTURES/train/hold-gate.sh, $G]" "merge:" "  gates: [check]" \
		"  train_depth: 3" "$(approve_reviewer_config)" || return 1
	seq 1 20 >"$1/lines.txt"
	echo "the user's notes" >"$1/notes.txt"
	printf '%s\n' '! { [ -f a1.txt ] && [ -f c.txt ]; } || { echo "a1.txt and c.txt clash"; exit 1; }' >"$1/check.sh"
	git -C "$1" add lines.txt notes.txt check.sh && git -C "$1" commit -q -m "lines, notes, check" || return 1
	git -C "$1" rev-parse main >"$1.base"
	echo "an uncommitted line" >>"$1/notes.txt"
	cp "$1/notes.txt" "$TRASH/notes.orig"
}

test_expect_success 'the starting repository, built once (lib.sh, repo_template): A, B and C queued' '
	rm -rf r r.base && train_repo r &&
	wo r A && wo r B && wo r C && repo_template r abc
'

fault_case() { # POINT
	fault_case_1 "$1" 0 "the process at the point"
	fault_case_1 "$1" 1 "the whole tick"
}

fault_case_1() { # POINT GROUP WHAT
	test_expect_success "$3 killed at $1: nothing untested or red lands, nothing twice" "
		rm -f \"\$G\"/* && repo_copy abc r &&
		FAULT_GROUP=$2 fault_fire $1 tick.out -C r tick &&
		{ [ $2 = 0 ] || [ \"\$FAULT_RC\" = 137 ]; } &&
		settle r &&
		{ fault_check r 'A B C' '' || { sluice -C r runs && sluice -C r log | tail -n 25; false; }; } &&
		landed_tested r \"\$G\" &&
		cbase=\$(sluice -C r runs --wo C --json | jq -r \".[0].base_commit\") &&
		{ grep -q \" 1\$\" \"\$G/gates.log\" || git -C r cat-file -e \"\$cbase:a1.txt\"; } &&
		train_records_hold r &&
		gate_first_parents r \"\$(cat r.base)\" 'sh check.sh' &&
		git -C r show main:lines.txt | grep -qx five-by-A &&
		test \"\$(git -C r show main:b.txt)\" = b &&
		git -C r cat-file -e main:c2.txt && ! git -C r cat-file -e main:c.txt 2>/dev/null &&
		test -z \"\$(git -C r for-each-ref refs/sluice/train)\"
	"
}

for p in train.after_car train.after_gates train.after_result train.before_land merge.after_ref_move; do
	fault_case $p
done

# The rest of a landing's points, in a train landing.
for p in merge.before_merge merge.after_commit merge.after_checkout merge.before_store \
	merge.after_merge_json merge.after_store merge.after_manifest cleanup.after_worktree_remove; do
	fault_case_1 $p 1 "the whole tick"
done

test_done
