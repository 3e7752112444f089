#ifndef SL_WATCH_WATCH_H
#define SL_WATCH_WATCH_H
/*
 * The watch of the target (docs/watch.md): watch gates run on the target's
 * tip (`sluice watch`, from cron), a red one is run again before it is
 * believed, and a believed red one is bisected over the first-parent
 * landings since its last green result, to name the landing that broke it.
 * The decisions (whether a red run is believed, which landing is tested
 * next) are pure functions without I/O; watch_gate() runs them. Reverts and
 * fix-up work orders are not built yet.
 */
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/* What one or two runs of a watch gate on one commit say. */
enum sl_watch_verdict {
	SL_WATCH_GREEN, /* the first run passed */
	SL_WATCH_RED,   /* red, and red again: believed */
	SL_WATCH_FLAKY, /* red, then green: not believed (no bisection starts) */
	SL_WATCH_AGAIN  /* red once: run it again before believing it */
};

/* first: 1 red, 0 green; again: the second run's 1 or 0, or -1 when not run yet. */
enum sl_watch_verdict sl_watch_verdict(int first, int again);

/*
 * Bisection over the n first-parent landings since a watch gate's last
 * green commit, oldest first: landing n - 1 is the tip, known red, and the
 * commit before landing 0 is known green. Between them, green and red are
 * assumed to change once; the next landing tested halves what is unknown, so
 * ceil(log2(n)) tests find the first red one.
 */
struct sl_bisect {
	size_t green; /* landings [0, green) are known green */
	size_t red;   /* the oldest landing known red */
};

void sl_bisect_init(struct sl_bisect *b, size_t n);
/* 1 and *pick the landing to test next, or 0: done, sl_bisect_culprit() says which. */
int sl_bisect_next(const struct sl_bisect *b, size_t *pick);
/* Landing i tested red (1, believed: see sl_watch_verdict) or green (0). */
void sl_bisect_record(struct sl_bisect *b, size_t i, int red);
/* The first red landing, once sl_bisect_next() said 0. */
size_t sl_bisect_culprit(const struct sl_bisect *b);

/* ---- Running a watch gate (watch/run.c) ---- */
struct sl_ctx;
struct sl_gate;
struct sl_err;

/* What watch_gate() found. */
struct watch_report {
	char tip[41];              /* the target's tip it ran on */
	enum sl_watch_verdict verdict; /* GREEN, RED (believed) or FLAKY */
	char last_green[41];       /* the newest commit the gate passed on before ("": none) */
	size_t landings;           /* the first-parent commits since it, bisected over */
	size_t tests;              /* the commits the bisection tested */
	size_t runs;               /* its runs of the gate (a red one's run again counts) */
	char culprit[41];          /* the first red commit ("": not found) */
	char *culprit_run;         /* the run it landed, NULL: a person's commit */
	char *culprit_subject;
	char log[4096];            /* the tip's first run's output, relative to .system/ */
	struct sl_buf steps;       /* the tip's and the bisection's commits, one line each */
	/* the culprit run's revert (watch/revert.c): its work orders, NULL when none */
	char *revert_wo, *fix_wo;
	const char *not_reverted;  /* why a run's landing is not reverted, or NULL */
	int revert_new;            /* 1: made by this watch; 0: made before (never twice) */
	int revert_pending;        /* 1: not bisected: a revert of this gate's culprit is on its way */
};
void watch_report_release(struct watch_report *r);

/*
 * Run gate g on the target's tip in a checkout of its own, again when red,
 * and, when red twice, bisect the landings since its last green result;
 * every run recorded (store watch_results), a culprit landing's run told in
 * its event log. Takes .system/watch.lock (SL_ELOCKED: another watch runs).
 */
int watch_gate(struct sl_ctx *ctx, const struct sl_gate *g, struct watch_report *r,
	       struct sl_err *err);

/*
 * watch.every: N (docs/watch.md): 1 when gate g is due in a tick, N runs'
 * landings or more since the commit its last tip result ran on (*since
 * how many, at most N), or it never ran; 0 when not (or watch.every is 0);
 * < 0 on an error.
 */
int watch_due(struct sl_ctx *ctx, const struct sl_gate *g, size_t *since, struct sl_err *err);

/* ---- Reverts and fix-ups (watch/revert.c) ---- */

/*
 * The culprit run's landing r->culprit reverted through the train: the
 * work orders <WO>-revert (revert: {commit, run, gate}, the failing output
 * and the bisection in its body) and <WO>-fix (the work order again,
 * depending on the revert, with its diff and what went wrong) staged in
 * .system/watch/reverts/, recorded (store watch_reverts: a landing is
 * reverted once), then written into the inbox. r->revert_wo, fix_wo,
 * revert_new say what came of it.
 */
int watch_revert(struct sl_ctx *ctx, const struct sl_gate *g, struct watch_report *r,
		 struct sl_err *err);
/*
 * Each recorded revert's work orders that are neither in the store nor in
 * the inbox, written; a row that cannot be is a warning in the log (the
 * next watch tries again), never an error that stops a watch.
 */
void watch_revert_resume(struct sl_ctx *ctx);
/* The same under .system/watch.lock, for a tick (SL_ELOCKED: a watch runs). */
int watch_resume(struct sl_ctx *ctx, struct sl_err *err);
/*
 * A revert of gate's culprit that landed was tested green with the gate on
 * exactly the commit it landed as (its car): when that commit is newer than
 * last_green and on tip's line, it becomes last_green (41 bytes), so that
 * a later landing that breaks the gate again is found, not the reverted one.
 */
int watch_revert_green(struct sl_ctx *ctx, const char *gate, const char *tip, char *last_green,
		       struct sl_err *err);
/*
 * 1 (r->revert_wo, r->revert_pending set) when a revert this watch made for
 * `gate` has not landed yet (its work order not done, failed or gone): the
 * red tip is that culprit's still; 0 when none; < 0 on a store error.
 */
int watch_revert_pending(struct sl_ctx *ctx, const char *gate, struct watch_report *r);

#endif
