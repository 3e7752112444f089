/*
 * Notifications (docs/config.md, "notify"): each move of a run into merged,
 * merge_conflict, rejected or failed is told to notify.command (the event
 * as one JSON object on its stdin) and to notify.url (the same JSON,
 * POSTed). The store keeps an outbox row per move, added in the move's own
 * transaction (store/notify.c); notify_deliver() sends the pending
 * rows at the end of every tick and marks them.
 *
 * A notifier never holds the queue up: it runs after the tick's work, each
 * delivery is bounded by notify.timeout (a command's whole process group is
 * killed), a channel that failed, timed out or could not be reached is not
 * tried again in the same tick, and every failure is a warning, never the
 * tick's error. A failed event is tried again over time, not over ticks: 30 s
 * after its first failure, the wait doubling to 1 h (next_ms), until
 * notify.retry_for after its move; then it is given up with a warning. Each
 * channel hears its events in order: one that failed, or that waits for its
 * next try, holds the later ones back for that channel. Delivery is at
 * least once: a tick killed between a notifier's success and the row's mark
 * delivers that event again; `sluice notify --replay SEQ` sends one again
 * on purpose (notify_replay()).
 *
 * No message shows notify.url whole: it may carry a user, a password or a
 * token in its path or query. reviewer_post_once() names it by
 * sl_url_safe() (core/url.h), scheme://host[:port]/ alone.
 */
#include "notify/notify.h"
#include "executor/executor.h"
#include "reviewer/reviewer.h"
#include "store/store.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/lock.h"
#include "core/log.h"
#include "core/proc.h"
#include "core/time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOTIFY_BATCH 200          /* events looked at per tick */
#define NOTIFY_OUT_MAX 4096       /* a command's output kept (for the message) */
#define NOTIFY_CONNECT_MAX_MS 5000 /* the URL's connect timeout, at most */
#define NOTIFY_BACKOFF_FIRST_MS (30 * 1000) /* after a first failure */
#define NOTIFY_BACKOFF_MAX_MS (3600 * 1000) /* the wait doubles up to this */
#define NOTIFY_REPLAY_WAIT_MS (60 * 1000)   /* for a tick delivering, at most */

/* One delivery channel's state for the rest of this tick. */
struct channel {
	unsigned bit;          /* STORE_NOTIFY_COMMAND or STORE_NOTIFY_URL */
	int down;              /* failed, or an earlier event waits: nothing more this tick */
};

/* The event as JSON (schema/notify-event.schema.json); a new reference, NULL when out of memory. */
static json_t *event_json(const struct sl_ctx *ctx, const struct store_notify *n)
{
	char at[40];

	sl_time_iso(at, sizeof(at), n->at_ms);
	if (n->period) /* budget_spent: no run, no work order (store_notify_budget) */
		return json_pack("{s:s, s:s, s:n, s:n, s:s, s:s, s:n, s:s, s:s, s:n, s:s, s:s, s:I, "
				 "s:s}",
				 "schema", "sluice.notify.v1", "event", n->event, "run",
				 "work_order", "title", "", "state", n->event, "from", "reason",
				 n->reason, "target", n->target, "commit", "at", at, "repo",
				 ctx->repo.root, "seq", (json_int_t)n->seq, "period", n->period);
	if (n->gate) /* watch_red: a gate, its red tip, the culprit run if one (store_notify_watch) */
		return json_pack("{s:s, s:s, s:s?, s:s?, s:s, s:s, s:n, s:s, s:s, s:s, s:s, s:s, s:I, "
				 "s:s}",
				 "schema", "sluice.notify.v1", "event", n->event, "run",
				 n->run_id[0] ? n->run_id : NULL, "work_order",
				 n->work_order_id[0] ? n->work_order_id : NULL, "title", n->title,
				 "state", n->event, "from", "reason", n->reason, "target", n->target,
				 "commit", n->commit ? n->commit : "", "at", at, "repo",
				 ctx->repo.root, "seq", (json_int_t)n->seq, "gate", n->gate);
	if (n->path) /* invalid_work_order: a file, no run (store_notify_invalid_tx) */
		return json_pack("{s:s, s:s, s:n, s:s, s:s, s:s, s:n, s:s, s:s, s:n, s:s, s:s, s:I, "
				 "s:s}",
				 "schema", "sluice.notify.v1", "event", n->event, "run",
				 "work_order", n->work_order_id, "title", n->title, "state",
				 wo_state_name(WO_INVALID), "from", "reason", n->reason, "target",
				 ctx->target_ref, "commit", "at", at, "repo", ctx->repo.root, "seq",
				 (json_int_t)n->seq, "path", n->path);
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:s, s:s, s:I}",
			 "schema", "sluice.notify.v1", "event", n->event, "run", n->run_id,
			 "work_order", n->work_order_id, "title", n->title, "state", n->event,
			 "from", n->from_state, "reason", n->reason, "target", n->target, "commit",
			 n->commit ? json_string(n->commit) : json_null(), "at", at, "repo",
			 ctx->repo.root, "seq", (json_int_t)n->seq);
}

