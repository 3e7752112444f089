/* core/utf8: the one decoder behind every check, cut and escape of text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/utf8.h"

static size_t seq(const char *s, unsigned long *cp)
{
	return sl_utf8_seq((const unsigned char *)s, strlen(s) ? strlen(s) : 1, cp);
}

static void test_valid(void **state)
{
	unsigned long cp = 0;

	(void)state;
	assert_int_equal(seq("a", &cp), 1);
	assert_int_equal(cp, 'a');
	assert_int_equal(seq("", &cp), 1); /* NUL */
	assert_int_equal(cp, 0);
	assert_int_equal(seq("\xc3\xa9", &cp), 2); /* é */
	assert_int_equal(cp, 0xe9);
	assert_int_equal(seq("\xe2\x80\xae", &cp), 3); /* U+202E */
	assert_int_equal(cp, 0x202e);
	assert_int_equal(seq("\xf0\x9f\x98\x80", &cp), 4); /* U+1F600 */
	assert_int_equal(cp, 0x1f600);
	assert_int_equal(seq("\xf4\x8f\xbf\xbf", NULL), 4); /* U+10FFFF, no cp wanted */
}

static void test_invalid(void **state)
{
	unsigned long cp = 77;

	(void)state;
	assert_int_equal(seq("\x80", &cp), 0);                  /* stray continuation */
	assert_int_equal(seq("\xc0\xaf", &cp), 0);              /* overlong '/' */
	assert_int_equal(seq("\xe0\x80\xaf", &cp), 0);          /* overlong, 3 bytes */
	assert_int_equal(seq("\xf0\x80\x80\xaf", &cp), 0);      /* overlong, 4 bytes */
	assert_int_equal(seq("\xed\xa0\x80", &cp), 0);          /* surrogate U+D800 */
	assert_int_equal(seq("\xf4\x90\x80\x80", &cp), 0);      /* past U+10FFFF */
	assert_int_equal(seq("\xf5\x80\x80\x80", &cp), 0);      /* lead byte out of range */
	assert_int_equal(seq("\xc3", &cp), 0);                  /* cut short by the end */
	assert_int_equal(seq("\xe2\x80x", &cp), 0);             /* cut short by a letter */
	assert_int_equal(cp, 77);                               /* untouched on failure */
	/* n counts: a valid sequence past the bytes left is cut short */
	assert_int_equal(sl_utf8_seq((const unsigned char *)"\xc3\xa9", 1, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_invalid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
