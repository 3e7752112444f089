/*
 * sluice serve: the connections it holds, so that idle ones cannot lock the
 * person out (docs/serve.md, "Security"). Each connection has a slot from
 * libmicrohttpd's notification; one that holds no request in progress (never
 * sent one, or waits between two) is idle. A connection is given
 * SERVE_IDLE_S seconds to send its request, and beyond SERVE_CONN_KEEP
 * connections each new one closes the oldest idle ones, so that the person's
 * request always finds a thread while others only hold sockets open. All
 * loopback clients are 127.0.0.1, so a limit per address would count the
 * person's browser with everyone else.
 */
#include "serve/serve_int.h"
#include "core/time.h"

#include <string.h>
#include <sys/socket.h>

/* Shut the slot's connection down: its thread sees the end, libmicrohttpd closes it. */
static void evict(struct serve *sv, struct serve_conn *s)
{
	shutdown(s->fd, SHUT_RDWR);
	s->evicted = 1;
	sv->nlive--;
}

/* Under conns_lock: the late idle connections, then the oldest idle ones beyond the keep. */
static void sweep(struct serve *sv)
{
	int64_t now = sl_now_ms();
	struct serve_conn *old;
	size_t i;

	for (i = 0; i < SERVE_CONN_MAX; i++) {
		struct serve_conn *s = &sv->conns[i];
		if (s->used && !s->evicted && !s->busy && now - s->since_ms > SERVE_IDLE_S * 1000)
			evict(sv, s);
	}
	while (sv->nlive > SERVE_CONN_KEEP) {
		old = NULL;
		for (i = 0; i < SERVE_CONN_MAX; i++) {
			struct serve_conn *s = &sv->conns[i];
			if (s->used && !s->evicted && !s->busy && (!old || s->since_ms < old->since_ms))
				old = s;
		}
		if (!old)
			return; /* every one is answering a request */
		evict(sv, old);
	}
}

struct serve_conn *serve__conn_started(struct serve *sv, int fd)
{
	struct serve_conn *s = NULL;
	size_t i;

	pthread_mutex_lock(&sv->conns_lock);
	for (i = 0; i < SERVE_CONN_MAX && sv->conns[i].used; i++)
		;
	if (i < SERVE_CONN_MAX) {
		s = &sv->conns[i];
		memset(s, 0, sizeof(*s));
		s->used = 1;
		s->fd = fd;
		s->since_ms = sl_now_ms();
		sv->nlive++;
		sweep(sv);
	}
	pthread_mutex_unlock(&sv->conns_lock);
	return s;
}

void serve__conn_closed(struct serve *sv, struct serve_conn *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&sv->conns_lock);
	if (!s->evicted)
		sv->nlive--;
	s->used = 0;
	pthread_mutex_unlock(&sv->conns_lock);
}

void serve__conn_busy(struct serve *sv, struct serve_conn *s, int busy)
{
	if (!s)
		return;
	pthread_mutex_lock(&sv->conns_lock);
	s->busy = busy;
	s->since_ms = sl_now_ms(); /* an idle one's time to send its next request starts */
	pthread_mutex_unlock(&sv->conns_lock);
}
