/* sluice serve's HTTP server: libmicrohttpd loaded at start, the checks every request passes, routing. */
#include "serve/serve_int.h"
#include "core/fs.h"
#include "core/log.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

/*
 * libmicrohttpd is loaded by `sluice serve` only: linked, it and its TLS
 * libraries would be mapped by every sluice process. Its soname is its ABI
 * (12 since 0.9.60).
 */
#define MHD_SONAME "libmicrohttpd.so.12"

static struct {
	struct MHD_Daemon *(*start)(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
				    void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...);
	void (*stop)(struct MHD_Daemon *d);
	struct MHD_Response *(*from_buffer)(size_t size, void *buffer,
					    enum MHD_ResponseMemoryMode mode);
	enum MHD_Result (*add_header)(struct MHD_Response *r, const char *h, const char *c);
	enum MHD_Result (*queue)(struct MHD_Connection *c, unsigned int status,
				 struct MHD_Response *r);
	void (*destroy)(struct MHD_Response *r);
	const char *(*lookup)(struct MHD_Connection *c, enum MHD_ValueKind kind, const char *key);
	const union MHD_ConnectionInfo *(*info)(struct MHD_Connection *c,
						enum MHD_ConnectionInfoType what, ...);
} mhd;

struct serve_mhd serve__mhd;

static int sym(void *so, const char *name, void *slot)
{
	void *f = dlsym(so, name);

	if (!f)
		return -1;
	memcpy(slot, &f, sizeof(f)); /* a function pointer from dlsym's object pointer */
	return 0;
}

static int load_mhd(struct sl_err *err)
{
	static void *so;

	if (so)
		return 0;
	if (!(so = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL)))
		return sl_err_set(err, SL_ERROR,
				  "sluice serve needs libmicrohttpd (%s: %s); install it "
				  "(Debian: apt-get install libmicrohttpd12)",
				  MHD_SONAME, dlerror());
	if (sym(so, "MHD_start_daemon", &mhd.start) || sym(so, "MHD_stop_daemon", &mhd.stop) ||
	    sym(so, "MHD_create_response_from_buffer", &mhd.from_buffer) ||
	    sym(so, "MHD_add_response_header", &mhd.add_header) ||
	    sym(so, "MHD_queue_response", &mhd.queue) ||
	    sym(so, "MHD_destroy_response", &mhd.destroy) ||
	    sym(so, "MHD_lookup_connection_value", &mhd.lookup) ||
	    sym(so, "MHD_create_response_from_callback", &serve__mhd.create_from_callback) ||
	    sym(so, "MHD_get_connection_info", &mhd.info)) {
		so = NULL;
		return sl_err_set(err, SL_ERROR, "%s lacks a function sluice serve needs: %s",
				  MHD_SONAME, dlerror());
	}
	return 0;
}

/* ---- requests ---------------------------------------------------------- */

const char *serve__arg(struct req *r, const char *name)
{
	return mhd.lookup(r->c, MHD_GET_ARGUMENT_KIND, name);
}

const char *serve__header(struct req *r, const char *name)
{
	return mhd.lookup(r->c, MHD_HEADER_KIND, name);
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Decode one application/x-www-form-urlencoded value [s, e) into buf. */
static void form_decode(const char *s, const char *e, char *buf, size_t n)
{
	size_t k = 0;

	for (; s < e && k + 1 < n; s++) {
		if (*s == '+') {
			buf[k++] = ' ';
		} else if (*s == '%' && e - s >= 3 && hexval(s[1]) >= 0 && hexval(s[2]) >= 0) {
			buf[k++] = (char)(hexval(s[1]) * 16 + hexval(s[2]));
			s += 2;
		} else {
			buf[k++] = *s;
		}
	}
	buf[k] = '\0';
}

const char *serve__form(struct req *r, const char *name, char *buf, size_t n)
{
	const char *s = r->body.ptr, *end = s ? s + r->body.len : NULL;
	size_t l = strlen(name);

	while (s && s < end) {
		const char *amp = memchr(s, '&', (size_t)(end - s)), *e = amp ? amp : end;
		if ((size_t)(e - s) > l && !strncmp(s, name, l) && s[l] == '=') {
			form_decode(s + l + 1, e, buf, n);
			return buf;
		}
		s = amp ? amp + 1 : NULL;
	}
	return NULL;
}

void serve__answer(struct req *r, int status, const char *type)
{
	r->status = status;
	r->type = type;
}

void serve__redirect(struct req *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->location, sizeof(r->location), fmt, ap);
	va_end(ap);
	serve__answer(r, 303, "text/plain; charset=utf-8");
	sl_buf_puts(&r->out, "see other\n");
}

