#ifndef SL_SERVE_INT_H
#define SL_SERVE_INT_H
/* Inside sluice serve: the server (serve/http.c) and what its pages share. */
#include "serve/serve.h"
#include "artifact/artifact.h"
#include "core/buf.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#define SERVE_TOKEN_HEX 64   /* 32 random bytes */
#define SERVE_BODY_MAX 65536 /* a form is small */
#define SERVE_PAGE_RUNS 50   /* runs on one page */
#define SERVE_DIFF_FILES 25  /* files on one page of a diff */
#define SERVE_FILE_MAX (256 * 1024) /* one file's patch shown, one artifact served */
#define SERVE_CONN_MAX 512  /* connections libmicrohttpd holds, at most (a thread each) */
#define SERVE_CONN_KEEP 128 /* beyond: a new connection closes the oldest idle ones */
#define SERVE_IDLE_S 10     /* seconds a connection has to send its (next) request */

struct MHD_Daemon;
struct MHD_Connection;

/* A connection the server holds (serve/conns.c). */
struct serve_conn {
	int used, busy, evicted;
	int fd;
	int64_t since_ms; /* accepted, or its last request answered */
};

struct serve {
	struct sl_ctx *ctx;
	struct MHD_Daemon *d;
	int fd;
	int port;
	int read_only;
	volatile int stopping;
	char host[64];                      /* the address listened on */
	char token[SERVE_TOKEN_HEX + 1];    /* the password of every request (Basic) */
	char csrf[SERVE_TOKEN_HEX + 1];     /* every form's */
	char realm[128];                    /* the WWW-Authenticate of a 401 */
	char url[256];
	char actor[160];                    /* "<user> via sluice serve" */
	pthread_mutex_t lock;               /* one request at a time uses ctx */
	pthread_mutex_t conns_lock;         /* conns, nlive */
	struct serve_conn conns[SERVE_CONN_MAX];
	int nlive;                          /* held and not being closed */
};

/* One request, and its answer. */
struct req {
	struct serve *sv;
	struct MHD_Connection *c;
	const char *method;
	char path[1024];     /* the URL's path, decoded by libmicrohttpd */
	struct sl_buf body;  /* a POST's form */
	int too_big;
	/* the answer */
	int status;
	const char *type;    /* Content-Type */
	struct sl_buf out;
	char location[1200]; /* a redirect's Location */
};

