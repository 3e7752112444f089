/* HTTP to the reviewer: libcurl, timeouts, retries with backoff, Retry-After, a bounded reply. */
#include "reviewer/reviewer.h"
#include "reviewer/reviewer_int.h"
#include "core/log.h"
#include "core/time.h"
#include "core/url.h"

/* the calls go through the table below: no type-checking macros over them */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * libcurl is loaded by the first HTTP request, not linked: its libraries
 * (TLS, HTTP/2, IDN, Kerberos, LDAP: some twenty) would otherwise be mapped
 * and relocated by every sluice process, each run's worker included, for
 * the few that talk HTTP: about 3 ms a process, half of sluice's start.
 * The soname is libcurl's ABI (4 since 2006).
 */
#define CURL_SONAME "libcurl.so.4"

static struct {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption o, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO i, ...);
	const char *(*easy_strerror)(CURLcode cc);
	void (*easy_cleanup)(CURL *c);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
} lc;

#undef curl_easy_setopt /* curl.h's three-argument checks */
#undef curl_easy_getinfo
#define curl_global_init lc.global_init
#define curl_easy_init lc.easy_init
#define curl_easy_setopt lc.easy_setopt
#define curl_easy_perform lc.easy_perform
#define curl_easy_getinfo lc.easy_getinfo
#define curl_easy_strerror lc.easy_strerror
#define curl_easy_cleanup lc.easy_cleanup
#define curl_slist_append lc.slist_append
#define curl_slist_free_all lc.slist_free_all

#define BACKOFF_FIRST_MS 500
#define BACKOFF_MAX_MS 8000
#define RETRY_AFTER_MAX_MS 30000

struct reply {
	struct sl_buf *body;
	int oversize;
};

/* One try: what came back. */
struct
try {
	CURLcode cc;
	long status;
	int64_t retry_after_ms; /* -1: none */
	int oversize;
};

static size_t on_write(char *data, size_t size, size_t n, void *p)
{
	struct reply *r = p;

	if (sl_buf_add(r->body, data, size * n) < 0) {
		r->oversize = 1;
		return 0;
	}
	return size * n;
}

static struct curl_slist *headers(const char *token)
{
	struct curl_slist *h = NULL, *t;
	struct sl_buf auth;

	h = curl_slist_append(NULL, "Content-Type: application/json");
	if (h && (t = curl_slist_append(h, "Accept: application/json")))
		h = t;
	if (!h || !token)
		return h;
	sl_buf_init(&auth, 0);
	if (!sl_buf_addf(&auth, "Authorization: Bearer %s", token) &&
	    (t = curl_slist_append(h, auth.ptr)))
		h = t;
	else
		h = (curl_slist_free_all(h), NULL);
	/* Do not leave the token in freed memory. */
	if (auth.ptr)
		memset(auth.ptr, 0, auth.len);
	sl_buf_release(&auth);
	return h;
}

static int64_t total_ms(const struct sl_config *cfg)
{
	return cfg->reviewer.timeout_ms > 0 ? cfg->reviewer.timeout_ms : 120000;
}

/* The request: a JSON POST, no redirect, http(s) only, bounded in time and reply size. */
static void setup_post(CURL *c, const struct reviewer_post *p, struct curl_slist *h,
                       struct reply *r)
{
	curl_easy_setopt(c, CURLOPT_URL, p->url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, p->body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(p->body));
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_USERAGENT, "sluice/" SLUICE_VERSION);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)p->connect_timeout_ms);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)p->timeout_ms);
	if (p->max_reply)
		curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)p->max_reply);
}

static void setup(CURL *c, const struct sl_config *cfg, const char *url, const char *body,
                  struct curl_slist *h, struct reply *r)
{
	struct reviewer_post p = {url, body, 0, 0, cfg->reviewer.max_reply};

	p.connect_timeout_ms =
	        cfg->reviewer.connect_timeout_ms > 0 ? cfg->reviewer.connect_timeout_ms : 10000;
	p.timeout_ms = total_ms(cfg);
	setup_post(c, &p, h, r);
}

static void try_once(struct try *t, CURL *c, struct reply *r)
{
	curl_off_t ra = -1;

	sl_buf_reset(r->body);
	r->oversize = 0;
	t->cc = curl_easy_perform(c);
	t->status = 0;
	t->retry_after_ms = -1;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &t->status);
	if (curl_easy_getinfo(c, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra >= 0)
		t->retry_after_ms = (int64_t)ra * 1000;
	t->oversize = r->oversize || t->cc == CURLE_FILESIZE_EXCEEDED;
}