/* Up to n printable bytes of s: control bytes become ' ', for a log line. */
static void snippet(char *out, size_t n, const char *s)
{
	size_t i;

	for (i = 0; s && s[i] && i + 1 < n; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i];
	out[i] = '\0';
}

/* The notifier's environment: SLUICE_* added; less git's list and the reviewer's token (exec_env_drop). */
static int command_env(const struct sl_ctx *ctx, const struct store_notify *n, char **add,
		       sl_strv *drop)
{
	struct sl_err err = SL_ERR_INIT;

	if (asprintf(&add[0], "SLUICE_EVENT=%s", n->event) < 0 ||
	    asprintf(&add[1], "SLUICE_RUN_ID=%s", n->path || n->period ? "" : n->run_id) < 0 ||
	    asprintf(&add[2], "SLUICE_WORK_ORDER_ID=%s", n->work_order_id) < 0 ||
	    asprintf(&add[3], "SLUICE_REPO=%s", ctx->repo.root) < 0)
		return -1;
	return exec_env_drop(drop, ctx->cfg, (const char *const *)add, &err) < 0 ? -1 : 0;
}

static void command_why(char *why, size_t n, const struct sl_proc_result *res,
			const struct sl_buf *errout)
{
	char how[64], tail[200];

	sl_proc_describe(how, sizeof(how), res);
	snippet(tail, sizeof(tail), sl_buf_cstr(errout));
	snprintf(why, n, "notify.command %s%s%s", how, *tail ? ": " : "", tail);
}

/* Run notify.command with `body` on stdin: 0 when it exited 0, else -1 with *why (and *down on a timeout). */
static int send_command(const struct sl_ctx *ctx, const struct store_notify *n, const char *body,
			char *why, size_t whyn, int *down)
{
	struct sl_proc_opts po = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_buf out, errout;
	struct sl_err err = SL_ERR_INIT;
	char *add[5] = { NULL }, *owner = sl_path_join(ctx->repo.sysdir, "notify.owner");
	sl_strv drop = NULL;
	int error = -1;

	sl_buf_init(&out, NOTIFY_OUT_MAX);
	sl_buf_init(&errout, NOTIFY_OUT_MAX);
	memset(&res, 0, sizeof(res));
	if (!owner || command_env(ctx, n, add, &drop) < 0) {
		snprintf(why, whyn, "out of memory");
		goto out;
	}
	po.argv = (const char *const *)ctx->cfg->notify.command;
	po.env_add = (const char *const *)add;
	po.env_drop = (const char *const *)drop;
	po.cwd = ctx->repo.root;
	po.stdin_data = body;
	po.stdin_len = strlen(body);
	po.out = &out;
	po.errout = &errout;
	po.timeout_ms = ctx->cfg->notify.timeout_ms;
	po.kill_grace_ms = 1000;
	po.owner_file = owner;
	if (sl_proc_run(&po, &res, &err) != 0)
		snprintf(why, whyn, "notify.command: %.400s", err.msg);
	else if (res.exit_code != 0 || res.timed_out)
		command_why(why, whyn, &res, &errout);
	else
		error = 0;
	*down = res.timed_out;
out:
	for (size_t i = 0; i < 4; i++)
		free(add[i]);
	sl_strv_free(drop);
	free(owner);
	sl_buf_release(&out);
	sl_buf_release(&errout);
	return error;
}

