/* A URL reduced to what may be shown (core/url.h). */
#include "core/url.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026 */
#define SCHEME_MAX 16
#define HOST_MAX 255

/* The scheme's length: letters, digits, '+', '-', '.' before "://"; 0 when there is none. */
static size_t scheme_len(const char *url)
{
	size_t i;

	if (!isalpha((unsigned char)url[0]))
		return 0;
	for (i = 1; i <= SCHEME_MAX && url[i]; i++) {
		unsigned char c = (unsigned char)url[i];

		if (c == ':')
			return strncmp(url + i, "://", 3) ? 0 : i;
		if (!isalnum(c) && c != '+' && c != '-' && c != '.')
			return 0;
	}
	return 0;
}

/* 1 when c may be shown in a host[:port]: letters, digits and -.:[]_ (IPv6 in brackets). */
static int host_char(unsigned char c)
{
	return isalnum(c) || c == '-' || c == '.' || c == ':' || c == '[' || c == ']' || c == '_';
}

void sl_url_safe(char *out, size_t n, const char *url)
{
	const char *auth, *end, *at, *host;
	size_t slen;

	if (!n)
		return;
	out[0] = '\0';
	if (!url)
		return;
	if (!(slen = scheme_len(url))) {
		snprintf(out, n, ELLIPSIS);
		return;
	}
	auth = url + slen + 3;
	end = auth + strcspn(auth, "/?#");
	/* user:password@ ends at the authority's last '@' */
	for (host = auth, at = auth; at < end; at++)
		if (*at == '@')
			host = at + 1;
	for (at = host; at < end && host_char((unsigned char)*at); at++)
		;
	if (at != end || end == host || end - host > HOST_MAX) {
		snprintf(out, n, ELLIPSIS);
		return;
	}
	snprintf(out, n, "%.*s://%.*s/%s", (int)slen, url, (int)(end - host), host,
		 *end && strcmp(end, "/") ? ELLIPSIS : "");
}
