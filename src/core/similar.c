/* "Did you mean ...?" for mistyped commands and config keys (core/similar.h). */
#include "core/similar.h"

#include <stdio.h>
#include <string.h>

#define SIMILAR_MAX 64

int sl_edit_distance(const char *a, const char *b)
{
	int d[SIMILAR_MAX + 1][SIMILAR_MAX + 1];
	size_t la = strlen(a), lb = strlen(b), i, j;

	if (la > SIMILAR_MAX || lb > SIMILAR_MAX)
		return SIMILAR_MAX * 2;
	for (i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

/* How many edits a word of this length may be from what was meant. */
static int allowed(size_t len)
{
	return len <= 4 ? 1 : len <= 8 ? 2 : 3;
}

int sl_similar(const char *word, const char *known, char *out, size_t n)
{
	const char *p = known;
	int best = -1;

	if (n)
		out[0] = '\0';
	while (p && *p) {
		char name[SIMILAR_MAX + 1];
		size_t len = strcspn(p, ", ");
		int dist;
		if (len && len <= SIMILAR_MAX) {
			memcpy(name, p, len);
			name[len] = '\0';
			dist = sl_edit_distance(word, name);
			if (*word && (!strncmp(word, name, strlen(word)) ||
				      !strncmp(word, name, len)) && strlen(word) >= 3)
				dist = dist < 1 ? dist : 1;
			if (dist <= allowed(strlen(word)) && (best < 0 || dist < best) && n) {
				best = dist;
				snprintf(out, n, "%s", name);
			}
		}
		p += len;
		p += strspn(p, ", ");
	}
	return best >= 0;
}