/* POST `body` to notify.url: 0 on a 2xx, else -1 with *why (and *down when no answer came). */
static int send_url(const struct sl_ctx *ctx, const char *body, char *why, size_t whyn, int *down)
{
	struct reviewer_post p = { ctx->cfg->notify.url, body, 0, ctx->cfg->notify.timeout_ms, 0 };
	struct sl_err err = SL_ERR_INIT;
	long status = 0;

	p.connect_timeout_ms = p.timeout_ms < NOTIFY_CONNECT_MAX_MS ? p.timeout_ms
								    : NOTIFY_CONNECT_MAX_MS;
	if (reviewer_post_once(&p, &status, &err) == 0)
		return 0;
	snprintf(why, whyn, "notify.url: %.400s", err.msg);
	*down = status == 0;
	return -1;
}

/* The channels configured: STORE_NOTIFY_* bits. */
static unsigned configured(const struct sl_config *cfg)
{
	return (cfg->notify.command && cfg->notify.command[0] ? STORE_NOTIFY_COMMAND : 0) |
	       (cfg->notify.url && cfg->notify.url[0] ? STORE_NOTIFY_URL : 0);
}

/*
 * Try the channels of `n` not sent yet (and not down this tick): *tried
 * says whether any was tried, *failed whether one of those failed.
 */
static void send_one(const struct sl_ctx *ctx, struct store_notify *n, const char *body,
		     struct channel ch[2], int *tried, int *failed, char *why, size_t whyn)
{
	unsigned want = configured(ctx->cfg);

	*tried = *failed = 0;
	for (int i = 0; i < 2; i++) {
		char msg[512] = "";
		int rc;

		if (!(want & ch[i].bit) || (n->sent & ch[i].bit) || ch[i].down)
			continue;
		*tried = 1;
		rc = ch[i].bit == STORE_NOTIFY_COMMAND
			     ? send_command(ctx, n, body, msg, sizeof(msg), &ch[i].down)
			     : send_url(ctx, body, msg, sizeof(msg), &ch[i].down);
		if (rc == 0) {
			n->sent |= ch[i].bit;
		} else {
			size_t len = strlen(why);

			/* nothing later goes to it this tick: each channel hears its events in order */
			ch[i].down = 1;
			*failed = 1;
			/* both channels' errors, one after the other */
			snprintf(why + len, whyn - len, "%s%s", len ? "; " : "", msg);
		}
	}
}

/* The wait after the n-th failed try: 30 s, doubling, 1 h at most. */
static int64_t backoff_ms(int tries)
{
	int64_t ms = NOTIFY_BACKOFF_FIRST_MS;

	for (int i = 1; i < tries && ms < NOTIFY_BACKOFF_MAX_MS; i++)
		ms *= 2;
	return ms < NOTIFY_BACKOFF_MAX_MS ? ms : NOTIFY_BACKOFF_MAX_MS;
}

