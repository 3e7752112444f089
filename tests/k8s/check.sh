#!/bin/sh
# Check a Job manifest (default: job.yaml here) with kubectl, offline:
#
#   1. `kubectl create --dry-run=client --validate=false -o json -f MANIFEST`
#      against discovery.py on loopback (kubectl needs the server's discovery
#      documents even for a client dry run; without a server it fails with
#      "connection refused" on localhost:8080: recorded in README.md). Its
#      output is what `kubectl create -f` would send.
#   2. `kubectl set env --local -c job -f MANIFEST -o json SLUICE_CHECK=1`:
#      kubectl decodes the manifest into its typed batch/v1 Job (a field of
#      the wrong type fails here) and prints it again; a field it does not
#      know is dropped, so the typed copy (less the variable set and the
#      fields kubectl adds empty) must equal the dry run's output.
#
# Writes the dry run's JSON to OUT (default: stdout). Exit 0 if both hold, 1
# if not, 77 when kubectl, python3 or jq is missing. KUBECTL names the binary.
set -u
here=$(cd "$(dirname "$0")" && pwd)
manifest=${1:-$here/job.yaml}
out=${2:-/dev/stdout}
kubectl=${KUBECTL:-kubectl}
for t in "$kubectl" python3 jq; do
	command -v "$t" >/dev/null 2>&1 || { echo "check: $t not installed" >&2; exit 77; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-k8s-check.XXXXXX")
pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
# kubectl's cache and config in the temp folder, never the user's cluster
export HOME="$tmp" KUBECONFIG="$tmp/kubeconfig"
printf 'apiVersion: v1\nkind: Config\n' >"$KUBECONFIG"

python3 "$here/discovery.py" >"$tmp/port" 2>"$tmp/discovery.log" &
pid=$!
i=0
while [ ! -s "$tmp/port" ] && kill -0 "$pid" 2>/dev/null && [ $i -lt 6000 ]; do sleep 0.05; i=$((i + 1)); done
[ -s "$tmp/port" ] || { echo "check: discovery.py did not start" >&2; exit 1; }

"$kubectl" --server="http://127.0.0.1:$(cat "$tmp/port")" create --dry-run=client \
	--validate=false -o json -f "$manifest" >"$tmp/dry.json" ||
	{ echo "check: kubectl create --dry-run=client failed" >&2; exit 1; }
"$kubectl" set env --local -c job -f "$manifest" -o json SLUICE_CHECK=1 >"$tmp/typed.json" ||
	{ echo "check: kubectl could not decode $manifest as a batch/v1 Job" >&2; exit 1; }
jq -S 'del(.metadata.namespace)' "$tmp/dry.json" >"$tmp/a.json" &&
jq -S 'del(.status, .metadata.namespace, .metadata.creationTimestamp, .spec.template.metadata.creationTimestamp)
	| .spec.template.spec.containers[0].env |= map(select(.name != "SLUICE_CHECK"))
	| .spec.template.spec.containers |= map(if .resources == {} then del(.resources) else . end)
	| if .spec.template.spec.initContainers == null then . else .spec.template.spec.initContainers |= map(if .resources == {} then del(.resources) else . end) end' \
	"$tmp/typed.json" >"$tmp/b.json" || exit 1
if ! diff -u "$tmp/a.json" "$tmp/b.json" >"$tmp/diff"; then
	echo "check: fields kubectl's batch/v1 Job does not know (dropped in the typed copy):" >&2
	cat "$tmp/diff" >&2
	exit 1
fi
cat "$tmp/dry.json" >"$out"
