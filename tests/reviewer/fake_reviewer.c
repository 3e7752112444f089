/*
 * fake-reviewer: the loopback reviewer of the tests and the demo.
 *
 *   fake-reviewer [--port N] [--port-file FILE] [--record DIR] [--script FILE]
 *                 [--max-seconds N] [--max-requests N]
 *
 * Listens on 127.0.0.1 (port 0: a free port, written to --port-file once
 * listening). Speaks the sluice protocol (POST to any path) and the OpenAI
 * chat-completions protocol (POST .../chat/completions). Records every
 * request as DIR/NNNN.body and DIR/NNNN.headers ("METHOD URL" then one
 * "Name: value" line per header).
 *
 * The script (JSON, re-read on every request) maps a run id, a work-order
 * id or "*" to a list of replies consumed in order; the last one repeats.
 * Rewriting the script starts every list again. A reply is a verdict
 * object ({"verdict", "comments", "criteria", ...}, sent as given) or a
 * fault, alone or combined with one:
 *   {"status": 503, "retry_after": 1, "body": {...}}  an HTTP error
 *   {"delay_ms": 3000}      wait before replying
 *   {"garbage": true}       a body that is not JSON
 *   {"close": true}         close the connection without a reply
 *   {"oversize": true, "bytes": N}   a body of N bytes (default 4 MiB)
 *   {"raw": "text"}         this body, verbatim
 *   {"fence": true}         openai: the verdict inside a ```json fence after prose
 *   {"content": "text"}     openai: this message content, verbatim
 *   {"echo_auth": true}     put the Authorization header into the comments
 *   {"openai_usage": {...}} openai: this object as the reply's "usage"
 * No match: approve, for the request's tree.
 *
 * Exits on SIGTERM or SIGINT, and after --max-seconds (default 600).
 */
#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BODY_MAX ((size_t)32 << 20)

static struct {
	const char *record, *script;
	long max_requests;
	long nrequests;
	char *script_text; /* the script as last read: a change resets the counters */
	json_t *consumed;  /* key -> number of replies consumed */
	pthread_mutex_t lock;
} g = {NULL, NULL, 1000, 0, NULL, NULL, PTHREAD_MUTEX_INITIALIZER};

struct upload {
	char *data;
	size_t len;
	int too_big;
};

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *s = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && n < (long)BODY_MAX &&
	    fseek(f, 0, SEEK_SET) == 0 && (s = calloc(1, (size_t)n + 1)) &&
	    fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		s = NULL;
	}
	fclose(f);
	return s;
}

static int write_text(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	ok = fwrite(data, 1, len, f) == len;
	return (fclose(f) == 0 && ok) ? 0 : -1;
}

static enum MHD_Result add_header(void *cls, enum MHD_ValueKind kind, const char *k, const char *v)
{
	FILE *f = cls;

	fprintf(f, "%s: %s\n", k, v ? v : "");
	return MHD_YES;
}

static void record(struct MHD_Connection *c, long n, const char *method, const char *url,
                   const struct upload *u)
{
	char path[4096];
	FILE *f;

	if (!g.record)
		return;
	snprintf(path, sizeof(path), "%s/%04ld.body", g.record, n);
	write_text(path, u->data ? u->data : "", u->len);
	snprintf(path, sizeof(path), "%s/%04ld.headers", g.record, n);
	if (!(f = fopen(path, "w")))
		return;
	fprintf(f, "%s %s\n", method, url);
	MHD_get_connection_values(c, MHD_HEADER_KIND, add_header, f);
	fclose(f);
}

/* The review request inside a body: itself, or the openai user message. */
static json_t *review_request(json_t *body, int openai)
{
	json_t *msgs, *m;
	size_t i;

	if (!openai)
		return json_incref(body);
	msgs = json_object_get(body, "messages");
	for (i = json_array_size(msgs); i-- > 0;) {
		m = json_array_get(msgs, i);
		if (json_is_string(json_object_get(m, "role")) &&
		    !strcmp(json_string_value(json_object_get(m, "role")), "user"))
			return json_loads(json_string_value(json_object_get(m, "content")), 0,
			                  NULL);
	}
	return NULL;
}

/* The next scripted reply for key, or NULL. A new reference. Called locked. */
static json_t *next_for(json_t *script, const char *key)
{
	json_t *list = json_object_get(script, key), *n;
	json_int_t used;

	if (!json_is_array(list) || !json_array_size(list))
		return json_is_object(list) ? json_incref(list) : NULL;
	n = json_object_get(g.consumed, key);
	used = n ? json_integer_value(n) : 0;
	json_object_set_new(g.consumed, key, json_integer(used + 1));
	if ((size_t)used >= json_array_size(list))
		used = (json_int_t)json_array_size(list) - 1;
	return json_incref(json_array_get(list, (size_t)used));
}

