/* merge_paths: a sorted list of unique repository paths. */
#include "merge/merge.h"

#include <stdlib.h>
#include <string.h>

/* The index where `path` is or would go; *found set when it is there. */
static size_t find(const struct merge_paths *p, const char *path, int *found)
{
	size_t lo = 0, hi = p->n;

	*found = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(p->v[mid], path);

		if (!c) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int grow(struct merge_paths *p)
{
	size_t cap;
	char **v;

	if (p->n < p->cap)
		return 0;
	cap = p->cap ? p->cap * 2 : 8;
	v = realloc(p->v, cap * sizeof(*v));
	if (!v)
		return SL_ERROR;
	p->v = v;
	p->cap = cap;
	return 0;
}

int merge_paths_add(struct merge_paths *p, const char *path)
{
	int found;
	size_t at = find(p, path, &found);
	char *copy;

	if (found)
		return 0;
	if (grow(p) || !(copy = strdup(path)))
		return SL_ERROR;
	memmove(p->v + at + 1, p->v + at, (p->n - at) * sizeof(*p->v));
	p->v[at] = copy;
	p->n++;
	return 0;
}

int merge_paths_has(const struct merge_paths *p, const char *path)
{
	int found;

	find(p, path, &found);
	return found;
}

void merge_paths_release(struct merge_paths *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
	p->v = NULL;
	p->n = p->cap = 0;
}
