#ifndef SL_CORE_SHA256_H
#define SL_CORE_SHA256_H
/* SHA-256 through OpenSSL's libcrypto, as 64 lower-case hex digits. */
#include <stddef.h>
#include "core/err.h"

#define SL_SHA256_HEX_LEN 64

void sl_sha256_hex(char out[SL_SHA256_HEX_LEN + 1], const void *data, size_t len);

/* Hash a file's bytes; SL_ENOTFOUND if it does not exist. */
int sl_sha256_file(char out[SL_SHA256_HEX_LEN + 1], const char *path, struct sl_err *err);

#endif
