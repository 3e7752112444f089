/* core/similar.c: the edit distance and "did you mean" for commands and config keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/similar.h"

static void test_distance(void **state)
{
	(void)state;
	assert_int_equal(sl_edit_distance("", ""), 0);
	assert_int_equal(sl_edit_distance("tick", "tick"), 0);
	assert_int_equal(sl_edit_distance("tikc", "tick"), 1); /* a swap is one edit */
	assert_int_equal(sl_edit_distance("tck", "tick"), 1);
	assert_int_equal(sl_edit_distance("ticks", "tick"), 1);
	assert_int_equal(sl_edit_distance("kitten", "sitting"), 3);
	assert_int_equal(sl_edit_distance("", "abc"), 3);
}

static void test_too_long(void **state)
{
	char big[200];

	(void)state;
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_true(sl_edit_distance(big, "a") > 64);
}

static void test_similar(void **state)
{
	char out[64];
	const char *cmds = "init,check,tick,run,queue,runs,show,status,merge-preview,";

	(void)state;
	assert_int_equal(sl_similar("tikc", cmds, out, sizeof(out)), 1);
	assert_string_equal(out, "tick");
	assert_int_equal(sl_similar("stauts", cmds, out, sizeof(out)), 1);
	assert_string_equal(out, "status");
	assert_int_equal(sl_similar("merge", cmds, out, sizeof(out)), 1); /* a prefix */
	assert_string_equal(out, "merge-preview");
	assert_int_equal(sl_similar("frobnicate", cmds, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	assert_int_equal(sl_similar("comand", "command, url, timeout, retry_for, tries", out,
				    sizeof(out)), 1);
	assert_string_equal(out, "command");
	/* a short word: one edit at most ("xyz" is three from "run") */
	assert_int_equal(sl_similar("xyz", cmds, out, sizeof(out)), 0);
	/* the closest wins: "runz" is one from "runs" and "run" */
	assert_int_equal(sl_similar("runz", cmds, out, sizeof(out)), 1);
	assert_string_equal(out, "run");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distance),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_similar),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
