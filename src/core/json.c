/* JSON artifacts: bounded reads, atomic writes in one byte format. */
#include "core/json.h"
#include "core/buf.h"
#include "core/fs.h"
#include "core/sha256.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The one byte format of every JSON artifact: two-space indent, keys sorted,
 * one newline at the end. Sorted keys make the bytes a function of the value
 * alone, not of the order the code happened to build it in, so the SHA-256
 * that manifest.json records for a file (and `sluice audit` checks against
 * the bytes on disk) is the same whoever writes the same document; the
 * manifest and the review request were written this way already.
 */
#define SL_JSON_FORMAT (JSON_INDENT(2) | JSON_SORT_KEYS)

int sl_json_read_sha(const char *path, size_t max, json_t **out, char sha[65],
		     struct sl_err *err)
{
	struct sl_buf b = SL_BUF_INIT;
	json_error_t jerr;
	int fd = -1, error;

	*out = NULL;
	if (sha)
		sha[0] = '\0';
	/* O_NONBLOCK: a FIFO planted where a file should be must not hang us */
	if ((error = sl_open_file(path, O_RDONLY | O_NONBLOCK, 0, &fd, err)) != 0 ||
	    (error = sl_read_fd(&b, fd, path, max, err)) != 0)
		goto out;
	if (sha)
		sl_sha256_hex(sha, sl_buf_cstr(&b), b.len);
	if (!(*out = json_loadb(sl_buf_cstr(&b), b.len, 0, &jerr)))
		error = sl_err_set(err, SL_EINVALID, "'%s' is not valid JSON (line %d, column %d): %s",
				   path, jerr.line, jerr.column, jerr.text);
out:
	if (fd >= 0)
		close(fd);
	sl_buf_release(&b);
	return error;
}

int sl_json_read(const char *path, size_t max, json_t **out, struct sl_err *err)
{
	return sl_json_read_sha(path, max, out, NULL, err);
}

char *sl_json_format(const json_t *j)
{
	char *text = json_dumps(j, SL_JSON_FORMAT), *out;
	size_t n = text ? strlen(text) : 0;

	if (!text || !(out = realloc(text, n + 2))) {
		free(text);
		return NULL;
	}
	out[n] = '\n';
	out[n + 1] = '\0';
	return out;
}

int sl_json_write(const char *path, const json_t *j, struct sl_err *err)
{
	char *text = j ? sl_json_format(j) : NULL;
	int error;

	if (!text)
		return sl_err_set(err, SL_ERROR, "cannot write '%s': out of memory", path);
	error = sl_write_file_atomic(path, text, strlen(text), err);
	free(text);
	return error;
}