static json_t *scripted(json_t *req)
{
	const char *keys[3];
	char *text = g.script ? read_text(g.script) : NULL;
	json_t *script = text ? json_loads(text, 0, NULL) : NULL, *e = NULL;
	size_t i;

	keys[0] = json_string_value(json_object_get(req, "run_id"));
	keys[1] = json_string_value(json_object_get(json_object_get(req, "work_order"), "id"));
	keys[2] = "*";
	pthread_mutex_lock(&g.lock);
	if (!g.script_text || !text || strcmp(g.script_text, text)) {
		json_decref(g.consumed);
		g.consumed = json_object();
		free(g.script_text);
		g.script_text = text ? strdup(text) : NULL;
	}
	for (i = 0; i < 3 && !e; i++)
		if (keys[i] && script)
			e = next_for(script, keys[i]);
	pthread_mutex_unlock(&g.lock);
	json_decref(script);
	free(text);
	return e ? e : json_object();
}

static const char *const control_keys[] = {
        "status", "retry_after", "delay_ms", "garbage",   "close", "oversize", "bytes",
        "raw",    "fence",       "content",  "echo_auth", "body",  "openai_usage", NULL};

/* The verdict object of an entry: the entry without the fault keys. */
static json_t *verdict_of(json_t *e, json_t *req, const char *auth)
{
	json_t *v = json_deep_copy(e);
	size_t i;

	for (i = 0; control_keys[i]; i++)
		json_object_del(v, control_keys[i]);
	if (!json_object_get(v, "verdict")) {
		json_object_set_new(v, "verdict", json_string("approve"));
		json_object_set_new(v, "comments", json_string("looks good"));
		json_object_set_new(v, "reviewer", json_string("fake-reviewer"));
		if (json_is_string(json_object_get(req, "tree")))
			json_object_set(v, "tree", json_object_get(req, "tree"));
	}
	if (json_is_true(json_object_get(e, "echo_auth")))
		json_object_set_new(v, "comments", json_sprintf("you sent '%s'", auth ? auth : ""));
	return v;
}

static char *chat_reply(json_t *e, json_t *verdict)
{
	char *vtext = json_dumps(verdict, JSON_INDENT(2)), *out;
	json_t *content, *reply;

	if (json_is_string(json_object_get(e, "content")))
		content = json_incref(json_object_get(e, "content"));
	else if (json_is_true(json_object_get(e, "fence")))
		content = json_sprintf("Here is my review of the change.\n\n```json\n%s\n```\n",
		                       vtext);
	else
		content = json_string(vtext);
	reply = json_pack("{s:s, s:s, s:s, s:[{s:i, s:{s:s, s:o}, s:s}]}", "id", "chatcmpl-fake",
	                  "object", "chat.completion", "model", "fake-model", "choices", "index", 0,
	                  "message", "role", "assistant", "content", content, "finish_reason",
	                  "stop");
	if (json_is_object(json_object_get(e, "openai_usage")))
		json_object_set(reply, "usage", json_object_get(e, "openai_usage"));
	out = json_dumps(reply, 0);
	json_decref(reply);
	free(vtext);
	return out;
}

static char *error_body(json_t *e, const char *auth, int status)
{
	json_t *b = json_object_get(e, "body");
	json_t *o;
	char *out;

	if (b)
		return json_dumps(b, JSON_ENCODE_ANY);
	if (json_is_true(json_object_get(e, "echo_auth")))
		o = json_pack("{s:{s:s}}", "error", "message", auth ? auth : "");
	else
		o = json_pack("{s:{s:i}}", "error", "status", status);
	out = json_dumps(o, 0);
	json_decref(o);
	return out;
}

