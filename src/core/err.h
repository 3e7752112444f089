#ifndef SL_CORE_ERR_H
#define SL_CORE_ERR_H
/*
 * Errors: every library function returns an int: 0 on success, one of the
 * negative codes below that a caller can act on, or SL_ERROR. The message
 * goes into a caller-provided struct sl_err, git-style: lower case, what
 * failed with the subject quoted, then what to do.
 *
 * sl_err_set() never overwrites a message that is already there: the first,
 * innermost error wins and is passed up. Use sl_err_clear() to reuse one.
 */
#include <stddef.h>

enum {
	SL_OK = 0,
	SL_ERROR = -1,      /* anything else */
	SL_ENOTFOUND = -2,  /* no such work order, run, ref, file */
	SL_EEXISTS = -3,    /* already there */
	SL_ECONFLICT = -4,  /* merge conflict, checkout would overwrite */
	SL_ELOCKED = -5,    /* a lock is held by someone else */
	SL_ETRANSIENT = -6, /* try again later (network, busy) */
	SL_EINVALID = -7,   /* bad input: work order, config, argument */
	SL_ETOOBIG = -8,    /* a bounded buffer or file limit was hit */
	SL_ETIMEOUT = -9,   /* a child or a request ran out of time */
	SL_EAMBIGUOUS = -10 /* a prefix names more than one thing */
};

#define SL_ERR_MSG_MAX 1024

struct sl_err {
	int code;
	char msg[SL_ERR_MSG_MAX];
};

#define SL_ERR_INIT { 0, { 0 } }

/* Set code and message unless a message is already set; returns code. */
int sl_err_set(struct sl_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* As sl_err_set, with ": <strerror(errnum)>" appended. */
int sl_err_sys(struct sl_err *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * As sl_err_set, with ": <libgit2's last error>" appended. Maps libgit2's
 * GIT_ENOTFOUND, GIT_EEXISTS, GIT_ELOCKED, GIT_ECONFLICT, GIT_EMODIFIED to
 * the SL_ codes; returns the mapped code.
 */
int sl_err_git(struct sl_err *err, int git_code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Forget a previous error. */
void sl_err_clear(struct sl_err *err);

/* A short name for a code ("not found"), for logs. */
const char *sl_err_name(int code);

#endif
