#ifndef SL_CORE_UTF8_H
#define SL_CORE_UTF8_H
/* UTF-8: one decoder for every module that checks, cuts or escapes text. */
#include <stddef.h>

/*
 * The length (1 to 4) of the valid UTF-8 sequence at s, with n > 0 bytes
 * left, and its code point in *cp (cp may be NULL); 0 when the bytes there
 * are no valid UTF-8: a stray continuation byte, a sequence cut short, an
 * overlong form, a surrogate or a code point past U+10FFFF. A NUL byte is a
 * valid sequence of length 1. On a NUL-terminated string, n may be larger
 * than what is left: the terminator ends any sequence.
 */
size_t sl_utf8_seq(const unsigned char *s, size_t n, unsigned long *cp);

/*
 * 1 for a code point that must be shown escaped, never printed as it is:
 * it moves the cursor or reorders text on a terminal (C0 and C1 controls,
 * DEL, the line and paragraph separators, bidirectional overrides and
 * isolates).
 */
int sl_utf8_hidden(unsigned long cp);

/* Drop a UTF-8 sequence that a cut left unfinished at the end of s. */
void sl_utf8_drop_cut(char *s);

#endif
