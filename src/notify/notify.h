#ifndef SL_NOTIFY_NOTIFY_H
#define SL_NOTIFY_NOTIFY_H
/*
 * Notifications (docs/config.md, "Notifications"): the outbox the store
 * fills in each move's transaction (store/notify.c), told to notify.command
 * and notify.url. Below the runner: the tick calls notify_deliver() at its
 * end, `sluice notify --replay` calls notify_replay().
 */
#include "core/ctx.h"
#include "core/err.h"

#include <stdint.h>

/*
 * Deliver the pending notifications (docs/config.md
 * "notify") to notify.command and notify.url, each bounded by
 * notify.timeout; the tick calls it at its end: what is due, oldest first.
 * A notifier's failure is a warning in the log (tried again 30 s later, the
 * wait doubling to 1 h, until notify.retry_for after the event), never an
 * error here: the error is the store's, or the lock file's.
 */
int notify_deliver(struct sl_ctx *ctx, struct sl_err *err);

/*
 * `sluice notify --replay SEQ`: send the event of outbox row `seq` now to
 * every notifier configured, whatever its state (delivered, given up,
 * pending), under .system/notify.lock (waiting for a tick delivering, a
 * minute at most). Sent to each, the row is marked delivered; else a
 * pending row keeps its schedule (a done one is left as it was). SL_ENOTFOUND for an unknown seq,
 * SL_EINVALID with no notifier, SL_ETRANSIENT when a notifier failed (the
 * message says why, the URL shown by sl_url_safe()).
 */
int notify_replay(struct sl_ctx *ctx, int64_t seq, struct sl_err *err);

#endif
