#include "core/sha256.h"

#include <errno.h>
#include <stdio.h>
#include <openssl/evp.h>

static void to_hex(char *out, const unsigned char *md, unsigned int n)
{
	static const char hex[] = "0123456789abcdef";
	unsigned int i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[2 * n] = '\0';
}

void sl_sha256_hex(char out[SL_SHA256_HEX_LEN + 1], const void *data, size_t len)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	EVP_Digest(data, len, md, &n, EVP_sha256(), NULL);
	to_hex(out, md, n);
}

int sl_sha256_file(char out[SL_SHA256_HEX_LEN + 1], const char *path, struct sl_err *err)
{
	unsigned char md[EVP_MAX_MD_SIZE], chunk[65536];
	unsigned int n = 0;
	EVP_MD_CTX *ctx = NULL;
	FILE *f = NULL;
	size_t got;
	int error = 0;

	if (!(f = fopen(path, "rb"))) {
		error = sl_err_sys(err, errno, "cannot read '%s'", path);
		goto out;
	}
	if (!(ctx = EVP_MD_CTX_new()) || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		error = sl_err_set(err, SL_ERROR, "cannot start SHA-256");
		goto out;
	}
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
		EVP_DigestUpdate(ctx, chunk, got);
	if (ferror(f)) {
		error = sl_err_sys(err, errno, "cannot read '%s'", path);
		goto out;
	}
	EVP_DigestFinal_ex(ctx, md, &n);
	to_hex(out, md, n);
out:
	EVP_MD_CTX_free(ctx);
	if (f)
		fclose(f);
	return error;
}
