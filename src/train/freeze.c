/*
 * A frozen target (docs/config.md, "merge.freeze"; docs/sluice.1, sluice
 * freeze): a person's freeze in the store (`sluice freeze`, until a time or
 * `sluice unfreeze`) and the config's windows of days and hours in a time
 * zone. The train keeps testing a frozen target's cars and lands none
 * (train_decide() reads the answer); urgent work lands through a freeze
 * only when every freeze that holds allows it.
 */
#include "train/train.h"
#include "store/store.h"
#include "core/config.h"
#include "core/ctx.h"
#include "core/log.h"
#include "core/time.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

int train_window_holds(const struct sl_freeze_window *w, int wday, int minute)
{
	return wday >= 0 && wday < 7 && (w->days & (1u << wday)) && minute >= w->from_min &&
	       minute < w->to_min;
}

/* One more freeze that holds: the first one's reason; urgent work only when all allow it. */
static void add(struct train_freeze *f, const char *reason, int allow_urgent, int64_t until_ms)
{
	if (!f->frozen) {
		snprintf(f->reason, sizeof(f->reason), "%s", reason ? reason : "");
		f->allow_urgent = allow_urgent;
		f->until_ms = until_ms;
	} else {
		f->allow_urgent &= allow_urgent;
	}
	f->frozen = 1;
}

int train_frozen(struct sl_ctx *ctx, int64_t now_ms, struct train_freeze *f)
{
	const struct sl_config *cfg = ctx->cfg;
	struct store_freeze sf;
	struct sl_err err = SL_ERR_INIT;
	int error, wday, minute;
	size_t i;

	memset(f, 0, sizeof(*f));
	if ((error = store_freeze_get(ctx->st, ctx->target_ref, &sf, &err)) == 0) {
		if (!sf.until_ms || now_ms < sf.until_ms) {
			add(f, sf.reason, sf.allow_urgent, sf.until_ms);
			f->by_person = 1;
		}
		store_freeze_release(&sf);
	} else if (error != SL_ENOTFOUND) {
		/* the store unreadable: land nothing rather than through a freeze */
		sl_log(SL_LOG_WARN, "cannot read the freeze of %s: %s", ctx->target_ref, err.msg);
		add(f, "the freeze cannot be read", 0, 0);
	}
	for (i = 0; cfg && i < cfg->merge.nfreeze; i++) {
		const struct sl_freeze_window *w = &cfg->merge.freeze[i];
		if (sl_time_local(now_ms, w->tz, &wday, &minute) == 0 &&
		    train_window_holds(w, wday, minute)) {
			add(f, w->reason, w->allow_urgent, 0);
			f->by_window = 1;
		}
	}
	return f->frozen;
}

int train_frozen_for(struct sl_ctx *ctx, const char *work_order_id, int64_t now_ms,
		     struct train_freeze *f, int *urgent)
{
	struct store_wo wo = STORE_WO_INIT;
	struct sl_err err = SL_ERR_INIT;

	*urgent = 0;
	if (!train_frozen(ctx, now_ms, f))
		return 0;
	/* priority: urgent is 0 (queue/queue.h, QUEUE_PRIORITY_URGENT) */
	if (work_order_id && store_wo_get(ctx->st, work_order_id, &wo, &err) == 0)
		*urgent = wo.priority <= 0;
	store_wo_release(&wo);
	return !(*urgent && f->allow_urgent);
}

json_t *train_freeze_json(const struct train_freeze *f)
{
	char until[64];

	if (!f->frozen)
		return json_null();
	sl_time_iso(until, sizeof(until), f->until_ms);
	return json_pack("{s:s, s:s?, s:b}", "reason", f->reason, "until",
			 f->until_ms ? until : NULL, "allow_urgent", f->allow_urgent);
}

void train_freeze_line(const struct sl_ctx *ctx, const struct train_freeze *f, char *buf,
		       size_t n)
{
	char until[64];

	sl_time_iso(until, sizeof(until), f->until_ms);
	snprintf(buf, n, "target %s: frozen (%s)%s%s%s: lands nothing, tests go on", ctx->cfg->target,
		 f->reason, f->until_ms ? " until " : "", f->until_ms ? until : "",
		 f->allow_urgent ? ", urgent work lands" : "");
}
