#ifndef SL_REVIEWER_H
#define SL_REVIEWER_H
/*
 * The reviewer (docs/reviewer.md, The reviewer): the review package
 * (schema/review-request.schema.json), the verdict
 * (schema/review-response.schema.json), and the transports: HTTP with the
 * sluice protocol, HTTP with the OpenAI chat-completions protocol, and a
 * local command.
 *
 * Fail closed: every error path returns a negative code and leaves the
 * verdict empty; nothing but a well-formed reply naming "approve" for the
 * tree in the request ever approves. The bearer token (the variable that
 * reviewer.token_env names) never appears in an error message, a log line
 * or a verdict: it is replaced by "[redacted]" wherever a reply echoes it.
 */
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "core/config.h"
#include "core/err.h"

#define REVIEWER_PROTOCOL "sluice.review.v1"

/* The default cap on the diff carried in a review request. */
#define REVIEWER_DIFF_MAX_DEFAULT ((size_t)4 << 20)

/*
 * What goes into a review request. Everything is borrowed from the caller
 * for the duration of reviewer_request_new(); json_t values are not stolen.
 * NULL strings and json values are written as "" / empty.
 */
struct reviewer_input {
	const char *run_id;
	const char *kind;            /* "build", "resolution" or "report" */
	json_t *wo_fields;           /* the work order's front matter (an object) */
	const char *wo_body;         /* the Markdown body */
	const char *const *criteria; /* acceptance criteria, NULL-terminated (or NULL) */
	const char *base;            /* commit ids and the tree under review */
	const char *head;
	const char *tree;
	const char *diff; /* diff.patch bytes; need not be NUL-terminated */
	size_t diff_len;
	size_t diff_max;             /* 0: REVIEWER_DIFF_MAX_DEFAULT */
	json_t *files_changed;       /* array of paths (or of objects) */
	const char *builder_summary; /* summary.md, may be NULL */
	json_t *gates;               /* gate results, as gates.json */
	int attempt;                 /* 1, 2, ... */
	json_t *conflict;            /* resolution: the ConflictContext (conflict.json) */
	const char *rival_run_id;    /* resolution: the run it conflicted with */
	const char *report;          /* report: the run's report (no diff is sent) */
	const char *worktree;        /* report: the run's worktree mode, "read-only" or "none" */
};

/*
 * Build the review request. *out is a new reference, the caller's
 * (json_decref()). A diff over diff_max is cut there and the request says
 * so ("diff_truncated": true, "diff_bytes": the full size); bytes that are
 * not UTF-8 are replaced by U+FFFD ("diff_lossy": true). SL_EINVALID for a
 * missing run id, tree or an unknown kind.
 */
int reviewer_request_new(json_t **out, const struct reviewer_input *in, struct sl_err *err);

struct reviewer_criterion {
	char *criterion;
	int met;
	char *note; /* "" when the reviewer gave none */
};

/*
 * A verdict. Every string is owned by the struct: reviewer_verdict_release().
 * `tree` is the tree id of the request it answers: the only tree it approves.
 */
struct reviewer_verdict {
	char *verdict;  /* "approve", "request_changes" or "reject" */
	char *comments; /* "" allowed only for approve */
	char *reviewer; /* who reviewed: the reply's "reviewer", else the config's */
	struct reviewer_criterion *criteria;
	size_t ncriteria;
	char *tree;
	json_t *raw; /* the verdict object as received (redacted); owned */
};

#define REVIEWER_VERDICT_INIT                                                                      \
	{                                                                                          \
		NULL, NULL, NULL, NULL, 0, NULL, NULL                                              \
	}

/*
 * Parse and validate a verdict object against the response schema for the
 * request's tree (see docs/reviewer.md for the rules). On success `out` is
 * filled (release it); on error it is left empty and the code is
 * SL_EINVALID. `v` is borrowed.
 */
int reviewer_verdict_from_json(struct reviewer_verdict *out, json_t *v, const char *tree,
                               struct sl_err *err);

