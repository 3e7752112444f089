#ifndef SL_CORE_ID_H
#define SL_CORE_ID_H
/*
 * Run ids: time-sortable and safe in a file name and a branch name:
 * "YYYYMMDD-HHMMSS-xxxxxxxx", UTC, where the last part is 8 random
 * characters of lower-case base32 (getrandom). The random part is the
 * run's "short" id used in its branch name run/<WO-ID>-<short>.
 */
#include <stddef.h>

#define SL_ID_LEN 24
#define SL_ID_SHORT_LEN 8

/* Write a new id (SL_ID_LEN characters and a NUL) into out[SL_ID_LEN + 1]. */
int sl_id_new(char *out);

/* The random part of an id (borrowed from id), or NULL if id is not one. */
const char *sl_id_short(const char *id);

/* 1 when s is a well-formed id. */
int sl_id_valid(const char *s);

#endif
