#!/bin/sh
# What the kubernetes executor (build/exec_k8s.c) asks of kubectl: the argv
# of submit, poll, cancel and log (namespace, context, --ignore-not-found...),
# the manifest on stdin, and what never reaches kubectl (the reviewer token,
# in its environment or its input). kubectl here is a stand-in on PATH that
# records its argv, stdin and environment and answers with the recorded
# states of tests/k8s/states; the states themselves are tested by the unit
# test (test_build_exec_k8s), which is also the driver used here, one verb
# at a time: test_build_exec_k8s CONFIG VERB [ID]. t1092 goes through sluice.
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool jq setsid

DRIVER="${SLUICE_BUILD_DIR:-}/tests/test_build_exec_k8s"
STATES="$SLUICE_SOURCE_DIR/tests/k8s/states"
FAKE="$TRASH/fake"
NAME=sluice-20260101-000000-ab12-a1-build
mkdir -p "$FAKE/bin" "$TRASH/empty"
cat >"$FAKE/bin/kubectl" <<'EOF'
#!/bin/sh
PATH=/usr/bin:/bin
d=$FAKE_KUBECTL_DIR
echo x >>"$d/calls"
for a in "$@"; do printf '%s\n' "$a"; done >"$d/argv"
cat >"$d/stdin"
env >"$d/env"
[ ! -f "$d/answer.out" ] || cat "$d/answer.out"
[ ! -f "$d/answer.err" ] || cat "$d/answer.err" >&2
exit "$(cat "$d/answer.status" 2>/dev/null || echo 0)"
EOF
chmod +x "$FAKE/bin/kubectl"
export FAKE_KUBECTL_DIR="$FAKE"
PATH="$FAKE/bin:$PATH"
export PATH

# the reviewer token, and another name the caller drops, in our environment
export SLUICE_TEST_TOKEN=t0ken-must-not-leak SLUICE_TEST_OTHER=other-must-not-leak
cat >"$TRASH/ci.yml" <<'EOF'
reviewer:
  mode: http
  url: http://127.0.0.1:9/review
  token_env: SLUICE_TEST_TOKEN
executor:
  kind: kubernetes
  remote: https://git.example.com/team/project.git
  kubernetes:
    namespace: builds
    context: ci
    image: registry.example.com/sluice/job:1
    git_secret: sluice-git
EOF
cat >"$TRASH/plain.yml" <<'EOF'
executor:
  kind: kubernetes
  remote: /srv/git/project.git
  kubernetes:
    image: registry.example.com/sluice/job:1
EOF

# answer [OUT-FILE [ERR-FILE [STATUS]]]: what the stand-in says next
answer() {
	rm -f "$FAKE/answer.out" "$FAKE/answer.err" "$FAKE/calls" "$FAKE/argv" "$FAKE/stdin" &&
	if [ -n "${1:-}" ]; then cp "$1" "$FAKE/answer.out"; fi &&
	if [ -n "${2:-}" ]; then cp "$2" "$FAKE/answer.err"; fi &&
	echo "${3:-0}" >"$FAKE/answer.status"
}

# argv ARG...: the stand-in's last argv was exactly this
argv() {
	printf '%s\n' "$@" >argv.expected &&
	test_cmp argv.expected "$FAKE/argv"
}

test_expect_success 'the driver is built' '
	test -x "$DRIVER"
'

test_expect_success 'submit: create -f - in the namespace and context, the manifest on stdin' '
	printf "job.batch/%s\n" "$NAME" >created &&
	answer created &&
	SLUICE_K8S_DROP=SLUICE_TEST_OTHER "$DRIVER" ci.yml submit >out &&
	echo "builds/$NAME" >expect &&
	test_cmp expect out &&
	argv --context ci --namespace builds create -f - -o name &&
	test "$(jq -r .metadata.name "$FAKE/stdin")" = "$NAME" &&
	test "$(jq -r .metadata.namespace "$FAKE/stdin")" = builds &&
	test "$(jq -r .kind "$FAKE/stdin")" = Job
'

test_expect_success 'the reviewer token is in neither the manifest nor kubectl'"'"'s environment' '
	test_grep -v t0ken-must-not-leak "$FAKE/stdin" &&
	test_grep -v SLUICE_TEST_TOKEN "$FAKE/stdin" &&
	test_grep -v t0ken-must-not-leak "$FAKE/env" &&
	test_grep -v other-must-not-leak "$FAKE/env" &&
	test_grep "^FAKE_KUBECTL_DIR=" "$FAKE/env" &&
	test "$(jq -c "[.spec.template.spec.containers[0].env[].name]" "$FAKE/stdin")" = "[\"TMPDIR\",\"GIT_CONFIG_GLOBAL\"]"
