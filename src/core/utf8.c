#include "core/utf8.h"

#include <string.h>

size_t sl_utf8_seq(const unsigned char *s, size_t n, unsigned long *cp)
{
	unsigned long c;
	size_t len, i;

	if (s[0] < 0x80)
		len = 1, c = s[0];
	else if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, c = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (len == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	if (cp)
		*cp = c;
	return len;
}

int sl_utf8_hidden(unsigned long cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

void sl_utf8_drop_cut(char *s)
{
	size_t n = strlen(s), k = 0, want;
	unsigned char lead;

	while (k < n && k < 3 && ((unsigned char)s[n - 1 - k] & 0xc0) == 0x80)
		k++;
	if (k == n)
		return;
	lead = (unsigned char)s[n - 1 - k];
	want = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
	if (want > k + 1)
		s[n - 1 - k] = '\0';
}
