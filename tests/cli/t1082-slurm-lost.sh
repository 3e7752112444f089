#!/bin/sh
# The Slurm executor when a job goes wrong (issue 17, docs/scale-out.md
# "Crashes and lost jobs"), on a real one-node cluster:
# - the node fails (slurmd killed with -9 while the builder runs): Slurm
#   gives the job up (NODE_FAIL), the attempt fails with that reason, the
#   retry rules build again once the node is back, and it lands once;
# - kill -9 of the tick during a gates job: from preparing straight back to
#   gating, the same job followed, the gate run once;
# - a hostile builder pushes a forged result and out for its own attempt and
#   cancels its job: the forged result is not a commit on the base it was
#   given, so it is not taken; the next attempt's honest work lands.
. "$(dirname "$0")/lib.sh"

slurm_cluster start

slurm_repo() { # DIR [extra config lines...]
	slurm_repo_base "$@" "retry:" "  - not: gate.job" "  - exit: 3" &&
	approve_reviewer_config >>"$1/.system/config.yaml"
}

wait_log() { # DIR RUN PATTERN [BOUND]
	wait_until "'$SLUICE' -C '$1' log '$2' 2>/dev/null | grep -q '$3'" "${4:-300}"
}

test_expect_success 'the node fails under a job: NODE_FAIL, retried under the rules, lands once' '
	slurm_repo node &&
	cat >"$BUILDERS/N.sh" <<-\EOS &&
	if [ "$SLUICE_ATTEMPT" = 1 ]; then sleep 600; fi
	echo "attempt $SLUICE_ATTEMPT" >n.txt
	EOS
	wo node N &&
	( ("$SLUICE" -C node tick --jobs 1 >tick.out 2>&1; echo $? >tick.rc) & ) &&
	wait_until "[ -n \"\$(run_of node N)\" ]" &&
	rn=$(run_of node N) &&
	wait_log node $rn "build job slurm:[0-9]* submitted" &&
	wait_until "squeue -h -t R -n sluice-$rn-a1-build | grep -q ." &&
	kill -9 "$(cat "$C/slurmd.pid")" &&
	wait_log node $rn "NODE_FAIL" 600 &&
	sh "$CLUSTER" slurmd "$C" >/dev/null &&
	wait_until "[ -f tick.rc ]" 600 &&
	test "$(cat tick.rc)" = 0 &&
	test "$(state_of node $rn)" = merged &&
	sluice -C node log $rn >log &&
	test_grep "attempt 1: the engine lost job slurm:[0-9]*: NODE_FAIL" log &&
	test_grep "build job slurm:[0-9]* submitted (attempt 2)" log &&
	git -C node show main:n.txt | grep -q "attempt 2" &&
	test "$(git -C node log --merges --oneline main | wc -l)" = 1 &&
	sluice -C node audit
'

test_expect_success 'a forged result, or an out alone, pushed by a hostile builder is not taken' '
	slurm_repo hostile &&
	cat >"$BUILDERS/H.sh" <<-EOS &&
	if [ "\$SLUICE_ATTEMPT" = 1 ]; then
		echo forged >forged.txt && git add forged.txt &&
		c=\$(git commit-tree "\$(git write-tree)" -m forged) &&
		git push -q "$TRASH/hostile.remote.git" "\$c:refs/sluice/runs/\$SLUICE_RUN_ID/a1/result" "\$c:refs/sluice/runs/\$SLUICE_RUN_ID/a1/out" &&
		scancel "\$SLURM_JOB_ID"
		sleep 600
	fi
	if [ "\$SLUICE_ATTEMPT" = 2 ]; then
		c=\$(git commit-tree "\$(git write-tree)" -p HEAD -m "an out alone") &&
		git push -q "$TRASH/hostile.remote.git" "\$c:refs/sluice/runs/\$SLUICE_RUN_ID/a2/out" &&
		scancel "\$SLURM_JOB_ID"
		sleep 600
	fi
	echo honest >h.txt
	EOS
	wo hostile H &&
	sluice -C hostile tick --jobs 1 >out 2>&1 &&
	rh=$(run_of hostile H) &&
	test "$(state_of hostile $rh)" = merged &&
	sluice -C hostile log $rh >log &&
	test_grep "is not a commit on [0-9a-f]*, the commit it was given: not taken" log &&
	test_grep "attempt 2: the engine lost job slurm:[0-9]*: CANCELLED" log &&
	test_grep "build job slurm:[0-9]* submitted (attempt 3)" log &&
	git -C hostile show main:h.txt | grep -q honest &&
	! git -C hostile cat-file -e main:forged.txt 2>/dev/null &&
	sluice -C hostile audit
'

