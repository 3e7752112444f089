#!/bin/sh
# The shape of src/ (issue 11): module shares, function lengths, includes,
# the dispatcher and its steps, run-state literals, -Wformat-truncation;
# scripts/shape.py checks them. Then, on a copy of the tree, that each rule
# can fail: one violation put in at a time, found at its file and line.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || test_skip_all "no python3"

SHAPE="$SLUICE_SOURCE_DIR/scripts/shape.py"

# Append a function NAME with N body lines to FILE; prints the line of its
# signature.
add_function() { # FILE NAME N
	_at=$(($(wc -l <"$1") + 2))
	{
		echo
		echo "int $2(int x)"
		echo "{"
		_i=0
		while [ $_i -lt "$3" ]; do echo "	x += $_i;"; _i=$((_i + 1)); done
		echo "}"
	} >>"$1"
	echo "$_at"
}

test_expect_success 'src/ has the shape issue 11 asks for' '
	{ python3 "$SHAPE" "$SLUICE_SOURCE_DIR" >out 2>&1 || true; } &&
	cat out &&
	test_grep "^module  *files  *lines  *share$" out &&
	test_grep "^runner  *[0-9]" out &&
	test_grep "^shape: 0 violations$" out
'

test_expect_success 'a function of 61 lines fails, one of 60 does not' '
	copy_tree t &&
	at=$(add_function t/src/core/err.c shape_too_long 61) &&
	add_function t/src/core/err.c shape_just_right 60 >/dev/null &&
	test_expect_failure_code 1 python3 "$SHAPE" t >out &&
	test_grep "^src/core/err.c:$at: function shape_too_long() has 61 lines, more than 60$" out &&
	test_grep -v "shape_just_right" out
'

test_expect_success 'a signature over several lines is named by its first line' '
	copy_tree t &&
	at=$(($(wc -l <t/src/queue/parse.c) + 2)) &&
	{
		echo && echo "static int" && echo "shape_split(const char *a," &&
		echo "	    int b)" && echo "{" && seq 1 70 | sed "s/^/	b += /; s/$/;/" && echo "}"
	} >>t/src/queue/parse.c &&
	test_expect_failure_code 1 python3 "$SHAPE" t >out &&
	test_grep "^src/queue/parse.c:$at: function shape_split() has 70 lines" out
'

