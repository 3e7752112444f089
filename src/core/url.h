#ifndef SL_CORE_URL_H
#define SL_CORE_URL_H
/*
 * A URL as it may be shown: in a message, a log line, a page, a file. A URL
 * from the configuration (notify.url, reviewer.url) may carry secrets: a
 * user and password, a token in its path or query. Only its scheme, host and
 * port are shown (docs/RELIABILITY.md, "Trust, round 3: notifications").
 */
#include <stddef.h>

/* The longest safe form sl_url_safe() writes, its NUL included. */
#define SL_URL_SAFE_MAX 300

/*
 * Write into out (n bytes, SL_URL_SAFE_MAX is enough for any URL) what of
 * `url` is safe to show: "scheme://host[:port]/", then "…" when the URL
 * goes on past that "/" (a path, a query or a fragment), never the
 * user:password@ part. A text that is no scheme://host URL, or a host
 * too long, is shown as "…" alone: nothing of it. Control bytes never
 * appear. NULL is "".
 */
void sl_url_safe(char *out, size_t n, const char *url);

#endif