void serve__error(struct req *r, int status, const char *fmt, ...)
{
	struct artifact_page p = { &r->out, 0 };
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sl_buf_reset(&r->out);
	serve__page_begin(r, &p, "error");
	artifact_putf(&p, "<h1>%d</h1><p class=\"error\">", status);
	artifact_put_esc(&p, msg);
	artifact_put(&p, "</p>");
	serve__page_end(r, &p);
	serve__answer(r, status, "text/html; charset=utf-8");
}

int serve__id_ok(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'z') ||
		      (s[n] >= 'A' && s[n] <= 'Z') || s[n] == '-'))
			return 0;
	return n >= 1 && n <= 64 && s[0] != '-';
}

/* ---- the checks every request passes ------------------------------------ */

/* Equal secrets, in time that does not depend on where they differ. */
static int same_secret(const char *a, const char *b)
{
	size_t la, lb, i;
	unsigned char d;

	if (!a || !b)
		return 0;
	la = strlen(a);
	lb = strlen(b);
	d = la != lb;
	for (i = 0; i < SERVE_TOKEN_HEX; i++)
		d |= (unsigned char)((i < la ? a[i] : 0) ^ (i < lb ? b[i] : 0));
	return !d;
}

/*
 * The Host header names this server: its address and port, or localhost
 * when it listens on loopback. A page of another site that a DNS name
 * pointed at 127.0.0.1 sends its own name, and is refused.
 */
static int host_ok(struct req *r)
{
	const char *h = mhd.lookup(r->c, MHD_HEADER_KIND, "Host");
	char want[96];

	if (!h)
		return 0;
	snprintf(want, sizeof(want), "%s:%d", r->sv->host, r->sv->port);
	if (!strcmp(h, want))
		return 1;
	snprintf(want, sizeof(want), "localhost:%d", r->sv->port);
	return !strncmp(r->sv->host, "127.", 4) && !strcasecmp(h, want);
}

/* A state-changing request comes from this server's own page: no foreign Origin, its CSRF token. */
static int same_origin(struct req *r)
{
	const char *o = mhd.lookup(r->c, MHD_HEADER_KIND, "Origin");
	const char *h = mhd.lookup(r->c, MHD_HEADER_KIND, "Host");
	const char *site = mhd.lookup(r->c, MHD_HEADER_KIND, "Sec-Fetch-Site");
	char want[128], csrf[SERVE_TOKEN_HEX + 2];

	if (site && strcmp(site, "same-origin") && strcmp(site, "none"))
		return 0;
	snprintf(want, sizeof(want), "http://%s", h ? h : "");
	if (o && strcmp(o, want))
		return 0;
	return same_secret(serve__form(r, "csrf", csrf, sizeof(csrf)), r->sv->csrf);
}

/* A path we redirect to as it is: nothing a Location header would need to escape. */
static int plain_path(const char *p)
{
	for (; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= 'A' && *p <= 'Z') || strchr("/-_.", *p)))
			return 0;
	return 1;
}

