#!/bin/sh
# Every --json output validates against its schema in schema/.
. "$(dirname "$0")/lib.sh"

PY=""
for p in python3 /usr/bin/python3; do
	if command -v $p >/dev/null 2>&1 && $p -c "import jsonschema" 2>/dev/null; then
		PY=$p
		break
	fi
done
[ -n "$PY" ] || test_skip_all "python3-jsonschema not installed"

# validate SCHEMA FILE: FILE against schema/SCHEMA (with $refs to its siblings)
validate() {
	$PY - "$SLUICE_SOURCE_DIR/schema" "$1" "$2" <<-\EOF
	import json, os, sys
	import jsonschema
	d, name, path = sys.argv[1], sys.argv[2], sys.argv[3]
	store = {}
	for f in os.listdir(d):
	    if f.endswith(".json"):
	        s = json.load(open(os.path.join(d, f)))
	        store[s.get("$id", f)] = s
	        store[f] = s
	schema = json.load(open(os.path.join(d, name)))
	resolver = jsonschema.RefResolver(base_uri=schema.get("$id", ""), referrer=schema, store=store)
	jsonschema.validate(json.load(open(path)), schema, resolver=resolver)
	EOF
}

test_expect_success 'a python with jsonschema (scripts/deps.sh installs python3-jsonschema)' '
	test -n "$PY"
'

test_expect_success 'setup: a merged run and one waiting for a person' '
	sluice_repo repo &&
	echo "echo one >one.txt" >"$BUILDERS/J1.sh" &&
	echo "echo two >two.txt" >"$BUILDERS/J2.sh" &&
	wo repo J1 && wo repo J2 &&
	sluice -C repo tick --json >tick.json &&
	sluice -C repo approve $(run_of repo J1) &&
	sluice -C repo tick >/dev/null
'

test_expect_success 'tick, runs, status, log validate' '
	validate tick.schema.json tick.json &&
	sluice -C repo runs --json >runs.json &&
	$PY -c "import json,sys; [json.dump(r, open(\"run%d.json\" % i, \"w\")) for i, r in enumerate(json.load(open(\"runs.json\")))]" &&
	validate run.schema.json run0.json && validate run.schema.json run1.json &&
	sluice -C repo status --json >status.json && validate status.schema.json status.json &&
	sluice -C repo log --json >log.json && validate log.schema.json log.json
'

test_expect_success 'queue, show, audit, merge-preview validate' '
	sluice -C repo queue --json >queue.json && validate queue.schema.json queue.json &&
	sluice -C repo show --json $(run_of repo J1) >show.json && validate show.schema.json show.json &&
	sluice -C repo audit --json >audit.json && validate audit.schema.json audit.json &&
	sluice -C repo merge-preview --json main main >mp.json && validate merge-preview.schema.json mp.json
'

test_expect_success 'the artifacts validate: review request and response, manifest' '
	d=repo/.system/runs/$(run_of repo J1) &&
	validate review-request.schema.json $d/review-request.json &&
	validate review-response.schema.json $d/review.json &&
	validate manifest.schema.json $d/manifest.json
'

test_done
