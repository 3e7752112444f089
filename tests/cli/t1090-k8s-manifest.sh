#!/bin/sh
# The Job manifest of the kubernetes executor (build/exec_k8s.c), checked by
# kubectl offline (tests/k8s/check.sh: `kubectl create --dry-run=client`
# against a loopback stub of the API's discovery documents, and a decode into
# kubectl's typed batch/v1 Job that fails on a field of the wrong type and
# drops a field it does not know). No cluster: what the API server alone
# checks (values it refuses) is not checked here (tests/k8s/README.md).
#
# The manifests come from the back end itself: the unit test binary
# test_build_exec_k8s writes one (SLUICE_K8S_MANIFEST_OUT), and, given a
# config file, prints the manifest of a sample job (its driver mode).
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool kubectl python3 jq

K8S="$SLUICE_SOURCE_DIR/tests/k8s"
DRIVER="${SLUICE_BUILD_DIR:-}/tests/test_build_exec_k8s"

# config NAME [kubernetes keys...]: a config file with executor.kind kubernetes
config() {
	_name=$1
	shift
	{
		printf 'executor:\n  kind: kubernetes\n  remote: /srv/git/project.git\n'
		printf '  kubernetes:\n    image: registry.example.com/sluice/job:1\n'
		for _kv in "$@"; do printf '    %s\n' "$_kv"; done
	} >"$_name.yml"
}

# check NAME: the manifest NAME.json passes check.sh; the dry run in NAME.dry.json
check() {
	sh "$K8S/check.sh" "$1.json" "$1.dry.json" 2>"$1.check.err" || {
		cat "$1.check.err" >&2
		return 1
	}
}

test_expect_success 'the driver is built' '
	test -x "$DRIVER"
'

test_expect_success 'the unit test writes its sample manifest, and kubectl takes it' '
	SLUICE_K8S_MANIFEST_OUT="$TRASH/unit.json" "$DRIVER" >unit.log 2>&1 &&
	test -s unit.json &&
	check unit &&
	test "$(jq -r .kind unit.dry.json)" = Job &&
	test "$(jq -r .spec.backoffLimit unit.dry.json)" = 0 &&
	test "$(jq -r .spec.activeDeadlineSeconds unit.dry.json)" = 3601
'

test_expect_success 'plain config: kubectl takes it; one container "job", only TMPDIR' '
	config plain &&
	"$DRIVER" plain.yml manifest >plain.json &&
	check plain &&
	test "$(jq -r .metadata.namespace plain.dry.json)" = default &&
	test "$(jq -r ".spec.template.spec.containers | length" plain.dry.json)" = 1 &&
	test "$(jq -r ".spec.template.spec.containers[0].name" plain.dry.json)" = job &&
	test "$(jq -c ".spec.template.spec.containers[0].command[0:2]" plain.dry.json)" = "[\"sh\",\"-c\"]" &&
	test "$(jq -c "[.spec.template.spec.containers[0].env[].name]" plain.dry.json)" = "[\"TMPDIR\"]" &&
	test "$(jq -r ".spec.template.spec.containers[0].resources" plain.dry.json)" = null &&
	test "$(jq -r ".spec.template.spec.automountServiceAccountToken" plain.dry.json)" = false &&
	test "$(jq -r ".spec.template.spec.restartPolicy" plain.dry.json)" = Never &&
	test "$(jq -r ".spec.ttlSecondsAfterFinished" plain.dry.json)" = 86400 &&
	test "$(jq -r ".spec.podFailurePolicy.rules[0].onPodConditions[0].type" plain.dry.json)" = DisruptionTarget &&
	test "$(jq -r ".metadata.labels[\"sluice.dev/work-order\"]" plain.dry.json)" = WO-7
'

test_expect_success 'every key set: namespace, resources, service account, git Secret' '
	config full "namespace: builds" "context: ci" "cpu: \"2\"" "memory: 4Gi" \
		"service_account: sluice-jobs" "git_secret: sluice-git" &&
	"$DRIVER" full.yml manifest >full.json &&
	check full &&
	test "$(jq -r .metadata.namespace full.dry.json)" = builds &&
	test "$(jq -c ".spec.template.spec.containers[0].resources" full.dry.json)" = "{\"requests\":{\"cpu\":\"2\",\"memory\":\"4Gi\"}}" &&
	test "$(jq -r ".spec.template.spec.serviceAccountName" full.dry.json)" = sluice-jobs &&
	test "$(jq -r ".spec.template.spec.automountServiceAccountToken" full.dry.json)" = true &&
	test "$(jq -c "[.spec.template.spec.containers[0].env[].name]" full.dry.json)" = "[\"TMPDIR\",\"GIT_CONFIG_GLOBAL\"]" &&
	test "$(jq -r ".spec.template.spec.volumes[1].secret.secretName" full.dry.json)" = sluice-git &&
	test "$(jq -r ".spec.template.spec.containers[0].volumeMounts[1] | \"\(.mountPath) \(.readOnly)\"" full.dry.json)" = "/etc/sluice-git true"
'

test_expect_success 'memory alone; no deadline; a work order id that is no label; a script of many lines' '
	config mem "memory: 512Mi" &&
	printf "#!/bin/sh\nset -eu\nprintf \"%%s\\\\n\" \"it'"'"'s \\\$HOME\"\nexit 3\n" >script &&
	SLUICE_K8S_TIMEOUT_MS=0 SLUICE_K8S_WORK_ORDER=".hidden" SLUICE_K8S_SCRIPT="$(cat script)" \
		"$DRIVER" mem.yml manifest >mem.json &&
	check mem &&
	test "$(jq -c ".spec.template.spec.containers[0].resources" mem.dry.json)" = "{\"requests\":{\"memory\":\"512Mi\"}}" &&
	test "$(jq -r ".spec.activeDeadlineSeconds" mem.dry.json)" = null &&
	test "$(jq -r ".metadata.labels | has(\"sluice.dev/work-order\")" mem.dry.json)" = false &&
	jq -r ".spec.template.spec.containers[0].command[2]" mem.dry.json >script.back &&
	test_cmp script script.back
'

test_expect_success 'the script in the manifest runs as the job would: sh -c' '
	jq -r ".spec.template.spec.containers[0].command[2]" mem.dry.json >run.sh &&
	{ sh -c "$(cat run.sh)" >out; test $? = 3; } &&
	test "$(cat out)" = "it'"'"'s \$HOME"
'

test_expect_success 'check.sh can fail: a misspelt field, a field of the wrong type' '
	jq ".spec.backofLimit = 0 | del(.spec.backoffLimit)" plain.json >typo.json &&
	! check typo &&
	grep backofLimit typo.check.err &&
	jq ".spec.backoffLimit = \"0\"" plain.json >type.json &&
	! check type
'

test_done