/* 1 when another try may help: network trouble, 408, 429, 5xx. */
static int transient(const struct try *t)
{
	if (t->oversize)
		return 0;
	if (t->cc != CURLE_OK)
		return 1;
	return t->status == 408 || t->status == 429 || t->status >= 500;
}

static void describe(char *out, size_t n, const struct try *t, const struct sl_buf *body,
                     const char *token)
{
	char snip[160] = "";
	char *red;

	if (t->oversize) {
		snprintf(out, n, "reviewer reply is larger than reviewer.max_reply");
		return;
	}
	if (t->cc != CURLE_OK) {
		snprintf(out, n, "reviewer unreachable: %s", curl_easy_strerror(t->cc));
		return;
	}
	red = reviewer__redact_str(sl_buf_cstr(body), token);
	if (red)
		reviewer__snippet(snip, sizeof(snip), red, strlen(red));
	snprintf(out, n, "reviewer HTTP %ld%s%s", t->status, *snip ? ": " : "", snip);
	free(red);
}

static int64_t wait_ms(const struct try *t, int tryno)
{
	int64_t ms = (int64_t)BACKOFF_FIRST_MS << (tryno - 1 < 10 ? tryno - 1 : 10);

	if (ms > BACKOFF_MAX_MS)
		ms = BACKOFF_MAX_MS;
	if (t->retry_after_ms >= 0 && (t->status == 429 || t->status == 503))
		ms = t->retry_after_ms < RETRY_AFTER_MAX_MS ? t->retry_after_ms
		                                            : RETRY_AFTER_MAX_MS;
	return ms;
}

static int fail(const struct try *t, int tries, const char *last, struct sl_err *err)
{
	if (t->oversize)
		return sl_err_set(err, SL_EINVALID,
		                  "%s; raise reviewer.max_reply or fix the reviewer", last);
	if (!transient(t))
		return sl_err_set(err, SL_EINVALID, "%s; check reviewer.url and the token", last);
	return sl_err_set(err, SL_ETRANSIENT, "%s (after %d %s)", last, tries,
	                  tries == 1 ? "try" : "tries");
}

static int post(CURL *c, const struct sl_config *cfg, struct reply *r, const char *token,
                struct reviewer_log *log, struct sl_err *err)
{
	int tries = cfg->reviewer.retries >= 0 ? cfg->reviewer.retries + 1 : 1;
	int64_t start = sl_mono_ms(), budget = total_ms(cfg), wait;
	struct try t;
	int i;

	for (i = 1;; i++) {
		try_once(&t, c, r);
		log->tries = i;
		log->http_status = t.status;
		if (t.cc == CURLE_OK && t.status == 200 && !t.oversize) {
			log->last[0] = '\0';
			return 0;
		}
		describe(log->last, sizeof(log->last), &t, r->body, token);
		wait = wait_ms(&t, i);
		/* No retry that would start after reviewer.timeout has passed: a tick must end. */
		if (!transient(&t) || i >= tries || sl_mono_ms() - start + wait >= budget)
			return fail(&t, i, log->last, err);
		sl_log(SL_LOG_INFO, "%s, try %d of %d; trying again in %lld ms", log->last, i,
		       tries, (long long)wait);
		sl_sleep_ms(wait);
	}
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result = CURLE_FAILED_INIT;
static char curl_load_error[256];

/* One symbol of libcurl into *slot; 0, or -1 with curl_load_error set. */
static int load_sym(void *so, const char *name, void *slot)
{
	void *f = dlsym(so, name);

	if (!f) {
		snprintf(curl_load_error, sizeof(curl_load_error), "%s has no %s", CURL_SONAME,
			 name);
		return -1;
	}
	memcpy(slot, &f, sizeof(f)); /* a function pointer from dlsym's object pointer */
	return 0;
}

static int load_curl(void)
{
	void *so = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	const char *why;

	if (!so) {
		why = dlerror();
		snprintf(curl_load_error, sizeof(curl_load_error), "cannot load %s (%s); install "
			 "libcurl", CURL_SONAME, why ? why : "not found");
		return -1;
	}
	/* never closed: libcurl's global state lives as long as the process */
	return load_sym(so, "curl_global_init", &lc.global_init) ||
	       load_sym(so, "curl_easy_init", &lc.easy_init) ||
	       load_sym(so, "curl_easy_setopt", &lc.easy_setopt) ||
	       load_sym(so, "curl_easy_perform", &lc.easy_perform) ||
	       load_sym(so, "curl_easy_getinfo", &lc.easy_getinfo) ||
	       load_sym(so, "curl_easy_strerror", &lc.easy_strerror) ||
	       load_sym(so, "curl_easy_cleanup", &lc.easy_cleanup) ||
	       load_sym(so, "curl_slist_append", &lc.slist_append) ||
	       load_sym(so, "curl_slist_free_all", &lc.slist_free_all) ? -1 : 0;
}

/* libcurl loaded and curl_global_init() (not thread-safe) called: once per process, whoever asks first. */
static void curl_init(void)
{
	if (load_curl() == 0)
		curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT);
	else
		memset(&lc, 0, sizeof(lc));
}

