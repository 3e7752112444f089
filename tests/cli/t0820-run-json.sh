#!/bin/sh
# One run, one JSON encoding: `runs --json`, `status --json RUN` and the run of
# `show --json` carry the same keys (schema/run.schema.json) with the same
# values; show's deprecated aliases (schema/show.schema.json) equal the key
# they alias until they are removed in 0.3.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || test_skip_all "no python3 (scripts/deps.sh installs it)"

# check DIR: every run of DIR, as runs --json, status --json and show --json print it
check() {
	sluice -C "$1" runs --json >"$1.runs.json" &&
	for r in $(sluice -C "$1" runs | grep -E "^[0-9]{8}-[0-9]{6}-" | cut -d" " -f1); do
		sluice -C "$1" status --json "$r" >"$1.status.$r.json" &&
		sluice -C "$1" show --json "$r" >"$1.show.$r.json" || return 1
	done &&
	python3 - "$SLUICE_SOURCE_DIR/schema" "$1" <<-\EOF
	import datetime, glob, json, os, re, sys
	schema_dir, d = sys.argv[1], sys.argv[2]
	run_schema = json.load(open(os.path.join(schema_dir, "run.schema.json")))
	show_run = json.load(open(os.path.join(schema_dir, "show.schema.json")))["properties"]["run"]
	canonical = set(run_schema["properties"])
	assert set(run_schema["required"]) == canonical, "run.schema.json: every key is required"
	# the deprecated aliases, from the schema: "alias of KEY" or "KEY in ISO 8601"
	aliases = {}
	for k, p in show_run["properties"].items():
	    if p.get("deprecated"):
	        m = re.match(r"(?:alias of )?([a-z_]+)(?: in ISO 8601)?\b", p["description"])
	        assert m and m.group(1) in canonical, (k, p["description"])
	        aliases[k] = m.group(1)
	assert aliases == {"branch": "branch_name", "base": "base_commit", "head": "head_commit",
	                   "conflict_with_run": "conflict_with_run_id",
	                   "created_at": "created_ms", "finished_at": "finished_ms"}, aliases
	assert set(show_run["properties"]) == canonical | set(aliases)

	def iso(ms):
	    if ms is None or ms <= 0:
	        return None
	    t = datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc)
	    return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % (ms % 1000)

	runs = json.load(open(d + ".runs.json"))
	assert runs, "no runs"
	for run in runs:
	    rid = run["id"]
	    assert set(run) == canonical, (rid, sorted(set(run) ^ canonical))
	    status = json.load(open("%s.status.%s.json" % (d, rid)))
	    assert status == run, (rid, "status --json differs from runs --json")
	    shown = json.load(open("%s.show.%s.json" % (d, rid)))["run"]
	    assert set(shown) == canonical | set(aliases), (rid, sorted(shown))
	    for k in canonical:
	        assert shown[k] == run[k], (rid, k, shown[k], run[k])
	    for a, k in aliases.items():
	        want = iso(shown[k]) if a.endswith("_at") else shown[k]
	        assert shown[a] == want, (rid, a, shown[a], want)
	    print(rid, run["state"], "ok")
	EOF
}

test_expect_success 'setup: a merged run and one awaiting review' '
	sluice_repo a &&
	echo "echo one >one.txt" >"$BUILDERS/J1.sh" &&
	echo "echo two >two.txt" >"$BUILDERS/J2.sh" &&
	wo a J1 && wo a J2 &&
	sluice -C a tick >/dev/null &&
	sluice -C a approve $(run_of a J1) &&
	sluice -C a tick >/dev/null &&
	test "$(state_of a $(run_of a J1))" = merged &&
	test "$(state_of a $(run_of a J2))" = awaiting_review
'

test_expect_success 'setup: two runs built side by side; the second to merge conflicts' '
	meeting_builders C1 C2 "sed -i \"5s/.*/five by %s/\" lines.txt" &&
	sluice_repo c "queue:" "  jobs: 2" "merge:" "  resolver: none" &&
	approve_reviewer_config >>c/.system/config.yaml &&
	seq 1 10 >c/lines.txt && git -C c add lines.txt && git -C c commit -q -m lines &&
	wo c C1 && wo c C2 &&
	{ sluice -C c tick --jobs 2 >/dev/null 2>&1 || :; } &&
	settle c &&
	sluice -C c runs --state merge_conflict | grep -q "^[0-9]" &&
	sluice -C c runs --state merged | grep -q "^[0-9]"
'

test_expect_success 'runs, status and show --json: the same keys and values, aliases equal their keys' '
	check a >a.out && cat a.out &&
	test "$(grep -c " ok$" a.out)" = 2 &&
	check c >c.out && cat c.out &&
	test "$(grep -c " ok$" c.out)" = 2
'

test_expect_success 'the conflicted run: conflict_with_run_id names the rival, in show too' '
	r=$(sluice -C c runs --state merge_conflict | cut -d" " -f1) &&
	m=$(sluice -C c runs --state merged | cut -d" " -f1) &&
	python3 - c.show.$r.json c.runs.json "$m" <<-\EOF
	import json, sys
	shown = json.load(open(sys.argv[1]))["run"]
	assert shown["conflict_with_run_id"] == sys.argv[3], shown
	assert shown["conflict_with_run"] == sys.argv[3], shown
	assert shown["merge_status"] == "conflict", shown
	merged = [r for r in json.load(open(sys.argv[2])) if r["id"] == sys.argv[3]][0]
	assert isinstance(merged["finished_ms"], int) and merged["finished_ms"] > merged["created_ms"]
	EOF
'

if python3 -c "import jsonschema" 2>/dev/null; then
	test_expect_success 'the outputs validate against run.schema.json and show.schema.json' '
		python3 - "$SLUICE_SOURCE_DIR/schema" a c <<-\EOF
		import glob, json, os, sys
		import jsonschema
		d = sys.argv[1]
		run_schema = json.load(open(os.path.join(d, "run.schema.json")))
		show_schema = json.load(open(os.path.join(d, "show.schema.json")))
		for repo in sys.argv[2:]:
		    for run in json.load(open(repo + ".runs.json")):
		        jsonschema.validate(run, run_schema)
		    for f in glob.glob(repo + ".show.*.json"):
		        jsonschema.validate(json.load(open(f)), show_schema)
		EOF
	'
else
	echo "# skipped: schema validation (no python3 jsonschema; scripts/deps.sh installs it)"
fi

test_done
