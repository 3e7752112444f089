/* The watch's decisions (docs/watch.md, Bisect): believing a red run, halving the landings. */
#include "watch/watch.h"

enum sl_watch_verdict sl_watch_verdict(int first, int again)
{
	if (!first)
		return SL_WATCH_GREEN;
	if (again < 0)
		return SL_WATCH_AGAIN;
	return again ? SL_WATCH_RED : SL_WATCH_FLAKY;
}

void sl_bisect_init(struct sl_bisect *b, size_t n)
{
	b->green = 0;
	b->red = n ? n - 1 : 0;
}

int sl_bisect_next(const struct sl_bisect *b, size_t *pick)
{
	if (b->red <= b->green)
		return 0;
	/* unknown: [green, red); testing the middle leaves at most half of [green, red] */
	*pick = b->green + (b->red - b->green) / 2;
	return 1;
}

void sl_bisect_record(struct sl_bisect *b, size_t i, int red)
{
	if (red && i < b->red && i >= b->green)
		b->red = i;
	else if (!red && i >= b->green && i < b->red)
		b->green = i + 1;
}

size_t sl_bisect_culprit(const struct sl_bisect *b)
{
	return b->red;
}
