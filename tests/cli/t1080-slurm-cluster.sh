#!/bin/sh
# The test cluster of issue 17: a real one-node Slurm (Debian's slurm-wlm
# 22.05 and munge) started on loopback in this script's trash folder by
# tests/slurm/cluster.sh, and the engine behaviour the Slurm executor will
# rely on, shown with Slurm's own CLI (sluice is not involved yet):
#
# - `sbatch --wait` of a job that commits in a git worktree and prints to its
#   output file: COMPLETED, ExitCode=0:0, the commit and the output are there.
# - a job that exits 3: FAILED Reason=NonZeroExitCode, ExitCode=3:0, and
#   `sbatch --wait` exits 3.
# - `scancel` of a running `sleep 300`: `scontrol show job` and
#   `squeue --states=all` say CANCELLED. The exit code is not the state:
#   mostly ExitCode=0:15 (the job's shell killed by SIGTERM), but the
#   proctrack/linuxproc plugin signals the job's processes one by one, and a
#   shell whose child died first exits 143 (128 + 15): ExitCode=143:0, seen on
#   a loaded machine with a job cancelled in the second it started (and every
#   time with sluice's job script, which traps TERM: exit 143), or ExitCode=0:9
#   when the loaded machine let KillWait (5 s) pass before the shell died and
#   Slurm sent SIGKILL (seen once in the ASan pass). So the executor
#   reads JobState, never the exit code, to know a job was cancelled. There is
#   no accounting database (accounting_storage/none), so `sacct` does not
#   work here: the executor reads a job's state from `scontrol show job`
#   (kept MinJobAge=600 s after the end), `squeue --states=all`, and
#   the cluster's jobcomp/filetxt log (one line a finished job).
# - the job the engine lost: slurmd killed with -9 while a job runs. Seen
#   here (SlurmdTimeout=10): the job stays RUNNING, the node turns "mixed*"
#   (not responding: 14-15 s after the kill in two runs timed by hand), then
#   down* "Not responding", and the job ends (27-28 s after the kill)
#   JobState=NODE_FAIL Reason=NodeDown, ExitCode=0:0, Requeue=0 (JobRequeue=0:
#   Slurm does not run it again). Its process is NOT killed: the job's
#   slurmstepd and its children run on, orphaned, until slurmd comes back;
#   the restarted slurmd (ReturnToService=2: the node is idle again) kills
#   them ("CANCELLED ... DUE TO NODE FAILURE" in slurmd.log), the state stays
#   NODE_FAIL. So a lost job may still be writing (pushing) after Slurm has
#   given it up: a retry must not trust what the lost attempt pushes.
. "$(dirname "$0")/lib.sh"

slurm_cluster # started by the first test below

job_state() { # JOBID
	scontrol show job "$1" | sed -n 's/^ *JobState=\([A-Z_]*\) .*/\1/p'
}

job_is() { # JOBID STATE
	[ "$(job_state "$1")" = "$2" ]
}

node_is() { # STATE (as sinfo %T prints it)
	[ "$(sinfo -h -N -n localhost -o %T)" = "$1" ]
}

test_expect_success 'the cluster starts and its node is idle' '
	sh "$CLUSTER" start "$C" >env.sh &&
	test_grep "^export SLURM_CONF=" env.sh &&
	. ./env.sh &&
	sinfo -h -N -o "%N %T" >sinfo.out &&
	echo "localhost idle" >expect &&
	test_cmp expect sinfo.out &&
	sh "$CLUSTER" env "$C" >env2.sh &&
	test_cmp env.sh env2.sh
'

test_expect_success 'a second start in the same folder is refused' '
	test_expect_failure_code 1 sh "$CLUSTER" start "$C" 2>err &&
	test_grep "running in .* already" err
'

test_expect_success 'sbatch --wait: a job commits in a worktree and prints to its output' '
	. ./env.sh &&
	test_repo repo &&
	git -C repo worktree add -q -b run/j1 "$TRASH/wt" &&
	cat >job.sh <<-\EOF &&
	#!/bin/sh
	echo "job $SLURM_JOB_ID on $SLURMD_NODENAME in $(pwd)"
	echo built >built.txt &&
	git add built.txt &&
	git commit -q -m "built by job $SLURM_JOB_ID" &&
	echo "committed $(git rev-parse HEAD)"
	EOF
	sbatch --parsable --wait -D "$TRASH/wt" -o "$TRASH/job-%j.out" job.sh >jobid &&
	j=$(cat jobid) &&
	test_grep "^job $j on localhost in $TRASH/wt\$" "job-$j.out" &&
	test_grep "^committed $(git -C wt rev-parse HEAD)\$" "job-$j.out" &&
	git -C repo log -1 --format=%s run/j1 >subject &&
	echo "built by job $j" >expect &&
	test_cmp expect subject &&
	test -z "$(git -C wt status --porcelain)" &&
	scontrol show job "$j" >show &&
	test_grep "JobState=COMPLETED " show &&
	test_grep " ExitCode=0:0" show &&
	test_grep "^JobId=$j .* JobState=COMPLETED " "$C/jobcomp.log"