/* A query argument, or a header, of the request; NULL when absent. */
const char *serve__arg(struct req *r, const char *name);
const char *serve__header(struct req *r, const char *name);
/* A field of the POSTed form, decoded into buf (truncated to n - 1); NULL when absent. */
const char *serve__form(struct req *r, const char *name, char *buf, size_t n);
/* Answer with a page or text: status, type; body in r->out. */
void serve__answer(struct req *r, int status, const char *type);
/* Answer 303 to a path of this server. */
void serve__redirect(struct req *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An error page: status and a message (escaped). */
void serve__error(struct req *r, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* 1 when s is a run id or prefix sluice could have made ([0-9A-Za-z-], 1-64). */
int serve__id_ok(const char *s);

/* The frame of every page: head, navigation, <main data-seq>; and its end. */
void serve__page_begin(struct req *r, struct artifact_page *p, const char *title);
void serve__page_end(struct req *r, struct artifact_page *p);
/*
 * A form posting `action` for a run (the dossier's "run" object), with the
 * CSRF token and what the page shows of the run (head, attempt, state: the
 * action checks them, serve/actions.c); `comment`: 0 none, 1 an optional
 * line, 2 a required line, 3 a required box. The button's class is the
 * action's name (the style tells them apart).
 */
void serve__action_form(struct req *r, struct artifact_page *p, json_t *run,
			const char *action, const char *label, int comment);
/* Abandon's button: it opens the page that asks (GET /runs/<id>/abandon). */
void serve__abandon_button(struct req *r, struct artifact_page *p, json_t *run);

/* The pages (serve/pages.c, serve/run_page.c), under sv->lock. */
void serve__queue_page(struct req *r);
void serve__runs_page(struct req *r);
void serve__audit_page(struct req *r);
void serve__run_page(struct req *r, const char *run, const char *notice);
void serve__diff_page(struct req *r, const char *run);
void serve__conflict_page(struct req *r, const char *run);
void serve__artifact(struct req *r, const char *run, const char *name);
/*
 * A file of run folder `run`, never through a link: its first `max` bytes
 * (tail: its last), NUL-terminated, the caller's (free); NULL when absent or,
 * not tail, larger than max (serve/run_page.c).
 */
char *serve__run_file(struct req *r, const char *run, const char *name, size_t max, int tail);
/* The sections of a run's page above its actions, from its dossier d (serve/run_parts.c). */
void serve__run_work_order(struct req *r, struct artifact_page *p, json_t *d);
void serve__run_gates(struct req *r, struct artifact_page *p, json_t *d);
void serve__run_verdict(struct artifact_page *p, json_t *d);
void serve__run_diff(struct req *r, struct artifact_page *p, json_t *d);
void serve__run_log(struct req *r, struct artifact_page *p, json_t *d);
/* POST /runs/<run>/<action> (serve/actions.c). */
void serve__action(struct req *r, const char *run, const char *action);

/*
 * Abandon's confirmation (GET /runs/<run>/abandon): the run as it is now and
 * the form that abandons it (serve/actions.c). A page, so that it asks
 * without a script.
 */
void serve__abandon_page(struct req *r, const char *run);
/* GET /runs/<run>/log: the tail of the builder's log, as text (serve/run_page.c). */
void serve__builder_log(struct req *r, const char *run);

/* A reason as the desk shows it: no terminal command, no absolute path (serve/pages.c). */
void serve__put_reason(struct req *r, struct artifact_page *p, const char *reason);
/* The same, `tail` ("": nothing) said where a command was cut. */
void serve__put_reason_tail(struct req *r, struct artifact_page *p, const char *reason,
			    const char *tail);
/* "3 min ago" for a time in ms since the epoch (0: "-") into buf. */
const char *serve__ago(char *buf, size_t n, int64_t ms);

/* A diff of two commits' trees (serve/diff_view.c). */
struct git_repository;
struct git_diff;
struct serve_diff {
	struct git_repository *repo;
	struct git_diff *diff;
	size_t n; /* files */
};
/* from..to, full commit ids; SL_ENOTFOUND when either is not one. */
int serve__diff_open(struct serve_diff *v, struct sl_ctx *ctx, const char *from,
		     const char *to, struct sl_err *err);
void serve__diff_close(struct serve_diff *v);
/*
 * Files [from, to) as tables: unified (old and new line numbers, sign,
 * text) or split (old beside new); a changed line's changed part in
 * <mark>. Every file is open when asked (expand) or when the files shown
 * change few lines, else the small ones only.
 */
void serve__diff_files(struct artifact_page *p, struct serve_diff *v, size_t from, size_t to,
		       int split, int expand);
/* The links "side by side"/"unified" and "expand all" of a diff at base (+ "&extra"). */
void serve__diff_views(struct artifact_page *p, const char *base, const char *extra, int split,
		       int expand);

/* The static files (serve/assets.c). */
extern const char serve__css[];
extern const char serve__js[];

/* The event stream (serve/events.c): a libmicrohttpd response, or NULL. */
struct MHD_Response *serve__events_response(struct req *r);

/*
 * The connections (serve/conns.c): one accepted on socket fd (its slot, NULL
 * when none is free), closed (before its socket is), a request of it begun
 * (busy) or answered.
 */
struct serve_conn *serve__conn_started(struct serve *sv, int fd);
void serve__conn_closed(struct serve *sv, struct serve_conn *s);
void serve__conn_busy(struct serve *sv, struct serve_conn *s, int busy);

/* libmicrohttpd's calls used outside http.c. */
struct serve_mhd {
	struct MHD_Response *(*create_from_callback)(uint64_t size, size_t block,
						     ssize_t (*crc)(void *, uint64_t, char *, size_t),
						     void *cls, void (*crfc)(void *));
};
extern struct serve_mhd serve__mhd;

#endif