static int b64val(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26
		: c >= '0' && c <= '9' ? c - '0' + 52 : c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Decode base64 s into buf (NUL-terminated, at most n - 1 bytes); -1 when it is not. */
static int b64_decode(const char *s, char *buf, size_t n)
{
	size_t k = 0;
	unsigned acc = 0;
	int bits = 0, v;

	for (; *s && *s != '='; s++) {
		if ((v = b64val((unsigned char)*s)) < 0 || k + 1 >= n)
			return -1;
		acc = (acc << 6) | (unsigned)v;
		if ((bits += 6) >= 8) {
			bits -= 8;
			buf[k++] = (char)((acc >> bits) & 0xff);
		}
	}
	buf[k] = '\0';
	return 0;
}

/*
 * The token as the password of HTTP Basic authentication (any user name):
 * a browser keeps it for this origin, port included, and sends it nowhere
 * else. A cookie would be sent to every server on 127.0.0.1, whatever its
 * port (RFC 6265, section 8.5): docs/serve.md, "Security".
 */
static int has_token(struct serve *sv, struct MHD_Connection *c)
{
	const char *a = mhd.lookup(c, MHD_HEADER_KIND, "Authorization"), *pw;
	char plain[256];

	if (!a || strncasecmp(a, "Basic ", 6) || b64_decode(a + 6, plain, sizeof(plain)) != 0 ||
	    !(pw = strchr(plain, ':')))
		return 0;
	return same_secret(pw + 1, sv->token);
}

/*
 * Signed in: the token given with the request. The printed address
 * (?token=) sends the browser to /signin with the token as the address's
 * password, which the browser then keeps, and /signin on to the page
 * without it, so that it stays out of the address bar and of every link.
 */
static int signed_in(struct req *r)
{
	const char *t = serve__arg(r, "token"), *to = serve__arg(r, "to");
	const char *host = mhd.lookup(r->c, MHD_HEADER_KIND, "Host"); /* checked by host_ok */
	const char *path = plain_path(r->path) ? r->path : "/";

	if (!strcmp(r->method, "GET") && same_secret(t, r->sv->token)) {
		serve__redirect(r, "http://sluice:%s@%s/signin?to=%s", r->sv->token, host, path);
		return 0;
	}
	if (!has_token(r->sv, r->c)) {
		serve__error(r, 401, "sign in: open the address 'sluice serve' printed (it ends "
			     "in ?token=...) in this browser, or give the token as the password "
			     "(any user name)");
		return 0;
	}
	if (strcmp(r->path, "/signin"))
		return 1;
	serve__redirect(r, "http://%s%s", host,
			to && to[0] == '/' && plain_path(to) && strlen(to) < 1000 ? to : "/");
	return 0;
}

/* ---- routing ------------------------------------------------------------- */

/* "/runs/<id>[/<rest>]": the id into id[], the rest (or "") returned; NULL when not. */
static const char *run_path(const char *p, char *id, size_t n)
{
	const char *slash;
	size_t l;

	if (strncmp(p, "/runs/", 6))
		return NULL;
	p += 6;
	slash = strchr(p, '/');
	l = slash ? (size_t)(slash - p) : strlen(p);
	if (l == 0 || l >= n)
		return NULL;
	memcpy(id, p, l);
	id[l] = '\0';
	return serve__id_ok(id) ? (slash ? slash + 1 : "") : NULL;
}

/* What the run page says after an action sent the browser back to it. */
static const char *done_notice(const char *done)
{
	static const char *const said[][2] = {
		{ "approve", "approved: the next tick merges it" },
		{ "reject", "rejected" }, /* not a run state */
		{ "retry", "retried: the next tick carries it on" },
		{ "abandon", "abandoned" }, /* not a run state */
		{ "request-changes", "changes requested: the next tick builds it again with your "
				     "comment" },
	};
	size_t i;

	for (i = 0; done && i < sizeof(said) / sizeof(said[0]); i++)
		if (!strcmp(done, said[i][0]))
			return said[i][1];
	return NULL;
}

static void route_get(struct req *r)
{
	char id[80];
	const char *rest = run_path(r->path, id, sizeof(id));

	if (!strcmp(r->path, "/"))
		serve__queue_page(r);
	else if (!strcmp(r->path, "/runs"))
		serve__runs_page(r);
	else if (!strcmp(r->path, "/audit"))
		serve__audit_page(r);
	else if (rest && !*rest)
		serve__run_page(r, id, done_notice(serve__arg(r, "done")));
	else if (rest && !strcmp(rest, "diff"))
		serve__diff_page(r, id);
	else if (rest && !strcmp(rest, "conflict"))
		serve__conflict_page(r, id);
	else if (rest && !strcmp(rest, "log"))
		serve__builder_log(r, id);
	else if (rest && !strcmp(rest, "abandon") && r->sv->read_only)
		serve__error(r, 403, "this desk is read-only (sluice serve --read-only): use the "
			     "sluice commands");
	else if (rest && !strcmp(rest, "abandon"))
		serve__abandon_page(r, id);
	else if (rest && !strncmp(rest, "artifacts/", 10))
		serve__artifact(r, id, rest + 10);
	else
		serve__error(r, 404, "no page at %s", r->path);
}

static void route_post(struct req *r)
{
	char id[80];
	const char *rest = run_path(r->path, id, sizeof(id));

	if (r->sv->read_only)
		serve__error(r, 403, "this desk is read-only (sluice serve --read-only): use the "
			     "sluice commands");
	else if (r->too_big)
		serve__error(r, 413, "the form is larger than %d bytes", SERVE_BODY_MAX);
	else if (!same_origin(r))
		serve__error(r, 403, "this request did not come from this desk's own page (CSRF "
			     "token or Origin); reload the page and try again");
	else if (!rest || !*rest || strchr(rest, '/'))
		serve__error(r, 404, "no action at %s", r->path);
	else
		serve__action(r, id, rest);
}

/* Answer the request from what the page left in r. */
static enum MHD_Result send_answer(struct req *r, struct MHD_Response *resp)
{
	enum MHD_Result ok;

	if (!resp)
		resp = mhd.from_buffer(r->out.len, r->out.ptr, MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	mhd.add_header(resp, "Content-Type", r->type ? r->type : "text/html; charset=utf-8");
	mhd.add_header(resp, "Cache-Control", "no-store");
	mhd.add_header(resp, "X-Content-Type-Options", "nosniff");
	mhd.add_header(resp, "X-Frame-Options", "DENY");
	mhd.add_header(resp, "Referrer-Policy", "same-origin"); /* no-referrer: Origin: null on a POST */
	mhd.add_header(resp, "Content-Security-Policy",
		       "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
		       "img-src 'self' data:; connect-src 'self'; form-action 'self'; "
		       "frame-ancestors 'none'; base-uri 'none'");
	if (*r->location)
		mhd.add_header(resp, "Location", r->location);
	if (r->status == 401)
		mhd.add_header(resp, "WWW-Authenticate", r->sv->realm);
	ok = mhd.queue(r->c, (unsigned)r->status, resp);
	mhd.destroy(resp);
	return ok;
}

static enum MHD_Result respond(struct req *r)
{
	int get = !strcmp(r->method, "GET") || !strcmp(r->method, "HEAD");

	if (!host_ok(r))
		serve__error(r, 403, "this server answers to http://%s:%d/ only (the Host header "
			     "named another: a DNS rebinding?)", r->sv->host, r->sv->port);
	else if (!get && strcmp(r->method, "POST"))
		serve__error(r, 405, "%s is not served here", r->method);
	else if (!strcmp(r->path, "/static/desk.css")) {
		sl_buf_puts(&r->out, artifact_page_css);
		sl_buf_puts(&r->out, serve__css);
		serve__answer(r, 200, "text/css; charset=utf-8");
	} else if (!strcmp(r->path, "/static/desk.js")) {
		sl_buf_puts(&r->out, serve__js);
		serve__answer(r, 200, "text/javascript; charset=utf-8");
	} else if (signed_in(r)) {
		if (get && !strcmp(r->path, "/events"))
			return send_answer(r, serve__events_response(r));
		pthread_mutex_lock(&r->sv->lock);
		if (get)
			route_get(r);
		else
			route_post(r);
		pthread_mutex_unlock(&r->sv->lock);
	}
	return send_answer(r, NULL);
}

/* The slot of serve/conns.c that notify() gave the connection. */
static struct serve_conn *conn_slot(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = mhd.info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* libmicrohttpd's notification: a connection accepted, or closed (before its socket is). */
static void notify(void *cls, struct MHD_Connection *c, void **ctx,
		   enum MHD_ConnectionNotificationCode toe)
{
	const union MHD_ConnectionInfo *ci;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = mhd.info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		*ctx = ci ? serve__conn_started(cls, ci->connect_fd) : NULL;
	} else {
		serve__conn_closed(cls, *ctx);
		*ctx = NULL;
	}
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct req *r = *con_cls;

	(void)version;
	if (!r) {
		if (!(r = calloc(1, sizeof(*r))))
			return MHD_NO;
		r->sv = cls;
		r->c = c;
		r->method = method;
		r->status = 200;
		sl_buf_init(&r->body, SERVE_BODY_MAX);
		if (strlen(url) >= sizeof(r->path))
			url = "/too-long";
		memcpy(r->path, url, strlen(url) + 1);
		*con_cls = r;
		if (has_token(cls, c)) /* else the connection stays idle: closed in its time */
			serve__conn_busy(cls, conn_slot(c), 1);
		return MHD_YES;
	}
	if (*upload_size) {
		if (sl_buf_add(&r->body, upload, *upload_size) != 0)
			r->too_big = 1;
		*upload_size = 0;
		return MHD_YES;
	}
	return respond(r);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct req *r = *con_cls;

	(void)toe;
	serve__conn_busy(cls, conn_slot(c), 0);
	if (!r)
		return;
	sl_buf_release(&r->body);
	sl_buf_release(&r->out);
	free(r);
	*con_cls = NULL;
}

/* ---- start and stop ------------------------------------------------------ */

static int random_hex(char *out, size_t hexlen, struct sl_err *err)
{
	unsigned char raw[SERVE_TOKEN_HEX / 2];
	size_t i;

	if (getrandom(raw, hexlen / 2, 0) != (ssize_t)(hexlen / 2))
		return sl_err_set(err, SL_ERROR, "cannot read random bytes: %s", strerror(errno));
	for (i = 0; i < hexlen / 2; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

static int listen_on(struct serve *sv, const struct serve_opts *o, struct sl_err *err)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int one = 1;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)o->port);
	if (o->port < 0 || o->port > 65535 || inet_pton(AF_INET, o->host, &a.sin_addr) != 1)
		return sl_err_set(err, SL_EINVALID,
				  "--listen wants an IPv4 address and a port (127.0.0.1:8080, "
				  "port 0 for a free one), not '%s:%d'", o->host, o->port);
	if (a.sin_addr.s_addr == htonl(INADDR_ANY))
		return sl_err_set(err, SL_EINVALID,
				  "--listen wants the address browsers will use (the Host header "
				  "is checked against it), not 0.0.0.0");
	if ((sv->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(sv->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(sv->fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(sv->fd, SERVE_CONN_MAX) != 0 ||
	    getsockname(sv->fd, (struct sockaddr *)&a, &len) != 0)
		return sl_err_set(err, SL_ERROR, "cannot listen on %s:%d: %s (another server "
				  "there? try another port, or 0 for a free one)",
				  o->host, o->port, strerror(errno));
	sv->port = ntohs(a.sin_port);
	snprintf(sv->host, sizeof(sv->host), "%s", o->host);
	return 0;
}

static void set_actor(struct serve *sv)
{
	const char *u = getenv("USER");
	struct passwd *pw = (u && *u) ? NULL : getpwuid(getuid());

	snprintf(sv->actor, sizeof(sv->actor), "%.100s via sluice serve",
		 (u && *u) ? u : pw ? pw->pw_name : "person");
	sv->ctx->actor = sv->actor;
}

static int set_secrets(struct serve *sv, const struct serve_opts *o, struct sl_err *err)
{
	int error;

	if (o->token && (strlen(o->token) < 16 || strlen(o->token) > SERVE_TOKEN_HEX ||
			 strspn(o->token, "0123456789abcdefABCDEF") != strlen(o->token)))
		return sl_err_set(err, SL_EINVALID, "the token must be 16 to %d hexadecimal "
				  "digits", SERVE_TOKEN_HEX);
	if (o->token)
		snprintf(sv->token, sizeof(sv->token), "%s", o->token);
	else if ((error = random_hex(sv->token, SERVE_TOKEN_HEX, err)) != 0)
		return error;
	return random_hex(sv->csrf, SERVE_TOKEN_HEX, err);
}

/*
 * A thread per connection (the event stream blocks in its own), at most
 * SERVE_CONN_MAX of them, each given SERVE_IDLE_S seconds of silence; idle
 * ones are closed by serve/conns.c. On loopback every client is 127.0.0.1: a
 * limit per address would be one on everyone, the person included.
 */
static struct MHD_Daemon *start_daemon(struct serve *sv)
{
	unsigned per_ip = strncmp(sv->host, "127.", 4) ? SERVE_CONN_KEEP / 2 : 0;

	return mhd.start(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL,
			 NULL, handle, sv, MHD_OPTION_LISTEN_SOCKET, sv->fd,
			 MHD_OPTION_NOTIFY_COMPLETED, completed, sv, MHD_OPTION_NOTIFY_CONNECTION,
			 notify, sv, MHD_OPTION_CONNECTION_LIMIT, (unsigned)SERVE_CONN_MAX,
			 MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip, MHD_OPTION_CONNECTION_TIMEOUT,
			 (unsigned)SERVE_IDLE_S, MHD_OPTION_END);
}

int serve_start(struct serve **out, struct sl_ctx *ctx, const struct serve_opts *o,
		struct sl_err *err)
{
	struct serve *sv = calloc(1, sizeof(*sv));
	int error;

	*out = NULL;
	if (!sv)
		return sl_err_set(err, SL_ERROR, "out of memory");
	sv->ctx = ctx;
	sv->fd = -1;
	sv->read_only = o->read_only;
	pthread_mutex_init(&sv->lock, NULL);
	pthread_mutex_init(&sv->conns_lock, NULL);
	if ((error = set_secrets(sv, o, err)) != 0 || (error = load_mhd(err)) != 0 ||
	    (error = listen_on(sv, o, err)) != 0)
		goto fail;
	set_actor(sv);
	snprintf(sv->realm, sizeof(sv->realm), "Basic realm=\"sluice serve %s:%d\", charset=\"UTF-8\"",
		 sv->host, sv->port);
	snprintf(sv->url, sizeof(sv->url), "http://%s:%d/?token=%s", sv->host, sv->port,
		 sv->token);
	sv->d = start_daemon(sv);
	if (!sv->d) {
		error = sl_err_set(err, SL_ERROR, "libmicrohttpd did not start on %s:%d", sv->host,
				   sv->port);
		goto fail;
	}
	*out = sv;
	return 0;
fail:
	serve_stop(sv);
	return error;
}

const char *serve_url(const struct serve *s)
{
	return s->url;
}

int serve_port(const struct serve *s)
{
	return s->port;
}

void serve_stop(struct serve *s)
{
	if (!s)
		return;
	s->stopping = 1;
	if (s->d) {
		mhd.stop(s->d); /* closes the listening socket it was given */
		s->fd = -1;
	}
	if (s->fd >= 0)
		close(s->fd);
	if (s->ctx && s->ctx->actor == s->actor)
		s->ctx->actor = NULL;
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->conns_lock);
	free(s);
}
