/* sluice serve: the event stream as Server-Sent Events (GET /events?since=SEQ). */
#include "serve/serve_int.h"
#include "store/store.h"
#include "core/time.h"

#include <jansson.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SSE_POLL_MS 250
/*
 * A ping well inside the idle limit: libmicrohttpd counts the time sse_read
 * blocks as the connection's silence and closes it past SERVE_IDLE_S, which
 * made every idle desk reconnect (and lose what was in flight) every 17 s.
 */
#define SSE_PING_MS (SERVE_IDLE_S * 1000 / 3)
#define SSE_BACKLOG 500 /* events a client that was away for long gets, at most */

struct sse {
	struct serve *sv;
	int64_t since;
	struct sl_buf pending;
	size_t off;
	int64_t wrote_ms;
};

static void add_event(struct sse *e, const struct store_event *ev)
{
	char at[40], *data;
	json_t *j;

	sl_time_iso(at, sizeof(at), ev->at_ms);
	j = json_pack("{s:I, s:s, s:s?, s:s?, s:s?, s:s?, s:s?}", "seq", (json_int_t)ev->seq, "at",
		      at, "run", ev->run_id, "work_order", ev->work_order_id, "from",
		      ev->from_state, "to", ev->to_state, "reason", ev->reason);
	data = j ? json_dumps(j, JSON_COMPACT) : NULL;
	if (data)
		sl_buf_addf(&e->pending, "id: %lld\nevent: run\ndata: %s\n\n", (long long)ev->seq,
			    data);
	free(data);
	json_decref(j);
	e->since = ev->seq;
}

/* The events after e->since, formatted into e->pending (under the server's lock). */
static void fill(struct sse *e)
{
	struct sl_err err = SL_ERR_INIT;
	struct store_event *ev = NULL;
	size_t n = 0, i;
	int64_t last;

	pthread_mutex_lock(&e->sv->lock);
	last = store_events_last(e->sv->ctx->st);
	if (e->since < last - SSE_BACKLOG)
		e->since = last - SSE_BACKLOG;
	if (last > e->since && store_events_list(e->sv->ctx->st, NULL, e->since, &ev, &n, &err) == 0)
		for (i = 0; i < n; i++)
			add_event(e, &ev[i]);
	store_events_free(ev, n);
	pthread_mutex_unlock(&e->sv->lock);
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct sse *e = cls;
	size_t n;

	(void)pos;
	for (;;) {
		if (e->off < e->pending.len) {
			n = e->pending.len - e->off < max ? e->pending.len - e->off : max;
			memcpy(buf, e->pending.ptr + e->off, n);
			e->off += n;
			e->wrote_ms = sl_now_ms();
			return (ssize_t)n;
		}
		sl_buf_reset(&e->pending);
		e->off = 0;
		if (e->sv->stopping)
			return MHD_CONTENT_READER_END_OF_STREAM;
		fill(e);
		if (!e->pending.len && sl_now_ms() - e->wrote_ms >= SSE_PING_MS)
			sl_buf_puts(&e->pending, ": ping\n\n"); /* finds a client that went away */
		if (!e->pending.len)
			sl_sleep_ms(SSE_POLL_MS);
	}
}

static void sse_free(void *cls)
{
	struct sse *e = cls;

	sl_buf_release(&e->pending);
	free(e);
}

struct MHD_Response *serve__events_response(struct req *r)
{
	/* a browser that reconnects says where it was: Last-Event-ID wins over the page's since */
	const char *last = serve__header(r, "Last-Event-ID"), *since = last ? last : serve__arg(r, "since");
	struct MHD_Response *resp;
	struct sse *e = calloc(1, sizeof(*e));

	if (!e) {
		serve__error(r, 500, "out of memory");
		return NULL;
	}
	e->sv = r->sv;
	e->since = since ? strtoll(since, NULL, 10) : 0;
	if (!since || e->since < 0) {
		pthread_mutex_lock(&r->sv->lock);
		e->since = store_events_last(r->sv->ctx->st);
		pthread_mutex_unlock(&r->sv->lock);
	}
	sl_buf_puts(&e->pending, "retry: 2000\n\n");
	resp = serve__mhd.create_from_callback(MHD_SIZE_UNKNOWN, 4096, sse_read, e, sse_free);
	if (!resp) {
		sse_free(e);
		serve__error(r, 500, "cannot start the event stream");
		return NULL;
	}
	serve__answer(r, 200, "text/event-stream; charset=utf-8");
	return resp;
}
