#!/bin/sh
# executor.kind kubernetes (the kubectl stand-in of tests/k8s/, as in t1092):
# a sluice killed between `kubectl create` answering and the Job's handle
# being recorded (fault point job.after_submit). The job was recorded under
# its name before the create, so the next tick finds the Job by that name
# (kubectl get job), follows it, creates no other, and the run lands
# (issue 25). Before, the next tick's create met AlreadyExists and the run
# waited for the Job nobody followed to end, then replaced it.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool jq setsid

STANDIN="$SLUICE_SOURCE_DIR/tests/k8s/kubectl-standin.sh"
export K8S_STATES="$SLUICE_SOURCE_DIR/tests/k8s/states" K8S_FAKE="$TRASH/cluster"
mkdir -p "$K8S_FAKE"
test_when_finished 'for _p in "$TRASH"/cluster/jobs/*/*/pid; do [ -f "$_p" ] && kill -TERM "-$(cat "$_p")" 2>/dev/null; done; :'

k8s_repo() { # DIR [config lines...]
	_dir=$1
	shift
	git init -q --bare "$TRASH/$_dir.remote.git" &&
	sluice_repo "$_dir" "executor:" "  kind: kubernetes" "  remote: $TRASH/$_dir.remote.git" \
		"  poll: 1s" "  kubernetes:" "    namespace: builds" \
		"    image: registry.example.com/sluice/job:1" "    kubectl: $STANDIN" "$@" &&
	approve_reviewer_config >>"$_dir/.system/config.yaml" &&
	sluice -C "$_dir" check >/dev/null
}

cat >"$BUILDERS/J.sh" <<-EOS
echo "attempt \$SLUICE_ATTEMPT" >j.txt
echo "\$SLUICE_ATTEMPT" >>"$TRASH/builds"
EOS

test_expect_success 'the worker killed after kubectl create answered: the Job runs, unrecorded' '
	k8s_repo r &&
	wo r J &&
	fault_fire job.after_submit tick.out -C r tick --jobs 1 &&
	test "$FAULT_RC" = 1 &&
	run=$(run_of r J) && echo $run >run.id &&
	test "$(grep -c "^create" "$K8S_FAKE/calls")" = 1 &&
	test -d "$K8S_FAKE/jobs/builds/sluice-$run-a1-build" &&
	sluice -C r log $run >log &&
	test_grep -v "build job kubernetes:.* submitted" log
'

test_expect_success 'the next tick follows that Job by its name, creates no other, and it lands' '
	run=$(cat run.id) &&
	settle r &&
	test "$(state_of r $run)" = merged &&
	sluice -C r log $run >log &&
	test_grep "build job kubernetes:builds/sluice-$run-a1-build of attempt 1 is followed again: found by its name" log &&
	test "$(cat "$TRASH/builds")" = 1 &&
	grep "^create" "$K8S_FAKE/calls" >creates &&
	test "$(grep -c "^delete job sluice-$run-a1-build" "$K8S_FAKE/calls")" = 0 &&
	test -z "$(ls "$K8S_FAKE/jobs/builds" | grep "^sluice-$run-a[2-9]")" &&
	git -C r show main:j.txt >got &&
	test_grep "attempt 1" got &&
	sluice -C r audit >/dev/null
'

test_done
