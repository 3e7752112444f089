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
	schema_validate tick.schema.json tick.json &&
	sluice -C repo runs --json >runs.json &&
	$PY -c "import json,sys; [json.dump(r, open(\"run%d.json\" % i, \"w\")) for i, r in enumerate(json.load(open(\"runs.json\")))]" &&
	schema_validate run.schema.json run0.json && schema_validate run.schema.json run1.json &&
	sluice -C repo status --json >status.json && schema_validate status.schema.json status.json &&
	sluice -C repo log --json >log.json && schema_validate log.schema.json log.json
'

test_expect_success 'queue, show, audit, merge-preview validate' '
	sluice -C repo queue --json >queue.json && schema_validate queue.schema.json queue.json &&
	sluice -C repo show --json $(run_of repo J1) >show.json && schema_validate show.schema.json show.json &&
	sluice -C repo audit --json >audit.json && schema_validate audit.schema.json audit.json &&
	sluice -C repo merge-preview --json main main >mp.json && schema_validate merge-preview.schema.json mp.json
'

test_expect_success 'the artifacts validate: review request and response, manifest' '
	d=repo/.system/runs/$(run_of repo J1) &&
	schema_validate review-request.schema.json $d/review-request.json &&
	schema_validate review-response.schema.json $d/review.json &&
	schema_validate manifest.schema.json $d/manifest.json
'

test_done