'

test_expect_success 'submit with no context and no namespace: --namespace default' '
	answer created &&
	"$DRIVER" plain.yml submit >out &&
	echo "default/$NAME" >expect &&
	test_cmp expect out &&
	argv --namespace default create -f - -o name
'

test_expect_success 'submit refused by kubectl: its last line in the error' '
	printf "error: error validating \"STDIN\": something\nerror: the server does not allow this\n" >refused &&
	answer "" refused 1 &&
	test_expect_failure_code 1 "$DRIVER" plain.yml submit 2>err &&
	test_grep "kubectl create job .$NAME. failed (exit 1): error: the server does not allow this" err
'

test_expect_success 'submit of a name that is no DNS label never reaches kubectl' '
	answer created &&
	test_expect_failure_code 1 env SLUICE_K8S_NAME=Sluice_Run "$DRIVER" plain.yml submit 2>err &&
	test_grep "DNS-1123" err &&
	test ! -e "$FAKE/calls"
'

test_expect_success 'poll: get job NAME -o json, the state from its output' '
	answer "$STATES/active-running.json" &&
	"$DRIVER" ci.yml poll "builds/$NAME" >out &&
	argv --context ci --namespace builds get job "$NAME" -o json &&
	echo "running 0 " >expect &&
	test_cmp expect out &&
	answer "$STATES/deadline-exceeded.json" &&
	"$DRIVER" ci.yml poll "builds/$NAME" >out &&
	echo "lost 0 DeadlineExceeded: Job was active longer than specified deadline" >expect &&
	test_cmp expect out
'

test_expect_success 'poll of a Job that is gone (NotFound): lost' '
	answer "" "$STATES/deleted.stderr" "$(cat "$STATES/deleted.status")" &&
	"$DRIVER" ci.yml poll "builds/$NAME" >out &&
	echo "lost 0 the Job is gone (deleted, or removed after its ttl)" >expect &&
	test_cmp expect out
'

test_expect_success 'poll that cannot ask: an error' '
	echo "Unable to connect to the server: dial tcp 10.0.0.1:6443: i/o timeout" >down &&
	answer "" down 1 &&
	test_expect_failure_code 1 "$DRIVER" ci.yml poll "builds/$NAME" 2>err &&
	test_grep "failed (exit 1): Unable to connect to the server" err
'

test_expect_success 'a handle that is no namespace/name never reaches kubectl' '
	answer &&
	test_expect_failure_code 1 "$DRIVER" ci.yml poll "builds/--all" 2>err &&
	test_expect_failure_code 1 "$DRIVER" ci.yml cancel "-n/x" 2>>err &&
	test_expect_failure_code 1 "$DRIVER" ci.yml log "builds" 2>>err &&
	test "$(grep -c "names no kubernetes Job" err)" = 3 &&
	test ! -e "$FAKE/calls"
'

test_expect_success 'cancel: delete job NAME, gone already or not, without waiting' '
	answer &&
	"$DRIVER" ci.yml cancel "builds/$NAME" &&
	argv --context ci --namespace builds delete job "$NAME" --ignore-not-found \
		--wait=false --cascade=background
'

test_expect_success 'log: logs job/NAME, all of it' '
	printf "cloning\nbuilding\ndone\n" >log &&
	answer log &&
	"$DRIVER" plain.yml log "default/$NAME" >out &&
	argv --namespace default logs "job/$NAME" --tail=-1 &&
	test_cmp log out
'

test_expect_success 'kubectl not on PATH: says to install it or set executor.kubernetes.kubectl' '
	test_expect_failure_code 2 env PATH="$TRASH/empty" "$DRIVER" plain.yml submit 2>err &&
	test_grep "install kubectl or set executor.kubernetes.kubectl" err
'

test_expect_success 'executor.kubernetes.kubectl names the program' '
	sed "s|image:|kubectl: $FAKE/bin/kubectl\n    image:|" plain.yml >named.yml &&
	test_grep "kubectl: " named.yml &&
	answer "$STATES/succeeded.json" &&
	env PATH="$TRASH/empty" "$DRIVER" named.yml poll "default/$NAME" >out &&
	echo "done 0 Complete" >expect &&
	test_cmp expect out
'

