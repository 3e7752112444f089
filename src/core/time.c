#include "core/time.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/*
 * Tests only (tests/README.md): SLUICE_TEST_CLOCK_AHEAD, a duration ("90s",
 * "25h"), puts the wall clock that far ahead, so that a test sees what a
 * tick does hours later (a notification's backoff, its retry window)
 * without sleeping. Unset, or not a duration: the real clock.
 */
static int64_t clock_ahead_ms(void)
{
	const char *v = getenv("SLUICE_TEST_CLOCK_AHEAD");
	int64_t ms = 0;

	if (v && *v) {
		struct sl_err err = SL_ERR_INIT;

		if (sl_duration_parse(&ms, v, &err) != 0)
			ms = 0;
	}
	return ms;
}

int64_t sl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + clock_ahead_ms();
}

int64_t sl_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int sl_duration_parse(int64_t *out_ms, const char *text, struct sl_err *err)
{
	const char *p = text;
	char *end;
	long long n;
	int64_t unit = 1000;

	if (!text || !isdigit((unsigned char)*p))
		goto bad;
	errno = 0;
	n = strtoll(p, &end, 10);
	if (errno || n <= 0 || n > 10000000)
		goto bad;
	if (*end == 's')
		unit = 1000, end++;
	else if (*end == 'm')
		unit = 60 * 1000, end++;
	else if (*end == 'h')
		unit = 3600 * 1000, end++;
	else if (*end == 'd')
		unit = 24 * 3600 * 1000, end++;
	if (*end)
		goto bad;
	*out_ms = (int64_t)n * unit;
	return 0;
bad:
	return sl_err_set(err, SL_EINVALID,
			  "invalid duration '%s'; write a positive number with a unit: 90s, 30m, 2h, 7d",
			  text ? text : "");
}

void sl_duration_format(char *out, size_t n, int64_t ms)
{
	int64_t s = ms / 1000;

	if (ms < 0)
		ms = 0, s = 0;
	if (s >= 3600)
		snprintf(out, n, "%lldh%02lldm%02llds", (long long)(s / 3600),
			 (long long)(s % 3600 / 60), (long long)(s % 60));
	else if (s >= 60)
		snprintf(out, n, "%lldm%02llds", (long long)(s / 60), (long long)(s % 60));
	else
		snprintf(out, n, "%lld.%llds", (long long)s, (long long)(ms % 1000 / 100));
}

void sl_time_iso(char *out, size_t n, int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(out, n, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

void sl_sleep_ms(int64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (ms > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}
