#!/bin/sh
# A sluice killed between `sbatch` answering and the job's id being recorded
# (fault point job.after_submit) on a real one-node Slurm cluster
# (tests/slurm/cluster.sh): the job was recorded under its name before it
# was submitted, so the next tick finds it by that name (squeue --name),
# follows that very job, submits no other, and the run lands (issue 25).
# Before, the job was recorded only after sbatch answered: the next tick
# built a new attempt beside a job nobody followed.
. "$(dirname "$0")/lib.sh"

slurm_cluster start

slurm_repo() { # DIR [extra config lines...]
	slurm_repo_base "$@" "retry:" "  - not: gate.job" "  - exit: 3" &&
	approve_reviewer_config >>"$1/.system/config.yaml"
}

# jobs_named NAME: the ids of the jobs Slurm keeps under NAME (MinJobAge=600), one a line
jobs_named() { squeue --noheader --states=all --format=%i --name "$1" | sort -u; }

cat >"$BUILDERS/J.sh" <<-EOS
echo "attempt \$SLUICE_ATTEMPT in job \$SLURM_JOB_ID" >j.txt
echo "\$SLURM_JOB_ID" >>"$TRASH/builds"
EOS

test_expect_success 'the worker killed after sbatch answered: the job runs, nothing records its id' '
	slurm_repo r &&
	wo r J &&
	fault_fire job.after_submit tick.out -C r tick --jobs 1 &&
	test "$FAULT_RC" = 1 &&
	run=$(run_of r J) && echo $run >run.id &&
	test_grep "the worker of run $run was killed by SIGKILL" tick.out &&
	jobs_named "sluice-$run-a1-build" >ids &&
	test "$(wc -l <ids)" = 1 &&
	sluice -C r log $run >log &&
	test_grep -v "build job slurm:[0-9]* submitted" log
'

test_expect_success 'the next ticks follow that job by its name, submit no other, and it lands' '
	run=$(cat run.id) && id=$(cat ids) &&
	settle r &&
	test "$(state_of r $run)" = merged &&
	sluice -C r log $run >log &&
	test_grep "build job slurm:$id of attempt 1 is followed again: found by its name sluice-$run-a1-build" log &&
	test_grep -v "build job slurm:[0-9]* submitted" log &&
	test "$(cat "$TRASH/builds")" = "$id" &&
	git -C r show main:j.txt >got &&
	test_grep "attempt 1 in job $id" got &&
	squeue --noheader --states=all --format=%j | grep -c "^sluice-$run-a[0-9]*-build\$" >n &&
	test "$(cat n)" = 1 &&
	test "$(git -C r log --merges --oneline main | wc -l)" = 1 &&
	sluice -C r audit >/dev/null
'

test_expect_success 'the whole tick killed there (tick and worker at once): the same' '
	test_skip_unless_tool setsid &&
	wo r K &&
	cp "$BUILDERS/J.sh" "$BUILDERS/K.sh" &&
	: >"$TRASH/builds" &&
	FAULT_GROUP=1 fault_fire job.after_submit tick.out -C r tick --jobs 1 &&
	test "$FAULT_RC" = 137 &&
	run=$(run_of r K) &&
	jobs_named "sluice-$run-a1-build" >ids &&
	test "$(wc -l <ids)" = 1 && id=$(cat ids) &&
	settle r &&
	test "$(state_of r $run)" = merged &&
	sluice -C r log $run >log &&
	test_grep "build job slurm:$id of attempt 1 is followed again: found by its name" log &&
	test "$(cat "$TRASH/builds")" = "$id" &&
	test "$(squeue --noheader --states=all --format=%j | grep -c "^sluice-$run-a[0-9]*-build\$")" = 1
'

test_done
