#include "core/buf.h"
#include "core/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sl_buf_init(struct sl_buf *b, size_t max)
{
	b->ptr = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

static size_t limit(const struct sl_buf *b)
{
	return b->max ? b->max : SL_BUF_DEFAULT_MAX;
}

static int grow(struct sl_buf *b, size_t extra)
{
	size_t want, cap;
	char *p;

	if (extra > limit(b) || b->len > limit(b) - extra)
		return SL_ETOOBIG;
	want = b->len + extra + 1;
	if (want <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < want)
		cap *= 2;
	p = realloc(b->ptr, cap);
	if (!p)
		return SL_ERROR;
	b->ptr = p;
	b->cap = cap;
	return 0;
}

int sl_buf_add(struct sl_buf *b, const void *data, size_t len)
{
	int error = grow(b, len);

	if (error)
		return error;
	if (len)
		memcpy(b->ptr + b->len, data, len);
	b->len += len;
	b->ptr[b->len] = '\0';
	return 0;
}

int sl_buf_puts(struct sl_buf *b, const char *s)
{
	return sl_buf_add(b, s, strlen(s));
}

int sl_buf_vaddf(struct sl_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n, error;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return SL_ERROR;
	if ((error = grow(b, (size_t)n)) != 0)
		return error;
	vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int sl_buf_addf(struct sl_buf *b, const char *fmt, ...)
{
	va_list ap;
	int error;

	va_start(ap, fmt);
	error = sl_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return error;
}

const char *sl_buf_cstr(const struct sl_buf *b)
{
	return b->ptr ? b->ptr : "";
}

void sl_buf_reset(struct sl_buf *b)
{
	b->len = 0;
	if (b->ptr)
		b->ptr[0] = '\0';
}

char *sl_buf_detach(struct sl_buf *b)
{
	char *p = b->ptr ? b->ptr : strdup("");

	b->ptr = NULL;
	b->len = b->cap = 0;
	return p;
}

void sl_buf_release(struct sl_buf *b)
{
	free(b->ptr);
	b->ptr = NULL;
	b->len = b->cap = 0;
}

void sl_buf_last_line(const struct sl_buf *b, char *out, size_t n)
{
	size_t end = b->len, start;

	while (end && strchr("\n\r ", b->ptr[end - 1]))
		end--;
	for (start = end; start && b->ptr[start - 1] != '\n'; start--)
		;
	snprintf(out, n, "%.*s", (int)(end - start), end ? b->ptr + start : "");
}