/* As reviewer_verdict_from_json, from text (a reply body). */
int reviewer_verdict_parse(struct reviewer_verdict *out, const char *text, size_t len,
                           const char *tree, struct sl_err *err);

/* The verdict as review.json: a new reference, the caller's. */
json_t *reviewer_verdict_to_json(const struct reviewer_verdict *v);

/* 1 if the verdict approves exactly `tree`, else 0 (also for NULLs). */
int reviewer_verdict_approves_tree(const struct reviewer_verdict *v, const char *tree);

/* Free the contents and set it back to REVIEWER_VERDICT_INIT. */
void reviewer_verdict_release(struct reviewer_verdict *v);

/* What happened on the way to a verdict (or an error), for the run's events. */
struct reviewer_log {
	int tries;          /* requests sent (or commands run) */
	long http_status;   /* of the last try; 0 when none */
	int64_t elapsed_ms; /* all tries and waits */
	char last[256];     /* why the last failed try failed; "" when none */
};

/*
 * Ask the reviewer configured in cfg->reviewer about `request` (borrowed).
 * mode http: POST with the sluice or the openai protocol, with timeouts,
 * retries with backoff and Retry-After, a reply bounded by max_reply.
 * mode command: the request on the program's stdin, the verdict on its
 * stdout. mode manual: SL_EINVALID (the CLI's approve/reject is the
 * reviewer). `log` may be NULL.
 *
 * 0 with *out filled; SL_ETRANSIENT for an unreachable reviewer, a
 * timeout, HTTP 408/429/5xx after the retries; SL_EINVALID for any other
 * HTTP error, a malformed, oversized or schema-violating reply, a failed
 * command. The message reads as a run's reason ("reviewer HTTP 503 after 4
 * tries").
 */
int reviewer_review(const struct sl_config *cfg, json_t *request, struct reviewer_verdict *out,
                    struct reviewer_log *log, struct sl_err *err);

/*
 * Replace every occurrence of the configured token in the strings of a
 * JSON document (values, recursively) by "[redacted]", in place. For
 * artifacts written from data the reviewer or builder produced. No-op
 * without a token.
 */
void reviewer_redact_json(json_t *json, const struct sl_config *cfg);

/*
 * Take the bearer token out of the environment: keep a copy for this
 * module, scrub it from the process's environment block and unsetenv() the
 * variable (sl_env_take()), so that no child process (git and whatever its
 * configuration runs, builders, gates) ever sees it, nor anyone reading
 * /proc/<pid>/environ. Call once after the config is loaded, before starting
 * any child.
 */
void reviewer_token_capture(const struct sl_config *cfg);

/*
 * Hand the captured token to a tick's worker (another sluice, exec'd): *fd
 * is the read end of a close-on-exec pipe holding it (-1 without a token).
 * The worker passes the number to reviewer_token_receive() before anything
 * else; the caller closes *fd after the fork.
 */
int reviewer_token_handoff(int *fd, struct sl_err *err);

/*
 * One HTTP POST of a JSON body with no retry, for the rest of sluice (the
 * notifiers' URL, notify/notify.c), set up as the reviewer's requests are:
 * Content-Type: application/json, no redirect followed, http and https
 * only, a connect and a total timeout, a reply of at most max_reply bytes
 * (0: 64 KiB) read and dropped. Never sends the reviewer's token.
 * 0 when the server answered 2xx (*status the code); SL_ETRANSIENT with the
 * status or curl's error otherwise.
 */
struct reviewer_post {
	const char *url;
	const char *body;           /* NUL-terminated */
	int64_t connect_timeout_ms;
	int64_t timeout_ms;
	size_t max_reply;
};
int reviewer_post_once(const struct reviewer_post *p, long *status, struct sl_err *err);

/* Take the token from the handoff pipe `fd` (closed). */
int reviewer_token_receive(int fd, struct sl_err *err);

#endif
