/* core/url: a URL reduced to scheme://host[:port]/ and "…", never its secrets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/url.h"

static void safe_is(const char *url, const char *want)
{
	char out[SL_URL_SAFE_MAX];

	sl_url_safe(out, sizeof(out), url);
	assert_string_equal(out, want);
}

static void test_secrets_dropped(void **state)
{
	(void)state;
	safe_is("http://user:pass@127.0.0.1:8080/secret-path?key=SECRET",
		"http://127.0.0.1:8080/\xe2\x80\xa6");
	safe_is("https://hooks.example.com/services/T0/B0/XXXX", "https://hooks.example.com/\xe2\x80\xa6");
	safe_is("https://example.com?token=abc", "https://example.com/\xe2\x80\xa6");
	safe_is("https://example.com#frag", "https://example.com/\xe2\x80\xa6");
	safe_is("http://a@b@host/", "http://host/");
	safe_is("http://tok@[::1]:9/x", "http://[::1]:9/\xe2\x80\xa6");
}

static void test_plain(void **state)
{
	(void)state;
	safe_is("http://127.0.0.1:5000", "http://127.0.0.1:5000/");
	safe_is("http://127.0.0.1:5000/", "http://127.0.0.1:5000/");
	safe_is("ftp://u:p@example.com/secret", "ftp://example.com/\xe2\x80\xa6");
	safe_is(NULL, "");
}

static void test_not_a_url(void **state)
{
	(void)state;
	safe_is("user:pass@host/secret", "\xe2\x80\xa6");
	safe_is("secret", "\xe2\x80\xa6");
	safe_is("http://", "\xe2\x80\xa6");
	safe_is("http://ho\nst/secret", "\xe2\x80\xa6");
	safe_is("http://host with space/", "\xe2\x80\xa6");
	safe_is("ht\x1btp://host/", "\xe2\x80\xa6");
}

static void test_small_buffer(void **state)
{
	char out[8];

	(void)state;
	sl_url_safe(out, sizeof(out), "http://user:pass@example.com/");
	assert_string_equal(out, "http://");
	sl_url_safe(out, 0, "http://x/");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_secrets_dropped),
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_not_a_url),
		cmocka_unit_test(test_small_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