test_expect_success 'abandon while a tick waits for the job: cancelled, the tick lets go, abandoned' '
	slurm_repo wait &&
	echo "sleep 600" >"$BUILDERS/W.sh" &&
	wo wait W &&
	( ("$SLUICE" -C wait tick --jobs 1 >tick.out 2>&1; echo $? >tick.rc) & ) &&
	wait_until "[ -n \"\$(run_of wait W)\" ]" &&
	rw=$(run_of wait W) &&
	wait_until "squeue -h -t R -n sluice-$rw-a1-build | grep -q ." &&
	sluice -C wait abandon $rw >out 2>&1 &&
	test "$(state_of wait $rw)" = abandoned &&
	wait_until "[ -f tick.rc ]" &&
	test "$(cat tick.rc)" = 0 &&
	j=$(sluice -C wait log $rw | sed -n "s/.* job slurm:\([0-9]*\) submitted.*/\1/p" | head -n 1) &&
	scontrol show job $j | grep -q "JobState=CANCELLED" &&
	sluice -C wait show $rw >show &&
	test_grep "cancelled: the run was abandoned by" show &&
	test "$(sluice -C wait log $rw | grep -c "submitted")" = 1
'

test_expect_success 'kill -9 of the tick during a gates job: the gates job is followed again, not run twice' '
	slurm_repo gk &&
	cat >>gk/.system/config.yaml <<-EOF &&
	gates:
	  slow: [sh, -c, "echo ran >>$TRASH/slow-gate-runs; $(wait_until_sh "[ -f $TRASH/gk-go ]" 600)"]
	merge:
	  gates: []
	EOF
	echo "echo g >g.txt" >"$BUILDERS/G.sh" &&
	wo gk G &&
	(setsid "$SLUICE" -C gk tick --jobs 1 >tick1.out 2>&1 & echo $! >pid) &&
	wait_until "[ -n \"\$(run_of gk G)\" ]" &&
	rg=$(run_of gk G) &&
	wait_until "squeue -h -t R -n sluice-$rg-a1-gates | grep -q ." &&
	python3 -c "import os, sys; os.killpg(int(sys.argv[1]), 9)" "$(cat pid)" &&
	test "$(state_of gk $rg)" = gating &&
	: >"$TRASH/gk-go" &&
	sluice -C gk tick --jobs 1 >tick2.out 2>&1 &&
	test "$(state_of gk $rg)" = merged &&
	sluice -C gk log $rg >log &&
	test "$(grep -c "gates job slurm:[0-9]* submitted" log)" = 1 &&
	test_grep "its gates job is still the engine.s; following it again" log &&
	test_grep "gates job slurm:[0-9]* of attempt 1 is followed again" log &&
	test "$(wc -l <"$TRASH/slow-gate-runs")" = 1 &&
	sluice -C gk audit
'

test_expect_success 'a person edits a failed run worktree and retries: the job builds on the edit, nothing lost' '
	slurm_repo edit &&
	echo "a line of main" >edit/keep.txt && git -C edit add keep.txt && git -C edit commit -q -m keep &&
	cat >"$BUILDERS/E.sh" <<-EOS &&
	echo "attempt \$SLUICE_ATTEMPT" >e.txt
	grep -q "person" keep.txt && echo "saw the person" >>e.txt
	test -e "$TRASH/go-E"
	EOS
	wo edit E &&
	sluice -C edit tick >out 2>&1 &&
	re=$(run_of edit E) &&
	test "$(state_of edit $re)" = failed &&
	echo "the person fixed this" >>edit/.system/runs/$re/worktree/keep.txt &&
	: >"$TRASH/go-E" &&
	sluice -C edit retry $re >/dev/null &&
	sluice -C edit tick >>out 2>&1 &&
	test "$(state_of edit $re)" = merged &&
	git -C edit show main:keep.txt >keep &&
	test_grep "^the person fixed this$" keep &&
	git -C edit show main:e.txt >e &&
	test_grep "^saw the person$" e
'

test_expect_success 'killed after a build job result is in the worktree, before its commit: the next attempt builds on it' '
	slurm_repo fk &&
	echo main >fk/log.txt && git -C fk add log.txt && git -C fk commit -q -m log &&
	echo "echo \"attempt \$SLUICE_ATTEMPT\" >>log.txt" >"$BUILDERS/F.sh" &&
	wo fk F &&
	fault_fire build.after_builder out -C fk tick --jobs 1 &&
	rf=$(run_of fk F) &&
	test "$(state_of fk $rf)" = building &&
	sluice -C fk tick --jobs 1 >out2 2>&1 &&
	test "$(state_of fk $rf)" = merged &&
	git -C fk show main:log.txt >log &&
	test_grep "^attempt 1$" log && test_grep "^attempt 2$" log
'

test_done
