#!/bin/sh
# schema/work-order.schema.json and schema/config.schema.json against the
# fixtures and sluice check, so that the schemas and the C rules cannot
# drift apart: every valid fixture is accepted by sluice check and by the
# schema; every invalid one is refused by sluice check with its expected
# message and by the schema too, unless tests/schema/not-in-schema.txt says
# why no schema can state its rule. The JSON the schema judges is read by
# tests/schema/check_fixtures.py, checked equal to the fields sluice stored.
# Then tests/schema/differential.py compares the two on random cases.
. "$(dirname "$0")/lib.sh"

PY=""
for p in python3 /usr/bin/python3; do
	if command -v $p >/dev/null 2>&1 && $p -c "import jsonschema, yaml" 2>/dev/null; then
		PY=$p
		break
	fi
done
[ -n "$PY" ] || test_skip_all "no python3 with jsonschema and yaml (scripts/deps.sh installs python3-jsonschema and python3-yaml)"
command -v sqlite3 >/dev/null 2>&1 || test_skip_all "no sqlite3 (scripts/deps.sh installs it)"

WO="$FIXTURES/work_orders"
CFG="$FIXTURES/config"
TAB=$(printf '\t')

# The fields sluice stored for the work orders of an inbox, one
# "<fixture path>\t<JSON>" line each; SUBDIR is where the inbox's files
# come from under fixtures/work_orders/ ("" when copied with their folders).
stored_fields() { # DIR SUBDIR
	sqlite3 -separator "$TAB" "$1/.system/sluice.db" "SELECT path, fields_json FROM work_orders" |
		sed "s|^work_orders/|work_orders/$2|"
}

# The schema side: one line per fixture, "ok <fixture>" or "FAIL <fixture>: why".
# Written to schema.out; the lines that are not ok are shown on failure.
run_check_fixtures() {
	$PY "$SLUICE_SOURCE_DIR/tests/schema/check_fixtures.py" "$SLUICE_SOURCE_DIR/schema" \
		"$FIXTURES" "$SLUICE_SOURCE_DIR/tests/schema/not-in-schema.txt" c-fields.tsv \
		init-config.yaml >schema.out 2>&1 && return 0
	grep -v "^ok " schema.out >&2
	return 1
}

# run_differential REPO CASES: written to random.out, shown on failure.
run_differential() {
	$PY "$SLUICE_SOURCE_DIR/tests/schema/differential.py" "$SLUICE" "$1" \
		"$SLUICE_SOURCE_DIR/schema" "$2" >random.out 2>&1 && return 0
	cat random.out >&2
	return 1
}

# check_accepts DIR: sluice check finds no problem in DIR (its output shown if it does).
check_accepts() {
	"$SLUICE" -C "$1" check >"$TRASH/check.out" 2>&1 && return 0
	cat "$TRASH/check.out" >&2
	return 1
}

# said OUT EXPECTED: every line of the file EXPECTED is in the file OUT.
said() {
	while IFS= read -r _l; do
		grep -F -e "$_l" "$1" >/dev/null && continue
		echo "sluice check did not say: $_l" >&2
		cat "$1" >&2
		return 1
	done <"$2"
}

# schema_ok FIXTURE...: check_fixtures.py said ok for each (and said something).
schema_ok() {
	for _f in "$@"; do
		grep -qxF "ok $_f" schema.out && continue
		grep -F " $_f" schema.out >&2 || echo "check_fixtures.py said nothing of $_f" >&2
		return 1
	done
}

test_expect_success 'setup: a repository with the branches the config fixtures name' '
	test_repo r && git -C r branch master && git -C r branch release/1.x &&
	sluice -C r init >/dev/null && cp r/.system/config.yaml init-config.yaml &&
	: >c-fields.tsv
'

test_expect_success 'valid work orders (valid/, seed/, edge/): sluice check accepts them' '
	test_repo good && sluice -C good init >/dev/null && mkdir -p good/work_orders &&
	cp -R "$WO/valid" "$WO/seed" "$WO/edge" good/work_orders/ &&
	wo good WO-2025-004 "status: done" &&
	check_accepts good &&
	sluice -C good queue >/dev/null &&
	stored_fields good "" | grep -v "^work_orders/WO-2025-004.md$TAB" >>c-fields.tsv &&
	test_grep "^work_orders/edge/E-EDGES.md$TAB" c-fields.tsv
'

test_expect_success 'invalid work orders: sluice check refuses them all' '
	test_repo bad && sluice -C bad init >/dev/null && mkdir -p bad/work_orders &&
	cp "$WO"/invalid/*.md bad/work_orders/ &&
	sh "$WO/invalid/too-big.gen" >bad/work_orders/too-big.md &&
	test_expect_failure_code 1 sluice -C bad check >bad.out 2>&1 &&
	sluice -C bad queue >/dev/null &&
	stored_fields bad invalid/ >>c-fields.tsv &&
	test_grep "^work_orders/invalid/unknown-status.md$TAB" c-fields.tsv
'

test_expect_success 'every invalid work order has its expected message' '
	for f in "$WO"/invalid/*.md "$WO"/invalid/*.gen; do
		c=${f##*/} && c=${c%%.*} &&
		test -s "$WO/invalid/$c.expected" || { echo "no $c.expected" >&2; return 1; }
	done
'

test_expect_success 'the schemas, read as sluice reads YAML, against every fixture' '
	run_check_fixtures &&
	test_grep "^ok work_orders/valid/WO-100.md$" schema.out
'

test_expect_success 'the config sluice init writes passes the schema' '
	test_grep "^ok init-config.yaml$" schema.out
'

for f in $(cd "$FIXTURES" && find work_orders/valid work_orders/seed work_orders/edge -name "*.md" | sort); do
	test_expect_success "valid work order $f: the schema accepts it" '
		schema_ok "$f"
	'
done

for exp in "$WO"/invalid/*.expected; do
	c=$(basename "$exp" .expected)
	test_expect_success "invalid work order $c: sluice check and the schema refuse it" '
		said bad.out "$exp" &&
		files=$(cd "$FIXTURES" && for g in work_orders/invalid/$c.md \
			work_orders/invalid/$c.part*.md work_orders/invalid/$c.gen; do
				if test -f "$g"; then echo "$g"; fi
			done) &&
		test -n "$files" && schema_ok $files
	'
done

for y in "$CFG"/*.yaml; do
	c=$(basename "$y" .yaml)
	if [ -f "$CFG/$c.expected" ]; then
		test_expect_success "invalid config $c: sluice check and the schema refuse it" '
			cp "$y" r/.system/config.yaml &&
			test_expect_failure_code 1 sluice -C r check >out 2>&1 &&
			said out "$CFG/$c.expected" &&
			schema_ok "config/$c.yaml"
		'
	else
		test_expect_success "valid config $c: sluice check and the schema accept it" '
			cp "$y" r/.system/config.yaml &&
			check_accepts r &&
			schema_ok "config/$c.yaml"
		'
	fi
done

# Rules without a fixture of their own: random cases from pools of values.
test_expect_success 'random work orders and configs: sluice check and the schemas agree' '
	test_repo rand && sluice -C rand init >/dev/null &&
	run_differential rand 300 &&
	test_grep "^300 of 300 random cases agree$" random.out
'

test_done