/* The error of a request that could not be set up: libcurl missing, or out of memory. */
static int setup_failed(const char *what, struct sl_err *err)
{
	if (curl_load_error[0])
		return sl_err_set(err, SL_ERROR, "cannot set up %s: %s", what, curl_load_error);
	return sl_err_set(err, SL_ERROR, "cannot set up %s", what);
}

/*
 * "HTTP 500", or curl's description of what went wrong (curl_easy_strerror():
 * a fixed text per code, never the URL). The URL as sl_url_safe() shows it:
 * its user, password, path and query may be secrets.
 */
static int post_once_error(const struct try *t, const char *url, struct sl_err *err)
{
	char safe[SL_URL_SAFE_MAX];

	sl_url_safe(safe, sizeof(safe), url);
	if (t->cc != CURLE_OK && !t->oversize)
		return sl_err_set(err, SL_ETRANSIENT, "POST to '%s': %s", safe,
		                  curl_easy_strerror(t->cc));
	return sl_err_set(err, SL_ETRANSIENT, "POST to '%s': HTTP %ld", safe, t->status);
}

int reviewer_post_once(const struct reviewer_post *p, long *status, struct sl_err *err)
{
	struct sl_buf body = SL_BUF_INIT;
	struct reply r = {&body, 0};
	struct curl_slist *h = NULL;
	CURL *c = NULL;
	struct try t;
	int error = 0;

	*status = 0;
	sl_buf_init(&body, p->max_reply ? p->max_reply : 65536);
	pthread_once(&curl_once, curl_init);
	if (curl_init_result != CURLE_OK || !(c = curl_easy_init()) || !(h = headers(NULL))) {
		error = setup_failed("an HTTP request", err);
		goto out;
	}
	setup_post(c, p, h, &r);
	try_once(&t, c, &r);
	*status = t.status;
	/* a 2xx whose reply is over the bound was still received */
	if ((t.cc != CURLE_OK && !t.oversize) || t.status < 200 || t.status > 299)
		error = post_once_error(&t, p->url, err);
out:
	sl_buf_release(&body);
	if (h)
		curl_slist_free_all(h);
	if (c)
		curl_easy_cleanup(c);
	return error;
}

int reviewer__http_post(const struct sl_config *cfg, const char *url, const char *body,
                        const char *token, struct sl_buf *reply, struct reviewer_log *log,
                        struct sl_err *err)
{
	struct reply r = {reply, 0};
	struct curl_slist *h = NULL;
	int64_t start = sl_mono_ms();
	CURL *c = NULL;
	int error;

	if (!url || !*url)
		return sl_err_set(err, SL_EINVALID,
		                  "reviewer.url is not set; set it in .system/config.yaml");
	pthread_once(&curl_once, curl_init);
	if (curl_init_result != CURLE_OK || !(c = curl_easy_init()) || !(h = headers(token))) {
		error = setup_failed("the reviewer HTTP request", err);
		goto out;
	}
	setup(c, cfg, url, body, h, &r);
	error = post(c, cfg, &r, token, log, err);
out:
	log->elapsed_ms = sl_mono_ms() - start;
	if (h)
		curl_slist_free_all(h);
	if (c)
		curl_easy_cleanup(c);
	return error;
}