static char *reply_body(json_t *e, json_t *req, const char *auth, int openai, int status)
{
	json_t *v;
	char *out;
	size_t n;

	if (json_is_true(json_object_get(e, "garbage")))
		return strdup("<html>this is not JSON {");
	if (json_is_true(json_object_get(e, "oversize"))) {
		n = json_is_integer(json_object_get(e, "bytes"))
		            ? (size_t)json_integer_value(json_object_get(e, "bytes"))
		            : (size_t)4 << 20;
		if (n > BODY_MAX)
			n = BODY_MAX;
		if ((out = malloc(n + 1))) {
			memset(out, 'x', n);
			out[n] = '\0';
		}
		return out;
	}
	if (json_is_string(json_object_get(e, "raw")))
		return strdup(json_string_value(json_object_get(e, "raw")));
	if (status != 200)
		return error_body(e, auth, status);
	v = verdict_of(e, req, auth);
	out = openai ? chat_reply(e, v) : json_dumps(v, JSON_INDENT(2));
	json_decref(v);
	return out;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (ms > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static enum MHD_Result send_text(struct MHD_Connection *c, int status, char *text, json_t *e)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char ra[32];

	if (!text)
		return MHD_NO;
	r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/json");
	if (json_is_integer(json_object_get(e, "retry_after"))) {
		snprintf(ra, sizeof(ra), "%lld",
		         (long long)json_integer_value(json_object_get(e, "retry_after")));
		MHD_add_response_header(r, "Retry-After", ra);
	}
	ret = MHD_queue_response(c, (unsigned int)status, r);
	MHD_destroy_response(r);
	return ret;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

static enum MHD_Result answer(struct MHD_Connection *c, const char *method, const char *url,
                              struct upload *u)
{
	int openai = ends_with(url, "/chat/completions");
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	json_t *body = NULL, *req = NULL, *e = NULL;
	long n;
	int status;
	enum MHD_Result ret;

	pthread_mutex_lock(&g.lock);
	n = ++g.nrequests;
	pthread_mutex_unlock(&g.lock);
	if (n > g.max_requests)
		return MHD_NO;
	record(c, n, method, url, u);
	if (u->too_big)
		return send_text(c, 413, strdup("{\"error\":\"request too large\"}"), NULL);
	body = u->data ? json_loadb(u->data, u->len, 0, NULL) : NULL;
	req = body ? review_request(body, openai) : NULL;
	if (!req)
		return send_text(c, 400, strdup("{\"error\":\"not a review request\"}"), NULL);
	e = scripted(req);
	if (json_is_integer(json_object_get(e, "delay_ms")))
		sleep_ms((long)json_integer_value(json_object_get(e, "delay_ms")));
	if (json_is_true(json_object_get(e, "close")))
		ret = MHD_NO;
	else {
		status = json_is_integer(json_object_get(e, "status"))
		                 ? (int)json_integer_value(json_object_get(e, "status"))
		                 : 200;
		ret = send_text(c, status, reply_body(e, req, auth, openai, status), e);
	}
	json_decref(e);
	json_decref(req);
	json_decref(body);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **state)
{
	struct upload *u = *state;
	char *p;

	if (!u) {
		if (!(u = calloc(1, sizeof(*u))))
			return MHD_NO;
		*state = u;
		return MHD_YES;
	}
	if (*size) {
		if (u->len + *size > BODY_MAX || !(p = realloc(u->data, u->len + *size + 1))) {
			u->too_big = 1;
		} else {
			u->data = p;
			memcpy(u->data + u->len, data, *size);
			u->len += *size;
			u->data[u->len] = '\0';
		}
		*size = 0;
		return MHD_YES;
	}
	if (strcmp(method, "POST"))
		return send_text(c, 405, strdup("{\"error\":\"POST only\"}"), NULL);
	return answer(c, method, url, u);
}

static void on_done(void *cls, struct MHD_Connection *c, void **state,
                    enum MHD_RequestTerminationCode why)
{
	struct upload *u = *state;

	if (u) {
		free(u->data);
		free(u);
		*state = NULL;
	}
}

static int write_port(const char *path, unsigned port)
{
	char tmp[4096], text[32];

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	snprintf(text, sizeof(text), "%u\n", port);
	if (write_text(tmp, text, strlen(text)) < 0)
		return -1;
	return rename(tmp, path);
}

static struct MHD_Daemon *start(unsigned port)
{
	struct sockaddr_in addr;

	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)port);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION,
	                        (uint16_t)port, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR,
	                        (struct sockaddr *)&addr, MHD_OPTION_NOTIFY_COMPLETED, on_done,
	                        NULL, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)60,
	                        MHD_OPTION_END);
}

static void usage(void)
{
	fprintf(stderr, "usage: fake-reviewer [--port N] [--port-file FILE] [--record DIR] "
	                "[--script FILE] [--max-seconds N] [--max-requests N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *port_file = NULL;
	long port = 0, max_seconds = 600;
	struct MHD_Daemon *d;
	struct timespec ts;
	time_t deadline;
	sigset_t set;
	int i, sig;

	for (i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--port"))
			port = atol(argv[++i]);
		else if (!strcmp(argv[i], "--port-file"))
			port_file = argv[++i];
		else if (!strcmp(argv[i], "--record"))
			g.record = argv[++i];
		else if (!strcmp(argv[i], "--script"))
			g.script = argv[++i];
		else if (!strcmp(argv[i], "--max-seconds"))
			max_seconds = atol(argv[++i]);
		else if (!strcmp(argv[i], "--max-requests"))
			g.max_requests = atol(argv[++i]);
		else
			usage();
	}
	if (port < 0 || port > 65535 || max_seconds <= 0)
		usage();
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (!(d = start((unsigned)port))) {
		fprintf(stderr, "fake-reviewer: cannot listen on 127.0.0.1:%ld\n", port);
		return 1;
	}
	port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
	if (port_file && write_port(port_file, (unsigned)port) < 0) {
		fprintf(stderr, "fake-reviewer: cannot write '%s'\n", port_file);
		MHD_stop_daemon(d);
		return 1;
	}
	deadline = time(NULL) + max_seconds;
	do {
		ts.tv_sec = deadline - time(NULL);
		ts.tv_nsec = 0;
		sig = ts.tv_sec > 0 ? sigtimedwait(&set, NULL, &ts) : (errno = 0, -1);
	} while (sig < 0 && errno == EINTR);
	MHD_stop_daemon(d);
	json_decref(g.consumed);
	free(g.script_text);
	return 0;
}