# With tests/k8s/kubectl-standin.sh: a Job's pod is its script run here, and a
# name that is there is refused as the API server does (AlreadyExists).
STANDIN="$SLUICE_SOURCE_DIR/tests/k8s/kubectl-standin.sh"
export K8S_STATES="$STATES"

# the stand-in's pods that still run at the end (a failed test): their process groups
test_when_finished 'for _p in "$TRASH"/standin/jobs/*/*/pid; do [ -f "$_p" ] && kill -TERM "-$(cat "$_p")" 2>/dev/null; done; :'

standin_config() {
	mkdir -p "$TRASH/standin" &&
	sed "s|image:|kubectl: $STANDIN\n    image:|" "$TRASH/plain.yml" >"$TRASH/standin.yml"
}

# until_ended HANDLE: poll (a guard against a hang: 3000 polls) until the job is done or lost; its line in polled
until_ended() {
	_i=0
	while [ $_i -lt 3000 ]; do
		K8S_FAKE="$TRASH/standin" "$DRIVER" "$TRASH/standin.yml" poll "$1" >polled || return 1
		case $(cat polled) in done*|lost*) return 0 ;; esac
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

test_must_be_gone_() { # PID
	if kill -0 "$1" 2>/dev/null; then echo "the pod ($1) still runs" >&2; return 1; fi
}

test_expect_success 'stand-in: a Job runs its script with only TMPDIR from the manifest' '
	standin_config &&
	SLUICE_K8S_SCRIPT="env >env.txt; echo from the pod; exit 0" K8S_FAKE="$TRASH/standin" \
		"$DRIVER" "$TRASH/standin.yml" submit >handle &&
	until_ended "$(cat handle)" &&
	echo "done 0 Complete" >expect &&
	test_cmp expect polled &&
	K8S_FAKE="$TRASH/standin" "$DRIVER" "$TRASH/standin.yml" log "$(cat handle)" >log &&
	echo "from the pod" >expect &&
	test_cmp expect log &&
	env="$TRASH/standin/jobs/default/$NAME/workspace/env.txt" &&
	test_grep "^TMPDIR=$TRASH/standin/jobs/default/$NAME/workspace\$" "$env" &&
	test_grep -v t0ken-must-not-leak "$env" &&
	test_grep -v "^SLUICE_" "$env"
'

test_expect_success 'submit of a name whose Job has ended: that Job is deleted, the new one made' '
	: >"$TRASH/standin/calls" &&
	SLUICE_K8S_SCRIPT="exit 7" K8S_FAKE="$TRASH/standin" \
		"$DRIVER" "$TRASH/standin.yml" submit >handle &&
	printf "%s\n" "create -f - -o name" "get job $NAME -o json" \
		"delete job $NAME --ignore-not-found --cascade=background --timeout=60s" \
		"create -f - -o name" >expect &&
	test_cmp expect "$TRASH/standin/calls" &&
	until_ended "$(cat handle)" &&
	echo "done 1 BackoffLimitExceeded" >expect &&
	test_cmp expect polled
'

test_expect_success 'submit of a name whose Job has not ended: refused, that Job left alone' '
	SLUICE_K8S_SCRIPT="sleep 600" K8S_FAKE="$TRASH/standin" \
		"$DRIVER" "$TRASH/standin.yml" submit >handle &&
	: >"$TRASH/standin/calls" &&
	SLUICE_K8S_SCRIPT="exit 0" K8S_FAKE="$TRASH/standin" \
		test_expect_failure_code 1 "$DRIVER" "$TRASH/standin.yml" submit 2>err &&
	test_grep "the kubernetes Job .default/$NAME. is there already and has not ended" err &&
	test_grep -v "^delete" "$TRASH/standin/calls" &&
	K8S_FAKE="$TRASH/standin" "$DRIVER" "$TRASH/standin.yml" poll "$(cat handle)" >polled &&
	echo "running 0 " >expect &&
	test_cmp expect polled
'

test_expect_success 'cancel ends its pod; the Job is gone' '
	pid=$(cat "$TRASH/standin/jobs/default/$NAME/pid") &&
	kill -0 "$pid" &&
	K8S_FAKE="$TRASH/standin" "$DRIVER" "$TRASH/standin.yml" cancel "$(cat handle)" &&
	{ wait_until "! kill -0 $pid 2>/dev/null" || :; } &&
	test_must_be_gone_ "$pid" &&
	until_ended "$(cat handle)" &&
	echo "lost 0 the Job is gone (deleted, or removed after its ttl)" >expect &&
	test_cmp expect polled
'

test_done
