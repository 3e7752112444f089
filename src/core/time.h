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

#endif
