#include "core/id.h"
#include "core/err.h"
#include "core/time.h"

#include <string.h>
#include <sys/random.h>
#include <time.h>

static const char alphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";

int sl_id_new(char *out)
{
	unsigned char rnd[SL_ID_SHORT_LEN];
	int64_t ms = sl_now_ms();
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	size_t i;

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return SL_ERROR;
	gmtime_r(&t, &tm);
	strftime(out, 17, "%Y%m%d-%H%M%S-", &tm);
	for (i = 0; i < SL_ID_SHORT_LEN; i++)
		out[16 + i] = alphabet[rnd[i] & 31];
	out[SL_ID_LEN] = '\0';
	return 0;
}

int sl_id_valid(const char *s)
{
	size_t i;

	if (!s || strlen(s) != SL_ID_LEN || s[8] != '-' || s[15] != '-')
		return 0;
	for (i = 0; i < SL_ID_LEN; i++) {
		if (i == 8 || i == 15)
			continue;
		if (i < 15 && (s[i] < '0' || s[i] > '9'))
			return 0;
		if (i > 15 && !strchr(alphabet, s[i]))
			return 0;
	}
	return 1;
}

const char *sl_id_short(const char *id)
{
	return sl_id_valid(id) ? id + 16 : NULL;
}
