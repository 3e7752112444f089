#include "core/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <git2.h>

static void vset(struct sl_err *err, int code, const char *suffix, const char *fmt, va_list ap)
{
	size_t n;

	if (!err || err->msg[0])
		return;
	err->code = code;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	n = strlen(err->msg);
	if (suffix && n < sizeof(err->msg))
		snprintf(err->msg + n, sizeof(err->msg) - n, ": %s", suffix);
}

int sl_err_set(struct sl_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(err, code, NULL, fmt, ap);
	va_end(ap);
	return code;
}

int sl_err_sys(struct sl_err *err, int errnum, const char *fmt, ...)
{
	va_list ap;
	int code = errnum == ENOENT ? SL_ENOTFOUND : errnum == EEXIST ? SL_EEXISTS : SL_ERROR;

	va_start(ap, fmt);
	vset(err, code, strerror(errnum), fmt, ap);
	va_end(ap);
	return code;
}

static int map_git(int git_code)
{
	switch (git_code) {
	case GIT_ENOTFOUND:
		return SL_ENOTFOUND;
	case GIT_EEXISTS:
		return SL_EEXISTS;
	case GIT_ELOCKED:
		return SL_ELOCKED;
	case GIT_ECONFLICT:
	case GIT_EMODIFIED:
	case GIT_EMERGECONFLICT:
		return SL_ECONFLICT;
	case GIT_EAMBIGUOUS:
		return SL_EAMBIGUOUS;
	default:
		return SL_ERROR;
	}
}

int sl_err_git(struct sl_err *err, int git_code, const char *fmt, ...)
{
	va_list ap;
	const git_error *ge = git_error_last();
	int code = map_git(git_code);

	va_start(ap, fmt);
	vset(err, code, ge && ge->message ? ge->message : "unknown libgit2 error", fmt, ap);
	va_end(ap);
	return code;
}

void sl_err_clear(struct sl_err *err)
{
	if (!err)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}

const char *sl_err_name(int code)
{
	switch (code) {
	case SL_OK:
		return "ok";
	case SL_ENOTFOUND:
		return "not found";
	case SL_EEXISTS:
		return "exists";
	case SL_ECONFLICT:
		return "conflict";
	case SL_ELOCKED:
		return "locked";
	case SL_ETRANSIENT:
		return "transient";
	case SL_EINVALID:
		return "invalid";
	case SL_ETOOBIG:
		return "too big";
	case SL_ETIMEOUT:
		return "timeout";
	case SL_EAMBIGUOUS:
		return "ambiguous";
	default:
		return "error";
	}
}
