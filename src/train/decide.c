/*
 * The merge train's decision (docs/ARCHITECTURE.md, The merge train): from
 * the train's state, what the run's car does next and the reason its run
 * shows. Pure: the runner (src/runner/step_train.c) reads the state and
 * applies the move.
 *
 * A car that fails (red) or conflicts with the car ahead leaves the line;
 * the cars behind are rebuilt on the last good car. Once no car ahead of it
 * is left in the line, a failure on the target's real tip goes through
 * resolution (semantic or textual); a failure on a speculation that did not
 * land as tested is simply built and tested again on the tip. Only the
 * front car lands, only green, only when the tip is still the base it was
 * tested on, and only when the target is not frozen (docs/config.md,
 * "merge.freeze"): a frozen target still tests its cars; an urgent run lands
 * through a freeze that allows it.
 */
#include "train/train.h"

#include <stdio.h>
#include <string.h>

int train_verdict_holds(const struct store_car *cars, size_t n, const char *tip,
			const struct store_car *c)
{
	size_t i;

	if (!c->base || !strcmp(c->base, tip))
		return 1;
	for (i = 0; c->ahead && i < n; i++)
		if (!strcmp(cars[i].run_id, c->ahead))
			return cars[i].status == TRAIN_GREEN && cars[i].commit &&
			       !strcmp(cars[i].commit, c->base);
	return 0;
}

int train_in_line(const struct store_car *cars, size_t n, const char *tip,
		  const struct store_car *c)
{
	return (c->status != TRAIN_RED && c->status != TRAIN_CONFLICT) ||
	       !train_verdict_holds(cars, n, tip, c);
}

void train_locate(const struct store_car *cars, size_t n, const int *alive, const char *tip,
		  const char *me, struct train_where *w)
{
	const struct store_car *mine = NULL;
	size_t i;

	memset(w, 0, sizeof(*w));
	w->me = w->ahead = n;
	for (i = 0; i < n && !mine; i++)
		if (!strcmp(cars[i].run_id, me))
			mine = &cars[i];
	for (i = 0; i < n; i++) {
		/* merge.lanes: the line is the cars that share a lane with the run's */
		int line = train_in_line(cars, n, tip, &cars[i]) &&
			   (!mine || train_shares(mine, &cars[i]));
		if (!strcmp(cars[i].run_id, me)) {
			w->me = i;
			w->pos = line ? w->total + 1 : 0;
		} else if (w->me == n && line) {
			w->ahead = i;
			w->live_ahead |= cars[i].tester && alive && alive[i];
		}
		w->total += line;
	}
}

static const char *verdict(const struct store_car *c)
{
	return c->status == TRAIN_RED ? "merge gates failed" : "merge conflict";
}

static const char *name(const char *s)
{
	return s ? s : "?";
}

/* The depth's setting (NULL: merge.train_depth). */
static const char *name_or(const char *key)
{
	return key ? key : "merge.train_depth";
}

/* The car is out of the line: wait for the cars ahead, be parked, or leave. */
static void out_of_line(const struct train_state *st, const struct store_car *me,
			struct train_decision *d)
{
	if (d->where.ahead < st->n) { /* cars ahead in the line: wait for them to land or leave */
		snprintf(d->why, sizeof(d->why), "in the train: %s on top of %s; waits for the cars "
			 "ahead to land or leave", verdict(me), name(st->my_ahead_name));
		d->action = d->where.live_ahead ? TRAIN_DO_WAIT : TRAIN_DO_STOP;
	} else if (!me->base || strcmp(me->base, st->tip))
		d->action = TRAIN_DO_PARK;
	else if (me->status == TRAIN_CONFLICT)
		d->action = TRAIN_DO_LEAVE_CONFLICT;
	else /* the car's base is the run's head or behind it: the target has nothing new */
		d->action = st->head_in_base ? TRAIN_DO_OWN_RED : TRAIN_DO_LEAVE_SEMANTIC;
}

static enum train_action waits(const struct train_decision *d)
{
	return d->where.live_ahead ? TRAIN_DO_WAIT : TRAIN_DO_STOP;
}

/* In the line and green: the front car on the tip lands; any other waits. */
static void green(const struct train_state *st, const struct store_car *me,
		  struct train_decision *d)
{
	const struct train_where *w = &d->where;
	int through = st->frozen && st->urgent && st->frozen_allow_urgent;
	int may_land = w->pos == 1 && me->base && !strcmp(me->base, st->tip) && st->holds;

	if (may_land && st->frozen && !through) { /* a frozen target lands nothing: a later tick does */
		snprintf(d->why, sizeof(d->why), "in the train: car 1 of %d, green in %.1f s; "
			 "wait: frozen (%s)", w->total,
			 (double)(me->tested_ms - me->started_ms) / 1000.0, st->frozen);
		d->action = TRAIN_DO_STOP;
		return;
	}
	if (may_land) {
		snprintf(d->why, sizeof(d->why), "landing the tested merge %.12s on %s%s%s%s",
			 name(me->commit), name(st->target), through ? " (urgent, through the "
			 "freeze: " : "", through ? st->frozen : "", through ? ")" : "");
		d->action = TRAIN_DO_LAND;
		return;
	}
	if (w->pos == 1 && me->base && !strcmp(me->base, st->tip)) { /* not approved as built */
		snprintf(d->why, sizeof(d->why), "in the train: car %d of %d, no longer approved "
			 "as built; waits to be planned again", w->pos, w->total);
		d->action = TRAIN_DO_STOP;
		return;
	}
	snprintf(d->why, sizeof(d->why), "in the train: car %d of %d, green in %.1f s; waits for "
		 "%s to land", w->pos, w->total, (double)(me->tested_ms - me->started_ms) / 1000.0,
		 name(w->ahead < st->n ? st->line_ahead_name : st->target));
	d->action = waits(d);
}

