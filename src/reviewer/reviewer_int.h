#ifndef SL_REVIEWER_INT_H
#define SL_REVIEWER_INT_H
/* Helpers shared inside the reviewer module (reviewer__ prefix). */
#include "core/buf.h"
#include "reviewer/reviewer.h"

#define REVIEWER_REDACTED "[redacted]"

/*
 * The bearer token: *out is borrowed from the environment, NULL when
 * reviewer.token_env is unset. SL_EINVALID when the variable it names is
 * unset, empty, or holds control characters.
 */
int reviewer__token(const char **out, const struct sl_config *cfg, struct sl_err *err);

/* Replace each occurrence of token in b by "[redacted]" (no-op for a NULL/empty token). */
int reviewer__redact_buf(struct sl_buf *b, const char *token);

/* A new redacted copy of s (the caller's, free()); NULL on out-of-memory. */
char *reviewer__redact_str(const char *s, const char *token);

/* Redact the strings of a JSON document in place. */
void reviewer__redact_json(json_t *json, const char *token);

#define SL_STR_(x) #x
#define SL_STR(x) SL_STR_(x)

/*
 * A reviewer name goes into the merge commit's Reviewed-by: trailer: at
 * most SL_REVIEWER_NAME_MAX characters, no control character (a newline
 * would end the trailer and start a forged one), as sl_reviewer_name_check
 * (core/config.h) decides. SL_EINVALID with the name shown.
 */
int reviewer__check_name(const char *name, size_t len, struct sl_err *err);

/* Up to n printable bytes of s, for a message: control bytes become '?'. */
void reviewer__snippet(char *out, size_t n, const char *s, size_t len);

/*
 * POST body to url with the retries and timeouts of cfg. On 0, `reply`
 * holds the 200 reply body. `token` may be NULL (no Authorization header).
 */
int reviewer__http_post(const struct sl_config *cfg, const char *url, const char *body,
                        const char *token, struct sl_buf *reply, struct reviewer_log *log,
                        struct sl_err *err);

/* The chat-completions request for a review request: a new reference. */
json_t *reviewer__openai_request(const struct sl_config *cfg, const json_t *request);

/* The chat-completions URL for a base URL: a new string, the caller's. */
char *reviewer__openai_url(const char *base);

/*
 * From a chat-completions reply, the verdict object (a new reference in
 * *out): choices[0].message.content, plain JSON or inside a ``` fence.
 */
int reviewer__openai_verdict(json_t **out, const char *reply, size_t len, struct sl_err *err);

/* Find the JSON object in model output: plain, fenced, or after prose. */
int reviewer__extract_json(json_t **out, const char *text, struct sl_err *err);

/* Run the review command with `body` on stdin; its stdout into reply. */
int reviewer__command(const struct sl_config *cfg, const char *body, struct sl_buf *reply,
                      struct reviewer_log *log, struct sl_err *err);

#endif
