#ifndef SL_WATCH_WATCH_H
#define SL_WATCH_WATCH_H
/*
 * The watch of the target (docs/watch.md): watch gates run on the target's
 * tip after landings. Built so far: the decisions, pure and without I/O —
 * whether a red watch gate is believed, and which landing the bisection
 * tests next. Running the gates, storing results and `sluice watch` are not
 * built yet.
 */
#include <stddef.h>

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

#endif
