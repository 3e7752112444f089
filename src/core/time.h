#ifndef SL_CORE_TIME_H
#define SL_CORE_TIME_H
#include <stdint.h>
#include <stddef.h>
#include "core/err.h"

/*
 * Wall-clock milliseconds since the epoch; for tests only, that much ahead
 * as the environment's SLUICE_TEST_CLOCK_AHEAD says (a duration, "25h").
 */
int64_t sl_now_ms(void);

/* Monotonic milliseconds, for timeouts and durations. */
int64_t sl_mono_ms(void);

/* Sleep `ms` milliseconds (a signal does not cut it short); nothing for ms <= 0. */
void sl_sleep_ms(int64_t ms);

/*
 * Parse a duration: a positive integer with a unit s, m or h ("90s", "30m",
 * "2h"), or a bare integer of seconds. Writes milliseconds to *out_ms.
 * SL_EINVALID with a message naming the text otherwise.
 */
int sl_duration_parse(int64_t *out_ms, const char *text, struct sl_err *err);

/* Format ms as "1h02m03s", "4m05s", "6.2s" into out. */
void sl_duration_format(char *out, size_t n, int64_t ms);

/* Format a wall-clock time as UTC ISO 8601 with milliseconds: 2026-11-21T23:46:56.123Z. */
void sl_time_iso(char *out, size_t n, int64_t ms);

/*
 * An ISO 8601 time with its zone (docs/sluice.1, sluice freeze --until):
 * "2026-11-28T18:00Z", "2026-11-28T18:00:30+01:00", "...-0500", a space
 * for the T. Milliseconds since the epoch into *out_ms. SL_EINVALID, naming
 * the text and what is refused (no zone, a date alone, a duration), otherwise.
 */
int sl_time_parse_iso(int64_t *out_ms, const char *text, struct sl_err *err);

/*
 * 1 when `tz` names a time zone of the system's database (TZDIR or
 * /usr/share/zoneinfo: "Europe/Berlin", "UTC"), as a safe relative name.
 */
int sl_tz_known(const char *tz);

/*
 * The day of the week (0 Sunday .. 6 Saturday) and the minute of the day
 * (0 .. 1439) of `ms` in time zone `tz` (NULL: UTC). The zone's offset is
 * kept per quarter hour; finding a new one sets TZ for the call and puts it
 * back, under a lock (a thread reading local time elsewhere meanwhile could
 * see the other zone: sluice reads local time nowhere else).
 */
int sl_time_local(int64_t ms, const char *tz, int *wday, int *minute);

#endif