/*
 * merge.batch above 1: an untested car that is not the batch's tester now
 * waits for the test that covers it (or decides it); 1 when it does.
 */
static int batch_waits(const struct train_state *st, const struct store_car *me,
		       struct train_decision *d)
{
	const struct train_where *w = &d->where;
	struct train_where tw;
	size_t t;

	if (st->batch <= 1 || (me->status != TRAIN_PENDING && me->status != TRAIN_TESTING))
		return 0;
	t = train_batch_tester(st->cars, st->n, st->tip, st->batch, st->filling);
	if (t == w->me)
		return 0;
	if (t >= st->n) {
		snprintf(d->why, sizeof(d->why), "in the train: car %d of %d, in a batch of up to %d; "
			 "%s", w->pos, w->total, st->batch, st->filling ? "waits for the approved "
			 "runs to join it" : "waits for the green cars ahead to land");
		d->action = waits(d);
		return 1;
	}
	train_locate(st->cars, st->n, NULL, st->tip, st->cars[t].run_id, &tw); /* the tester's place */
	snprintf(d->why, sizeof(d->why), "in the train: car %d of %d, in a batch of %d; %s car %d "
		 "tests it", w->pos, w->total, st->batch, train_batch_bisecting(st->cars, st->n,
		 st->tip, st->batch) ? "bisecting a red batch:" : "waits for the batch's test:",
		 tw.pos);
	d->action = st->cars[t].status == TRAIN_TESTING && st->cars[t].tester && st->alive &&
				    st->alive[t] ? TRAIN_DO_WAIT : TRAIN_DO_STOP;
	return 1;
}

int train_decide(const struct train_state *st, struct train_decision *d)
{
	const struct store_car *me;
	const struct train_where *w = &d->where;

	memset(d, 0, sizeof(*d));
	train_locate(st->cars, st->n, st->alive, st->tip, st->me, &d->where);
	if (w->me >= st->n)
		return -1;
	me = &st->cars[w->me];
	if (!w->pos)
		out_of_line(st, me, d);
	else if (batch_waits(st, me, d))
		;
	else if (me->status == TRAIN_RED || me->status == TRAIN_CONFLICT) {
		snprintf(d->why, sizeof(d->why), "in the train: car %d of %d, %s on top of %s, which "
			 "is not known good yet; waits for it", w->pos, w->total, verdict(me),
			 name(st->my_ahead_name));
		d->action = waits(d);
	} else if (me->status == TRAIN_WAITING && st->lanes_ahead && w->pos <= st->train_depth) {
		snprintf(d->why, sizeof(d->why), "in the train: car %d of %d, waits for the cars "
			 "ahead in %s (merge.lanes: a car across lanes goes behind the cars of "
			 "each)", w->pos, w->total, st->lanes_ahead);
		d->action = waits(d);
	} else if (me->status == TRAIN_WAITING) {
		snprintf(d->why, sizeof(d->why), "in the train: car %d of %d, waits for a place "
			 "(%s %d)", w->pos, w->total, name_or(st->depth_key), st->train_depth);
		d->action = waits(d);
	} else if (me->status == TRAIN_PENDING ||
		   (me->status == TRAIN_TESTING && !(me->tester && st->alive && st->alive[w->me])))
		d->action = TRAIN_DO_TEST;
	else if (me->status == TRAIN_TESTING) {
		snprintf(d->why, sizeof(d->why), "in the train: car %d of %d, being tested by another "
			 "process", w->pos, w->total);
		d->action = TRAIN_DO_STOP;
	} else
		green(st, me, d);
	return 0;
}

int train_car_tail_names(const struct store_car *c, int pos)
{
	return c->status == TRAIN_PENDING || (c->status == TRAIN_GREEN && pos > 1);
}

void train_car_tail(const struct store_car *c, int pos, int train_depth, const char *depth_key,
		    const char *ahead_name, char *buf, size_t n)
{
	buf[0] = '\0';
	if (c->status == TRAIN_WAITING && pos <= train_depth)
		; /* in its place, waiting across lanes (merge.lanes): its worker's words stand */
	else if (c->status == TRAIN_WAITING)
		snprintf(buf, n, ", waits for a place (%s %d)", name_or(depth_key), train_depth);
	else if (c->status == TRAIN_PENDING)
		snprintf(buf, n, ", built on top of %s; waits to be tested", name(ahead_name));
	else if (c->status == TRAIN_GREEN && pos > 1)
		snprintf(buf, n, ", green in %.1f s; waits for %s to land",
			 (double)(c->tested_ms - c->started_ms) / 1000.0, name(ahead_name));
	else if (c->status == TRAIN_GREEN)
		snprintf(buf, n, ", green in %.1f s; lands next",
			 (double)(c->tested_ms - c->started_ms) / 1000.0);
}
