/*
 * sl_time_parse_iso() (core/time.h; sluice freeze --until): ISO 8601 with
 * its zone, to the millisecond; every other shape refused with a message
 * that names it. sl_time_local(): the day and minute in a named zone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/time.h"

static void test_good(void **state)
{
	static const struct {
		const char *text;
		int64_t ms;
	} cases[] = {
		{ "1970-01-01T00:00Z", 0 },
		{ "2026-11-28T18:00Z", 1795888800000LL },
		{ "2026-11-28T19:00+01:00", 1795888800000LL },
		{ "2026-11-28T13:00-0500", 1795888800000LL },
		{ "2026-11-28 18:00:30z", 1795888830000LL },
		{ "2026-11-28T18:00:30.25Z", 1795888830250LL },
		{ "2024-02-29T00:00Z", 1709164800000LL },
		{ "2026-11-28T18:00+05", 1795870800000LL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sl_err err = SL_ERR_INIT;
		int64_t ms = -1;
		if (sl_time_parse_iso(&ms, cases[i].text, &err) != 0)
			fail_msg("%s: %s", cases[i].text, err.msg);
		if (ms != cases[i].ms)
			fail_msg("%s: %lld, want %lld", cases[i].text, (long long)ms,
				 (long long)cases[i].ms);
	}
}

static void test_bad(void **state)
{
	static const char *const bad[] = {
		"", "2026-11-28", "2026-11-28T18:00", "18:00Z", "2h", "now", "2026-11-28T18Z",
		"2026-13-01T00:00Z", "2026-11-31T00:00Z", "2026-11-28T24:00Z", "2026-11-28T18:60Z",
		"2026-11-28T18:00+1", "2026-11-28T18:00+24:00", "2026-11-28T18:00Europe/Berlin",
		"2026-11-28T18:00Zx", "+2026-11-28T18:00Z", "2026-1-28T18:00Z", "2026-02-29T00:00Z",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sl_err err = SL_ERR_INIT;
		int64_t ms = 0;
		if (sl_time_parse_iso(&ms, bad[i], &err) != SL_EINVALID)
			fail_msg("'%s' was accepted (%lld)", bad[i], (long long)ms);
		if (!strstr(err.msg, "is not an ISO 8601 time with a zone"))
			fail_msg("'%s': %s", bad[i], err.msg);
	}
}


/*
 * A zone file whose name is 64 bytes or more is not a zone sl_time_local()
 * can keep: sl_tz_known() refuses it, so that `sluice check` says so
 * instead of every look failing later (TZDIR names a folder of our own).
 */
static void long_zone_names(void)
{
	char dir[] = "/tmp/sluice-tzdir-XXXXXX", path[256], name[80];
	const char *old = getenv("TZDIR");
	char *saved = old ? strdup(old) : NULL;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	memset(name, 'Z', 70);
	name[70] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	fclose(f);
	snprintf(path, sizeof(path), "%s/Short", dir);
	assert_non_null(f = fopen(path, "w"));
	fclose(f);
	setenv("TZDIR", dir, 1);
	assert_int_equal(sl_tz_known("Short"), 1);
	assert_int_equal(sl_tz_known(name), 0);
	if (saved)
		setenv("TZDIR", saved, 1);
	else
		unsetenv("TZDIR");
	free(saved);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	rmdir(dir);
}

static void test_local(void **state)
{
	int wday = -1, minute = -1;

	(void)state;
	/* 2026-11-28T18:00Z is a Saturday: 19:00 in Berlin (CET), 18:00 in UTC */
	assert_int_equal(sl_time_local(1795888800000LL, "UTC", &wday, &minute), 0);
	assert_int_equal(wday, 6);
	assert_int_equal(minute, 18 * 60);
	if (sl_tz_known("Europe/Berlin")) {
		assert_int_equal(sl_time_local(1795888800000LL, "Europe/Berlin", &wday, &minute), 0);
		assert_int_equal(wday, 6);
		assert_int_equal(minute, 19 * 60);
		/* 23:30Z is 00:30 on Sunday in Berlin */
		assert_int_equal(sl_time_local(1795908600000LL, "Europe/Berlin", &wday, &minute), 0);
		assert_int_equal(wday, 0);
		assert_int_equal(minute, 30);
	}
	assert_int_equal(sl_tz_known("UTC"), 1);
	assert_int_equal(sl_tz_known("../etc/passwd"), 0);
	assert_int_equal(sl_tz_known("/etc/localtime"), 0);
	assert_int_equal(sl_tz_known("Mars/Olympus"), 0);
	assert_int_equal(sl_tz_known(""), 0);
	long_zone_names();
}

/* What sl_time_local() must say, found the slow way: TZ set, localtime_r. */
static void oracle(time_t t, const char *zone, int *wday, int *minute)
{
	struct tm tm;

	setenv("TZ", zone, 1);
	tzset();
	assert_non_null(localtime_r(&t, &tm));
	unsetenv("TZ");
	tzset();
	*wday = tm.tm_wday;
	*minute = tm.tm_hour * 60 + tm.tm_min;
}

/*
 * The offset kept per quarter hour: right on both sides of a change of
 * daylight saving time (2026-03-29T01:00Z in Berlin: 01:59 CET, then 03:00
 * CEST), asked in any order, and equal to localtime_r every 59 minutes of
 * 2026 in zones of whole, half and three-quarter hours.
 */
static void test_local_cached(void **state)
{
	const char *zones[] = {"Europe/Berlin", "America/New_York", "Asia/Kathmandu",
			       "Australia/Adelaide", "UTC"};
	int wday, minute, want_wday, want_minute;
	int64_t t;
	size_t z;

	(void)state;
	if (!sl_tz_known("Europe/Berlin"))
		skip();
	assert_int_equal(sl_time_local(1774746000000LL, "Europe/Berlin", &wday, &minute), 0);
	assert_int_equal(minute, 3 * 60);
	assert_int_equal(sl_time_local(1774745999000LL, "Europe/Berlin", &wday, &minute), 0);
	assert_int_equal(minute, 1 * 60 + 59);
	assert_int_equal(sl_time_local(1774746000000LL, "Europe/Berlin", &wday, &minute), 0);
	assert_int_equal(minute, 3 * 60);
	assert_int_equal(wday, 0);
	for (z = 0; z < sizeof(zones) / sizeof(zones[0]); z++) {
		if (!sl_tz_known(zones[z]))
			continue;
		for (t = 1767225600; t < 1767225600 + 366 * 86400; t += 59 * 60) {
			oracle((time_t)t, zones[z], &want_wday, &want_minute);
			assert_int_equal(sl_time_local(t * 1000, zones[z], &wday, &minute), 0);
			if (wday != want_wday || minute != want_minute)
				fail_msg("%s at %lld: %d/%d, localtime_r says %d/%d", zones[z],
					 (long long)t, wday, minute, want_wday, want_minute);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_local),
		cmocka_unit_test(test_local_cached),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