'

test_expect_success 'a failing job: FAILED with its exit code (sbatch --wait exits with it)' '
	. ./env.sh &&
	test_expect_failure_code 3 sbatch --parsable --wait -o "$TRASH/fail-%j.out" \
		--wrap "echo about to fail; exit 3" >jobid &&
	j=$(cat jobid) &&
	scontrol show job "$j" >show &&
	test_grep "JobState=FAILED Reason=NonZeroExitCode" show &&
	test_grep " ExitCode=3:0" show
'

test_expect_success 'scancel of a running job: CANCELLED in scontrol and squeue --states=all' '
	. ./env.sh &&
	j=$(sbatch --parsable -o "$TRASH/sleep-%j.out" --wrap "sleep 300") &&
	echo "$j" >cancelled.id &&
	wait_until "job_is $j RUNNING" &&
	scancel "$j" &&
	wait_until "job_is $j CANCELLED" &&
	scontrol show job "$j" >show &&
	# the shell killed by the signal, or exited 143 after its child was, or
	# killed by SIGKILL once KillWait passed on a loaded machine
	test_grep " ExitCode=\(0:15\|143:0\|0:9\)" show &&
	squeue -h --states=all -j "$j" -o "%i %T" >squeue.out &&
	echo "$j CANCELLED" >expect &&
	test_cmp expect squeue.out &&
	squeue -h -j "$j" -o "%i %T" >squeue.active &&
	test ! -s squeue.active &&
	wait_until "grep -q \"^JobId=$j .* JobState=CANCELLED \" \"$C/jobcomp.log\""
'

test_expect_success 'sacct does not work here (no accounting database)' '
	. ./env.sh &&
	{ sacct -n -j "$(cat cancelled.id)" >sacct.out 2>&1; rc=$?; } &&
	cat sacct.out &&
	test "$rc" != 0
'

# the pid of the job's shell, written by the job itself
job_pid() { cat "$TRASH/lost.pid"; }
lost_alive() { kill -0 "$(job_pid)" 2>/dev/null; }
lost_gone() { ! lost_alive; }

test_expect_success 'kill -9 of slurmd while a job runs: NODE_FAIL, the job runs on orphaned' '
	. ./env.sh &&
	j=$(sbatch --parsable -o "$TRASH/lost-%j.out" --wrap "echo \$\$ >$TRASH/lost.pid; exec sleep 600") &&
	echo "$j" >lost.id &&
	wait_until "job_is $j RUNNING" &&
	wait_until "test -s lost.pid" &&
	kill -9 "$(cat "$C/slurmd.pid")" &&
	wait_until "job_is $j NODE_FAIL" 600 &&
	scontrol show job "$j" >show &&
	sed -n "s/^ *\(JobState=.*\)/\1/p; s/^ *\(Requeue=.*\)/\1/p" show &&
	test_grep "JobState=NODE_FAIL Reason=NodeDown" show &&
	test_grep "Requeue=0 Restarts=0" show &&
	squeue -h --states=all -j "$j" -o "%i %T" >squeue.out &&
	echo "$j NODE_FAIL" >expect &&
	test_cmp expect squeue.out &&
	sinfo -h -N -o "%T %E" >node &&
	test_grep "^down\\* Not responding\$" node &&
	lost_alive
'

test_expect_success 'slurmd back: the node is idle again, the orphan is killed, still NODE_FAIL' '
	. ./env.sh &&
	sh "$CLUSTER" slurmd "$C" &&
	wait_until "node_is idle" &&
	wait_until lost_gone &&
	job_is "$(cat lost.id)" NODE_FAIL &&
	test_grep "JOB $(cat lost.id) ON localhost CANCELLED .* DUE TO NODE FAILURE" "$C/slurmd.log" &&
	sbatch --parsable --wait -o "$TRASH/after-%j.out" --wrap "echo after" >jobid &&
	test_grep "^after\$" "after-$(cat jobid).out"
'

test_expect_success 'stop: the daemons and a lost job (slurmd killed again) are gone' '
	. ./env.sh &&
	j=$(sbatch --parsable -o "$TRASH/lost2-%j.out" --wrap "echo \$\$ >$TRASH/lost.pid; exec sleep 600") &&
	rm -f lost.pid &&
	wait_until "test -s lost.pid" &&
	kill -9 "$(cat "$C/slurmd.pid")" &&
	lost_alive &&
	for f in munged slurmctld; do
		cat "$C/$f.pid" >>pids || return 1
	done &&
	sh "$CLUSTER" stop "$C" &&
	lost_gone &&
	for p in $(cat pids); do
		! kill -0 "$p" 2>/dev/null || return 1
	done &&
	test ! -e "$C/slurmctld.pid" &&
	test ! -e "$C/munged.pid" &&
	sh "$CLUSTER" stop "$C"
'

test_done
