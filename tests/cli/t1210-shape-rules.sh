#!/bin/sh
# The rules scripts/shape.py gained with issue 27, each shown able to fail on
# a copy of the tree, found at its file and line: a step file calling what
# another step file defines (steps), a source comment citing the brief
# instead of docs/ (design), the landing trailer's name spelled outside
# merge/merge.h (trailer), a call of what core/banned.h bans (banned).
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || test_skip_all "no python3"

SHAPE="$SLUICE_SOURCE_DIR/scripts/shape.py"

# Append to FILE a function NAME whose one body line is LINE; prints the
# line number of that body line.
add_function() { # FILE NAME LINE
	_at=$(($(wc -l <"$1") + 4))
	printf '\nint %s(void)\n{\n%s\n}\n' "$2" "$3" >>"$1"
	echo "$_at"
}

test_expect_success 'the tree as it is passes every rule' '
	python3 "$SHAPE" "$SLUICE_SOURCE_DIR" >out 2>&1 &&
	test_grep "^shape: 0 violations$" out
'

test_expect_success 'a step file calling what another step file defines fails' '
	copy_tree t &&
	at=$(add_function t/src/runner/step_review.c shape_knot "	return step_build(NULL, NULL);") &&
	test_expect_failure_code 1 python3 "$SHAPE" t >out &&
	test_grep "^src/runner/step_review.c:$at: a step calls step_build() of the step file src/runner/step_build.c$" out
'

test_expect_success 'a kernel function called by a step is no knot' '
	copy_tree t &&
	add_function t/src/runner/step_review.c shape_kernel "	return step__reload(NULL, NULL);" >/dev/null &&
	python3 "$SHAPE" t >out 2>&1 &&
	test_grep "^shape: 0 violations$" out
'

test_expect_success 'a comment citing DESIGN.md fails, in src/ and in schema/' '
	copy_tree t &&
	at=$(add_function t/src/core/err.c shape_cite "	return 0; /* DESIGN.md section 5 */") &&
	echo "-- see DESIGN.md 7b" >>t/schema/db/001_init.sql &&
	sql=$(wc -l <t/schema/db/001_init.sql) &&
	test_expect_failure_code 1 python3 "$SHAPE" t >out &&
	test_grep "^src/core/err.c:$at: cites DESIGN.md" out &&
	test_grep "^schema/db/001_init.sql:$sql: cites DESIGN.md" out
'

test_expect_success 'the trailer spelled outside merge/merge.h fails; in a comment or a message it does not' '
	copy_tree t &&
	at=$(add_function t/src/artifact/audit.c shape_trailer "	return (int)sizeof(\"Sluice-Run\");") &&
	add_function t/src/artifact/audit.c shape_words "	return (int)sizeof(\"carries Sluice-Run: %s\"); /* Sluice-Run */" >/dev/null &&
	test_expect_failure_code 1 python3 "$SHAPE" t >out &&
	test_grep "^src/artifact/audit.c:$at: spells the trailer \"Sluice-Run\"" out &&
	test "$(grep -c "spells the trailer" out)" = 1
'

test_expect_success 'a banned call fails with its name; snprintf, asprintf, gmtime_r do not' '
	copy_tree t &&
	at=$(add_function t/src/core/err.c shape_banned "	char b[8]; sprintf(b, \"x\"); return atoi(b);") &&
	add_function t/src/core/err.c shape_fine "	char b[8], *p = 0; time_t t = 0; struct tm tm; gmtime_r(&t, &tm); free(p); return snprintf(b, 8, \"x\") + asprintf(&p, \"x\");" >/dev/null &&
	test_expect_failure_code 1 python3 "$SHAPE" t >out &&
	test_grep "^src/core/err.c:$at: calls sprintf(), which core/banned.h bans" out &&
	test_grep "^src/core/err.c:$at: calls atoi(), which core/banned.h bans" out &&
	test "$(grep -c "banned.h bans" out)" = 2
'

test_done
