#ifndef SL_CORE_JSON_H
#define SL_CORE_JSON_H
/*
 * JSON artifacts: a bounded read and an atomic write in one byte format.
 *
 * Every JSON file sluice keeps in a run folder (and the gc tombstones beside
 * them) is written by sl_json_write and read by sl_json_read. A builder or a
 * gate can write its run folder, so a read never trusts the file: it is
 * bounded, opened without following a link, and must be JSON.
 */
#include <jansson.h>
#include <stddef.h>
#include "core/err.h"

/* The usual bound of a JSON artifact. */
#define SL_JSON_MAX ((size_t)16 << 20)

/*
 * Read the JSON file at `path` into *out (a new reference, the caller's,
 * json_decref()); *out is NULL on error.
 *
 * The file is opened like sl_open_file: never through a symbolic link at its
 * name, and below the guarded .system never through a link on the way (a
 * link is SL_EINVALID); a FIFO or other non-regular file is SL_EINVALID.
 * Missing: SL_ENOTFOUND. Over `max` bytes: SL_ETOOBIG, nothing parsed.
 * Malformed: SL_EINVALID, "'<path>' is not valid JSON (line L, column C):
 * <why>". The top level is an object or an array (jansson's default);
 * callers check which.
 */
int sl_json_read(const char *path, size_t max, json_t **out, struct sl_err *err);

/*
 * As sl_json_read; `sha` (when not NULL) receives the SHA-256 (hex) of the
 * bytes read, also when they are not valid JSON ("" when nothing was read).
 */
int sl_json_read_sha(const char *path, size_t max, json_t **out, char sha[65],
		     struct sl_err *err);

/*
 * The bytes of `j` in the artifact format (see json.c): a new string (the
 * caller's, free()), or NULL on out-of-memory.
 */
char *sl_json_format(const json_t *j);

/*
 * Write `j` to `path` in the artifact format, atomically (sl_write_file_atomic:
 * a temporary file beside it, fsync, rename; under the guard, never through a
 * link). The folder must exist.
 */
int sl_json_write(const char *path, const json_t *j, struct sl_err *err);

#endif
