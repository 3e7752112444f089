#include "core/time.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* n digits at *p into *v (p moved on); -1 when they are not there. */
static int digits(const char **p, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++, (*p)++) {
		if (!isdigit((unsigned char)**p))
			return -1;
		*v = *v * 10 + (**p - '0');
	}
	return 0;
}

/* The zone at p ("Z", "+01:00", "-0500"), in minutes east of UTC; -1 when none or bad. */
static int zone(const char *p, int *east)
{
	int sign, h, m = 0;

	if ((p[0] == 'Z' || p[0] == 'z') && !p[1])
		return *east = 0, 0;
	if (*p != '+' && *p != '-')
		return -1;
	sign = *p++ == '-' ? -1 : 1;
	if (digits(&p, 2, &h) != 0 || h > 23)
		return -1;
	if (*p == ':')
		p++;
	if (*p && (digits(&p, 2, &m) != 0 || m > 59))
		return -1;
	if (*p)
		return -1;
	*east = sign * (h * 60 + m);
	return 0;
}

/* Seconds since the epoch of a UTC calendar time; -1 when the date does not exist (2026-02-29). */
static int64_t utc_seconds(int y, int mo, int d, int h, int mi, int s)
{
	struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d,
			 .tm_hour = h, .tm_min = mi, .tm_sec = s };
	struct tm back;
	time_t t = timegm(&tm);

	if (!gmtime_r(&t, &back) || back.tm_year != y - 1900 || back.tm_mon != mo - 1 ||
	    back.tm_mday != d)
		return -1;
	return (int64_t)t;
}

int sl_time_parse_iso(int64_t *out_ms, const char *text, struct sl_err *err)
{
	const char *p = text;
	int y, mo, d, h, mi, s = 0, east, ms = 0;
	int64_t secs;

	if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' ||
	    digits(&p, 2, &d) || mo < 1 || mo > 12 || d < 1 || d > 31 ||
	    (*p != 'T' && *p != 't' && *p != ' ') || (p++, digits(&p, 2, &h)) || *p++ != ':' ||
	    digits(&p, 2, &mi) || h > 23 || mi > 59)
		goto bad;
	if (*p == ':' && (p++, digits(&p, 2, &s) || s > 59))
		goto bad;
	if (*p == '.' || *p == ',') {
		int k = 0;
		for (p++; isdigit((unsigned char)*p); p++, k++)
			if (k < 3)
				ms = ms * 10 + (*p - '0');
		for (; k < 3; k++)
			ms *= 10;
	}
	if (zone(p, &east) != 0 || (secs = utc_seconds(y, mo, d, h, mi, s)) < 0)
		goto bad;
	*out_ms = (secs - east * 60) * 1000 + ms;
	return 0;
bad:
	return sl_err_set(err, SL_EINVALID, "'%s' is not an ISO 8601 time with a zone; write "
			  "e.g. 2026-11-28T18:00Z or 2026-11-28T18:00+01:00 (a time without a "
			  "zone, a date alone, a duration or a zone name is refused)", text);
}

int sl_tz_known(const char *tz)
{
	const char *dir = getenv("TZDIR");
	char path[1024];

	/* sl_time_local() keeps names shorter than 64 bytes (every tz database name is) */
	if (!tz || !*tz || strlen(tz) >= 64 || *tz == '/' || *tz == '.' || strstr(tz, "..") ||
	    strspn(tz, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/_+-") !=
		    strlen(tz))
		return 0;
	if (!strcmp(tz, "UTC"))
		return 1;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : "/usr/share/zoneinfo",
			     tz) >= sizeof(path))
		return 0;
	return access(path, R_OK) == 0;
}

/*
 * A zone's offset from UTC for one quarter hour of UTC: every offset and
 * every change of one in today's zones falls on a quarter hour, so the
 * offset found for one instant holds for its whole quarter. The merge
 * train asks for every window on every look (each 100 ms), and finding an
 * offset means setting TZ and reading the zone's file; with the cache
 * that happens once a quarter hour per zone, under a lock.
 */
#define TZ_QUARTER_S 900
#define TZ_CACHE 8

static struct {
	char tz[64];
	int64_t quarter;
	long off;
} tz_cache[TZ_CACHE];
static size_t tz_next;
static pthread_mutex_t tz_lock = PTHREAD_MUTEX_INITIALIZER;

/* Under tz_lock: the offset of `zone` at `t`, TZ set for the call and put back. */
static int zone_offset(time_t t, const char *zone, long *off)
{
	const char *old = getenv("TZ");
	char *keep = old ? strdup(old) : NULL;
	struct tm tm;
	int ok;

	if (old && !keep)
		return -1;
	setenv("TZ", zone, 1);
	tzset();
	ok = localtime_r(&t, &tm) != NULL;
	if (keep)
		setenv("TZ", keep, 1);
	else
		unsetenv("TZ");
	tzset();
	free(keep);
	if (!ok)
		return -1;
	*off = tm.tm_gmtoff;
	return 0;
}

int sl_time_local(int64_t ms, const char *tz, int *wday, int *minute)
{
	const char *zone = tz && *tz ? tz : "UTC";
	time_t t = (time_t)(ms / 1000), local;
	int64_t quarter = (int64_t)t / TZ_QUARTER_S - ((int64_t)t % TZ_QUARTER_S < 0);
	struct tm tm;
	long off = 0;
	size_t i;
	int found = 0;

	if (strlen(zone) >= sizeof(tz_cache[0].tz))
		return -1;
	pthread_mutex_lock(&tz_lock);
	for (i = 0; i < TZ_CACHE && !found; i++)
		if (tz_cache[i].quarter == quarter && !strcmp(tz_cache[i].tz, zone)) {
			off = tz_cache[i].off;
			found = 1;
		}
	if (!found && zone_offset(t, zone, &off) == 0) {
		i = tz_next++ % TZ_CACHE;
		snprintf(tz_cache[i].tz, sizeof(tz_cache[i].tz), "%s", zone);
		tz_cache[i].quarter = quarter;
		tz_cache[i].off = off;
		found = 1;
	}
	pthread_mutex_unlock(&tz_lock);
	local = t + off;
	if (!found || !gmtime_r(&local, &tm))
		return -1;
	*wday = tm.tm_wday;
	*minute = tm.tm_hour * 60 + tm.tm_min;
	return 0;
}
