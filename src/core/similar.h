#ifndef SL_CORE_SIMILAR_H
#define SL_CORE_SIMILAR_H
/* "Did you mean ...?": the closest of a few known names to a mistyped one. */
#include <stddef.h>

/*
 * The edit distance of a and b (insertions, deletions, substitutions and
 * swaps of two neighbours each count 1), at most 64 bytes of each compared;
 * longer strings count as far apart.
 */
int sl_edit_distance(const char *a, const char *b);

/*
 * The name of the comma-separated list `known` ("inbox, jobs, overlap")
 * closest to `word`, into out (n bytes), when it is close enough to be what
 * was meant: at most one edit for a word of up to 4 bytes, two up to 8,
 * three beyond, or one starts with the other. 1 when there is one, else 0
 * (and out is ""). A tie keeps the first in the list.
 */
int sl_similar(const char *word, const char *known, char *out, size_t n);

#endif
