#ifndef SL_CORE_BUF_H
#define SL_CORE_BUF_H
/*
 * A growable byte buffer with a maximum size (curl's dynbuf). The contents
 * are always NUL-terminated. An append that would pass `max` appends
 * nothing and returns SL_ETOOBIG. A buffer set up with SL_BUF_INIT has the
 * default maximum, SL_BUF_DEFAULT_MAX.
 */
#include <stdarg.h>
#include <stddef.h>

#define SL_BUF_DEFAULT_MAX ((size_t)64 << 20)

struct sl_buf {
	char *ptr;
	size_t len;
	size_t cap;
	size_t max;
};

#define SL_BUF_INIT { NULL, 0, 0, 0 }

/* Set up an empty buffer that may hold at most `max` bytes (0: the default). */
void sl_buf_init(struct sl_buf *b, size_t max);

/* Append; 0, or SL_ETOOBIG / SL_ERROR (out of memory) with nothing appended. */
int sl_buf_add(struct sl_buf *b, const void *data, size_t len);
int sl_buf_puts(struct sl_buf *b, const char *s);
int sl_buf_addf(struct sl_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sl_buf_vaddf(struct sl_buf *b, const char *fmt, va_list ap);

/* The contents as a C string; "" for an empty buffer, never NULL. Borrowed. */
const char *sl_buf_cstr(const struct sl_buf *b);

/* Empty the buffer, keeping its memory and maximum. */
void sl_buf_reset(struct sl_buf *b);

/* Take the contents (the caller's, free with free()); the buffer is emptied. */
char *sl_buf_detach(struct sl_buf *b);

/* Free the contents; the buffer may be used again. */
void sl_buf_release(struct sl_buf *b);

/*
 * The last non-empty line of b (a child's stderr, for a message) into out,
 * trailing newlines and spaces dropped; "" when b holds none.
 */
void sl_buf_last_line(const struct sl_buf *b, char *out, size_t n);

#endif
