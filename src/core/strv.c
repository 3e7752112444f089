/* NULL-terminated string arrays (sl_strv, core/config.h). */
#include "core/config.h"

#include <stdlib.h>
#include <string.h>

void sl_strv_free(sl_strv v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

size_t sl_strv_len(const sl_strv v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

int sl_strv_push(sl_strv *v, const char *s)
{
	size_t n = sl_strv_len(*v);
	char **nv, *copy = strdup(s);

	if (!copy || !(nv = realloc(*v, (n + 2) * sizeof(*nv)))) {
		free(copy);
		return -1;
	}
	nv[n] = copy;
	nv[n + 1] = NULL;
	*v = nv;
	return 0;
}

sl_strv sl_strv_copy(const char *const *v)
{
	size_t n = sl_strv_len((const sl_strv)v), i;
	sl_strv out = calloc(n + 1, sizeof(*out));

	for (i = 0; out && i < n; i++) {
		if (!(out[i] = strdup(v[i]))) {
			sl_strv_free(out);
			return NULL;
		}
	}
	return out;
}
