#ifndef SL_SERVE_H
#define SL_SERVE_H
/*
 * sluice serve (docs/serve.md): the review desk. An HTTP server, on
 * libmicrohttpd (loaded when the server starts, as libcurl is by the first
 * review request: every other sluice process maps neither), bound to
 * loopback by default, one per repository. It renders the queue, the runs,
 * a run's dossier, diff and conflict, and the audit; it takes a person's
 * decisions (approve, reject, retry, abandon) through the same runner
 * functions as the CLI; its pages follow the event stream (Server-Sent
 * Events).
 *
 * Security: a random token, given once in the address it prints, then kept
 * by the browser as the address's password (HTTP Basic authentication, bound
 * to the port, where a cookie would go to every server on 127.0.0.1) and
 * required on every request; idle connections are closed in their time and
 * to make room, so that they cannot lock the person out;
 * the Host header must name the address it listens on (no DNS rebinding);
 * a state-changing request is a POST with the page's CSRF token and no
 * foreign Origin; read_only serves no action at all; files are read only
 * from the run folders under .system/runs (never through a link) and
 * contents from the repository's objects; every value is HTML-escaped.
 */
#include "core/ctx.h"
#include "core/err.h"

struct serve_opts {
	const char *host;  /* an IPv4 address to listen on: "127.0.0.1" */
	int port;          /* 0: a free port */
	int read_only;     /* no action is served */
	const char *token; /* NULL: a random one (--token-file, SLUICE_SERVE_TOKEN) */
};
#define SERVE_OPTS_INIT { "127.0.0.1", 0, 0, NULL }

struct serve;

/*
 * Start serving ctx's repository; ctx stays the caller's and must outlive
 * the server (every request borrows it, one at a time). SL_EINVALID for a
 * bad address; SL_ERROR when libmicrohttpd cannot be loaded or the port
 * cannot be bound (the message says which and what to do).
 */
int serve_start(struct serve **out, struct sl_ctx *ctx, const struct serve_opts *o,
		struct sl_err *err);
/* The address to open, with the token: "http://127.0.0.1:8080/?token=...". */
const char *serve_url(const struct serve *s);
int serve_port(const struct serve *s);
void serve_stop(struct serve *s);

#endif