/* After a failed try (n->tries counts it): given up (1), or the next try's time set (0). */
static int failed_try(const struct sl_ctx *ctx, struct store_notify *n, const char *why,
		      int64_t now)
{
	const struct sl_config *cfg = ctx->cfg;
	char wait[32], of[24] = "";

	if (now - n->at_ms >= cfg->notify.retry_for_ms ||
	    (cfg->notify.tries > 0 && n->tries >= cfg->notify.tries)) {
		sl_log(SL_LOG_WARN, "notification '%s' of run %s given up after %d %s: %s",
		       n->event, n->run_id, n->tries, n->tries == 1 ? "try" : "tries", why);
		return 1;
	}
	n->next_ms = now + backoff_ms(n->tries);
	sl_duration_format(wait, sizeof(wait), n->next_ms - now);
	if (cfg->notify.tries > 0)
		snprintf(of, sizeof(of), " of %d", cfg->notify.tries);
	sl_log(SL_LOG_WARN, "notification '%s' of run %s failed (try %d%s): %s; the first tick "
	       "after %s tries again", n->event, n->run_id, n->tries, of, why, wait);
	return 0;
}

/* The event as one line of JSON, its newline included (the caller's, free()); NULL when out of memory. */
static char *event_line(const struct sl_ctx *ctx, const struct store_notify *n)
{
	json_t *j = event_json(ctx, n);
	char *line = j ? json_dumps(j, JSON_COMPACT) : NULL, *body = NULL;

	/* one line: a command may append it to a JSON Lines file as it is */
	if (line && asprintf(&body, "%s\n", line) < 0)
		body = NULL;
	free(line);
	json_decref(j);
	return body;
}

/* Deliver one event and record what happened. */
static void deliver_one(struct sl_ctx *ctx, struct store_notify *n, struct channel ch[2],
			int64_t now)
{
	struct sl_err err = SL_ERR_INIT;
	char why[1100] = "", *body = event_line(ctx, n);
	const char *outcome = NULL;
	int tried = 0, failed = 0;

	if (!body)
		return;
	send_one(ctx, n, body, ch, &tried, &failed, why, sizeof(why));
	free(body);
	if (!tried)
		return; /* every channel it still needs is down this tick */
	/* else sent where it could be (recorded): the channel that is down is tried later */
	if ((n->sent & configured(ctx->cfg)) == configured(ctx->cfg))
		outcome = STORE_NOTIFY_DELIVERED;
	else if (failed && (n->tries++, failed_try(ctx, n, why, now)))
		outcome = STORE_NOTIFY_GIVEN_UP;
	if (*why) {
		free(n->last_error);
		n->last_error = strdup(why);
	}
	if (store_notify_mark(ctx->st, n, outcome, &err) != 0)
		sl_log(SL_LOG_WARN, "cannot record the notification of run %s: %s", n->run_id,
		       err.msg);
}

/* An event whose next try has not come holds the channels it still needs, for order. */
static void hold(const struct store_notify *n, unsigned want, struct channel ch[2], int64_t now)
{
	if (n->next_ms <= now)
		return;
	for (int i = 0; i < 2; i++)
		if ((want & ch[i].bit) && !(n->sent & ch[i].bit))
			ch[i].down = 1;
}

/* 1 when every channel configured is down for the rest of this tick. */
static int all_down(unsigned want, const struct channel ch[2])
{
	for (int i = 0; i < 2; i++)
		if ((want & ch[i].bit) && !ch[i].down)
			return 0;
	return 1;
}

static void deliver_pending(struct sl_ctx *ctx)
{
	struct channel ch[2] = { { STORE_NOTIFY_COMMAND, 0 }, { STORE_NOTIFY_URL, 0 } };
	struct store_notify *v = NULL;
	struct sl_err err = SL_ERR_INIT;
	unsigned want = configured(ctx->cfg);
	int64_t now = sl_now_ms();
	size_t n = 0;

	if (store_notify_list(ctx->st, 1, NOTIFY_BATCH, &v, &n, &err) != 0) {
		sl_log(SL_LOG_WARN, "cannot read the notifications: %s", err.msg);
		return;
	}
	for (size_t i = 0; i < n && !all_down(want, ch); i++) {
		hold(&v[i], want, ch, now);
		deliver_one(ctx, &v[i], ch, now);
	}
	store_notify_free(v, n);
}