test_expect_success 'a module over a quarter of src/ fails' '
	copy_tree t &&
	total=$(cat t/src/*/*.[ch] | wc -l) &&
	seq 1 "$total" | sed "s/^/int shape_filler_/; s/$/;/" >t/src/reviewer/filler.c &&
	test_expect_failure_code 1 python3 "$SHAPE" t >out &&
	test_grep "^src/reviewer/: [0-9]* of src/.s [0-9]* lines (.*%), more than 25%$" out
'

test_expect_success 'an include against the module order fails' '
	copy_tree t &&
	at=$(($(wc -l <t/src/store/runs.c) + 1)) &&
	echo "#include \"runner/runner.h\"" >>t/src/store/runs.c &&
	test_expect_failure_code 1 python3 "$SHAPE" t >out &&
	test_grep "^src/store/runs.c:$at: module store includes runner/runner.h, but does not link sl_runner" out
'

test_expect_success 'another module'"'"'s _int.h fails, even for the CLI' '
	copy_tree t &&
	at=$(($(wc -l <t/src/cli/cmd_show.c) + 1)) &&
	echo "#include \"runner/runner_int.h\"" >>t/src/cli/cmd_show.c &&
	test_expect_failure_code 1 python3 "$SHAPE" t >out &&
	test_grep "^src/cli/cmd_show.c:$at: cli includes runner/runner_int.h, module runner.s inside header$" out
'

test_expect_success 'a cycle of headers fails, and so does a second public header' '
	copy_tree t &&
	printf "#include \"merge/merge_int.h\"\n" >>t/src/merge/merge.h &&
	printf "#include \"merge/merge.h\"\n" >t/src/merge/merge_int.h &&
	printf "int x;\n" >t/src/merge/extra.h &&
	test_expect_failure_code 1 python3 "$SHAPE" t >out &&
	test_grep "headers include each other: src/merge/merge.h -> src/merge/merge_int.h -> src/merge/merge.h$" out &&
	test_grep "^src/merge/extra.h: module merge has one public header" out
'

test_expect_success 'a step calling its dispatcher fails' '
	copy_tree t &&
	at=$(add_function t/src/runner/step_review.c shape_back 1) &&
	sed -i "$((at + 2))s/.*/	return runner_advance(NULL, NULL, NULL);/" t/src/runner/step_review.c &&
	test_expect_failure_code 1 python3 "$SHAPE" t >out &&
	test_grep "^src/runner/step_review.c:$((at + 2)): a step calls runner_advance() of the dispatcher src/runner/advance.c$" out
'

test_expect_success 'a run-state literal outside the state table fails' '
	copy_tree t &&
	at=$(($(wc -l <t/src/queue/parse.c) + 1)) &&
	{
		echo "static const char *shape_s = \"awaiting_review\";" &&
		echo "static const char *shape_set = \",queued,merging,\";" &&
		echo "static const char *shape_sql = \"SELECT 1 WHERE state = '"'"'gating'"'"'\";" &&
		echo "static const char *shape_word = \"gate failed\"; /* \"merged\" */" &&
		echo "static const char *shape_key = \"merged\"; /* not a run state: a key */" &&
		echo "/* keys, not a run state */" &&
		echo "static const char *shape_keys[] = { \"merged\"," &&
		echo "	\"failed\" };" &&
		echo "static const char *shape_after = \"failed\";"
	} >>t/src/queue/parse.c &&
	test_expect_failure_code 1 python3 "$SHAPE" t >out &&
	test_grep "^src/queue/parse.c:$at: run state \"awaiting_review\" in a string literal" out &&
	test_grep "^src/queue/parse.c:$((at + 1)): run state \",queued,merging,\"" out &&
	test_grep "^src/queue/parse.c:$((at + 2)): run state .gating." out &&
	for n in 3 4 5 6 7; do
		test_grep -v "^src/queue/parse.c:$((at + n)):" out || return 1
	done &&
	test_grep "^src/queue/parse.c:$((at + 8)): run state \"failed\"" out &&
	echo "const char *s = \"queued\";" >>t/src/store/state.c &&
	{ python3 "$SHAPE" t >out2 || true; } &&
	test_grep -v "^src/store/state.c" out2
'

test_expect_success 'an unchecked snprintf into a path buffer is found' '
	copy_tree t &&
	at=$(($(wc -l <t/src/core/fs.c) + 6)) &&
	cat >>t/src/core/fs.c <<-\EOF &&

	int shape_paths(const char *a);
	int shape_paths(const char *a)
	{
		char p[PATH_MAX], q[PATH_MAX], r[PATH_MAX * 2];
		snprintf(p, sizeof(p), "%s/x", a);
		if (snprintf(q, sizeof(q), "%s/y", a) >= (int)sizeof(q))
			return -1;
		snprintf(q, sizeof(q), "/proc/self/exe");
		snprintf(r, sizeof(r), "%s/z", a);
		if (strlen(r) >= PATH_MAX)
			return -1;
		return p[0] + q[0] + r[0];
	}
	EOF
	test_expect_failure_code 1 python3 "$SHAPE" t >out &&
	test_grep "^src/core/fs.c:$at: snprintf into the path buffer p with no check" out &&
	test "$(grep -c "^src/core/fs.c:" out)" = 1
'

test_expect_success '-Wno-format-truncation in CMakeLists.txt fails' '
	copy_tree t &&
	at=$(($(wc -l <t/CMakeLists.txt) + 1)) &&
	echo "add_compile_options(-Wno-format-truncation)" >>t/CMakeLists.txt &&
	test_expect_failure_code 1 python3 "$SHAPE" t >out &&
	test_grep "^CMakeLists.txt:$at: -Wno-format-truncation" out
'

test_done
