#!/bin/sh
# sluice with executor.kind kubernetes, end to end, without a cluster: the
# kubectl is tests/k8s/kubectl-standin.sh, whose pods are local process groups
# running the Job's script (containers[0].command) with only the environment
# the manifest sets. So what is real here is sluice's side (the runner, the
# job script, the back end's kubectl calls, the workspace moved by git through
# executor.remote); what is played is the cluster (scheduling, the image, the
# Job controller: tests/k8s/README.md).
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool jq setsid

STANDIN="$SLUICE_SOURCE_DIR/tests/k8s/kubectl-standin.sh"
export K8S_STATES="$SLUICE_SOURCE_DIR/tests/k8s/states" K8S_FAKE="$TRASH/cluster"
mkdir -p "$K8S_FAKE"
test_when_finished 'for _p in "$TRASH"/cluster/jobs/*/*/pid; do [ -f "$_p" ] && kill -TERM "-$(cat "$_p")" 2>/dev/null; done; :'

# k8s_repo DIR [config lines...]: a sluice repository whose builders and gates run as Jobs
k8s_repo() {
	_dir=$1
	shift
	git init -q --bare "$TRASH/$_dir.remote.git" &&
	sluice_repo "$_dir" "gates:" "  check: [sh, -c, 'test -f built.txt && echo gate ok']" \
		"executor:" "  kind: kubernetes" "  remote: $TRASH/$_dir.remote.git" "  poll: 1s" \
		"  kubernetes:" "    namespace: builds" "    image: registry.example.com/sluice/job:1" \
		"    kubectl: $STANDIN" "$@" &&
	approve_reviewer_config >>"$_dir/.system/config.yaml" &&
	sluice -C "$_dir" check >/dev/null
}

# jobs_of RUN: the names of the Jobs made for a run, in order
jobs_of() {
	grep "^create" "$K8S_FAKE/calls" >/dev/null &&
	sed -n "s/^get job \(sluice-$1-[a-z0-9-]*\) -o json$/\1/p" "$K8S_FAKE/calls" | uniq
}

test_expect_success 'a work order lands with its builder, gates and merge gates as Jobs' '
	k8s_repo repo &&
	cat >"$BUILDERS/WO-1.sh" <<-\EOF &&
	echo "built by $SLUICE_WORK_ORDER_ID" >built.txt
	env | sort >"$SLUICE_RUN_DIR/../builder-env.txt"
	cp "$SLUICE_RUN_DIR/../builder-env.txt" env.txt
	EOF
	wo repo WO-1 &&
	sluice -C repo tick >tick.out 2>&1 &&
	sluice -C repo tick >>tick.out 2>&1 &&
	run=$(run_of repo WO-1) &&
	test "$(state_of repo "$run")" = merged &&
	echo "built by WO-1" >expect &&
	git -C repo show main:built.txt >actual &&
	test_cmp expect actual &&
	jobs_of "$run" >jobs &&
	printf "%s\n" "sluice-$run-a1-build" "sluice-$run-a1-gates" "sluice-$run-a1-train" >expect &&
	test_cmp expect jobs &&
	test_grep "job kubernetes:builds/sluice-$run-a1-build submitted" tick.out
'

test_expect_success 'inside the Job: the environment contract, from the script alone' '
	run=$(run_of repo WO-1) &&
	git -C repo show main:env.txt >env &&
	test_grep "^SLUICE_WORK_ORDER_ID=WO-1\$" env &&
	test_grep "^SLUICE_MODE=build\$" env &&
	test_grep "^SLUICE_PROMPT_FILE=" env &&
	test_grep "^TMPDIR=$K8S_FAKE/jobs/builds/sluice-$run-a1-build/workspace\$" env &&
	test_grep -v "^KUBECONFIG=" env &&
	jq -c "[.spec.template.spec.containers[0].env[].name]" \
		"$K8S_FAKE/jobs/builds/sluice-$run-a1-build/manifest.json" >names &&
	echo "[\"TMPDIR\"]" >expect &&
	test_cmp expect names
'

test_expect_success 'a Job deleted from outside while its builder runs: lost, retried with the reason' '
	k8s_repo lost "retry:" "  - attempt: 1" "  - exit: 3" &&
	cat >"$BUILDERS/WO-2.sh" <<-EOF &&
	: >"$TRASH/wo2-started"
	i=0
	while [ ! -f "$TRASH/wo2-go" ] && [ \$i -lt 3000 ]; do sleep 0.1; i=\$((i + 1)); done
	echo "built by \$SLUICE_WORK_ORDER_ID" >built.txt
	EOF
	wo lost WO-2 &&
	{ sluice -C lost tick >lost.out 2>&1 & } &&
	i=0 &&
	while [ ! -f "$TRASH/wo2-started" ] && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done &&
	test -f "$TRASH/wo2-started" &&
	run2=$(run_of lost WO-2) &&
	"$STANDIN" --namespace builds delete job "sluice-$run2-a1-build" --ignore-not-found &&
	: >"$TRASH/wo2-go" &&
	wait &&
	test_grep "build job kubernetes:builds/sluice-$run2-a1-build lost: .*the Job is gone (deleted, or removed after its ttl)" lost.out &&
	sluice -C lost tick >>lost.out 2>&1 &&
	test "$(state_of lost "$run2")" = merged &&
	test_grep "build job kubernetes:builds/sluice-$run2-a2-build submitted (attempt 2)" lost.out
'

# The train tests a car again, under the same run and attempt and so the same
# Job name, when the car ahead fails: the ended Job of the first test is
# still there (ttlSecondsAfterFinished), and the back end replaces it.
test_expect_success 'a car tested again under the same attempt: its ended Job is replaced' '
	k8s_repo train "queue:" "  jobs: 2" "merge:" "  train_depth: 2" &&
	sed -i "s|check: .*|check: [sh, -c, '"'"'! { test -f poison \&\& git rev-parse -q --verify HEAD^2 >/dev/null; }'"'"']|" \
		train/.system/config.yaml &&
	sluice -C train check >/dev/null &&
	printf "%s\n" "echo A >a.txt" ": >poison" >"$BUILDERS/WO-A.sh" &&
	printf "%s\n" "echo B >b.txt" >"$BUILDERS/WO-B.sh" &&
	wo train WO-A "priority: 1" &&
	wo train WO-B &&
	: >"$K8S_FAKE/calls" &&
	sluice -C train tick >train.out 2>&1 &&
	sluice -C train tick >>train.out 2>&1 &&
	sluice -C train tick >>train.out 2>&1 &&
	runb=$(run_of train WO-B) &&
	test "$(state_of train "$runb")" = merged &&
	grep -c "^create" "$K8S_FAKE/calls" >/dev/null &&
	test "$(grep -c "^delete job sluice-$runb-a1-train " "$K8S_FAKE/calls")" -ge 1 &&
	test_grep "train job kubernetes:builds/sluice-$runb-a1-train submitted" train.out
'

test_done