/* Nobody to tell: the pending events are marked so (a write only when there are some). */
static int settle_untold(struct sl_ctx *ctx, struct sl_err *err)
{
	struct store_notify *v = NULL;
	size_t n = 0;
	int error;

	if ((error = store_notify_list(ctx->st, 1, 1, &v, &n, err)) != 0)
		return error;
	store_notify_free(v, n);
	return n ? store_notify_settle_all(ctx->st, STORE_NOTIFY_NO_NOTIFIER, err) : 0;
}

/* Take .system/notify.lock (waiting up to wait_ms) and end a notifier a killed tick left. */
static int deliverer_lock(struct sl_ctx *ctx, struct sl_lock *lock, int64_t wait_ms,
			  struct sl_err *err)
{
	char *path = sl_path_join(ctx->repo.sysdir, "notify.lock");
	char *owner = sl_path_join(ctx->repo.sysdir, "notify.owner");
	int error;

	if (!path || !owner) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = sl_lock_acquire(lock, path, wait_ms, err)) != 0)
		goto out;
	/* a notifier left running by a killed tick */
	sl_owner_kill_group(owner);
out:
	free(path);
	free(owner);
	return error;
}

int notify_deliver(struct sl_ctx *ctx, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	int error;

	if (!configured(ctx->cfg))
		return settle_untold(ctx, err);
	/* one deliverer at a time: overlapping ticks never send an event twice */
	if ((error = deliverer_lock(ctx, &lock, 0, err)) != 0) {
		if (error == SL_ELOCKED) /* another tick delivers them */
			error = 0, sl_err_clear(err);
		return error;
	}
	deliver_pending(ctx);
	sl_lock_release(&lock);
	return 0;
}

/* Send n to every channel configured, whatever it had; 0 when each took it, else -1 with why. */
static int replay_send(struct sl_ctx *ctx, struct store_notify *n, char *why, size_t whyn)
{
	struct channel ch[2] = { { STORE_NOTIFY_COMMAND, 0 }, { STORE_NOTIFY_URL, 0 } };
	char *body = event_line(ctx, n);
	int tried = 0, failed = 0;

	if (!body) {
		snprintf(why, whyn, "out of memory");
		return -1;
	}
	n->sent = 0;
	send_one(ctx, n, body, ch, &tried, &failed, why, whyn);
	free(body);
	return failed ? -1 : 0;
}

int notify_replay(struct sl_ctx *ctx, int64_t seq, struct sl_err *err)
{
	struct sl_lock lock = SL_LOCK_INIT;
	struct store_notify n;
	unsigned had;
	char why[1100] = "";
	int error;

	if ((error = store_notify_get(ctx->st, seq, &n, err)) != 0)
		return error;
	if (!configured(ctx->cfg)) {
		error = sl_err_set(err, SL_EINVALID, "no notifier to send notification %lld to; set "
				   "notify.command or notify.url in .system/config.yaml", (long long)seq);
		goto out;
	}
	if ((error = deliverer_lock(ctx, &lock, NOTIFY_REPLAY_WAIT_MS, err)) != 0)
		goto out;
	had = n.sent;
	if (replay_send(ctx, &n, why, sizeof(why)) == 0) {
		/* delivered now, whatever it was: a tick owes it nothing more */
		error = store_notify_mark(ctx->st, &n, STORE_NOTIFY_DELIVERED, err);
		goto out;
	}
	error = sl_err_set(err, SL_ETRANSIENT, "notification %lld ('%s' of run %s) not sent: %s",
			   (long long)seq, n.event, n.run_id, why);
	if (!n.done) { /* pending: what went out now is not sent again by a tick */
		struct sl_err e2 = SL_ERR_INIT;

		n.sent |= had;
		store_notify_mark(ctx->st, &n, NULL, &e2);
	}
out:
	sl_lock_release(&lock);
	store_notify_release(&n);
	return error;
}
