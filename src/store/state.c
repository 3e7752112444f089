/*
 * The one table of run states (docs/design.md, Runs and their states), and the name tables of
 * the other values the database checks (schema/db/001_init.sql): the run's
 * mode and merge_status, the work order's state and status. Every other
 * file names these values through the enums of store/store.h.
 */
#include "store/store.h"
#include "store/store_int.h"

#include <string.h>

#define S(x) RUN_SET(RUN_##x)
/* every state that is not final may be abandoned by a person */
#define OPEN S(ABANDONED)

/*
 * The moves that happen (docs/design.md, Runs and their states): a step's own moves, the
 * retry rules (building again, or in resolve mode resolving again or
 * merge_conflict), a failure found while any step works (failed), a crash
 * (interrupted, then back), a person's retry of a failed or rejected run
 * (queued) or of a conflict they resolved (resolving, which gates it).
 */
#define RETRY (S(BUILDING) | S(RESOLVING) | S(MERGE_CONFLICT) | S(FAILED))

static const struct run_state_info states[RUN_STATE_COUNT] = {
	[RUN_QUEUED] = { .name = "queued", .runnable = 1, .step = RUN_STEP_START,
		.next = OPEN | S(PREPARING) | S(FAILED) },
	/* gating: a gates job a killed tick left is followed again (runner/jobs.c) */
	[RUN_PREPARING] = { .name = "preparing", .active = 1, .step = RUN_STEP_PREPARE,
		.next = OPEN | S(BUILDING) | S(GATING) | S(FAILED) | S(INTERRUPTED) },
	[RUN_BUILDING] = { .name = "building", .active = 1, .step = RUN_STEP_BUILD,
		.next = OPEN | RETRY | S(GATING) | S(INTERRUPTED) | S(REVIEWING) /* a report: no gates */ },
	[RUN_GATING] = { .name = "gating", .active = 1, .step = RUN_STEP_GATE,
		.next = OPEN | RETRY | S(REVIEWING) | S(INTERRUPTED) },
	[RUN_REVIEWING] = { .name = "reviewing", .runnable = 1, .waits = 1, .step = RUN_STEP_REVIEW,
		.next = OPEN | RETRY | S(APPROVED) | S(AWAITING_REVIEW) | S(REJECTED) | S(REPORTED) },
	/* queued, resolving, merge_conflict: a person asked for changes (the retry rules) */
	[RUN_AWAITING_REVIEW] = { .name = "awaiting_review", .needs_person = 1, .waits = 1, .step = RUN_STEP_NONE,
		.next = OPEN | S(APPROVED) | S(REJECTED) | S(FAILED) | S(REPORTED) | S(QUEUED) |
			S(RESOLVING) | S(MERGE_CONFLICT) },
	/* approved: in the merge train (docs/design.md, The merge train) until it lands or leaves */
	/* building: red on its own merge with nothing new on the target (the retry rules) */
	[RUN_APPROVED] = { .name = "approved", .runnable = 1, .waits = 1, .step = RUN_STEP_LAND,
		.next = OPEN | S(MERGING) | S(GATING) | S(REVIEWING) | S(RESOLVING) | S(MERGE_CONFLICT) |
			S(FAILED) | S(BUILDING) },
	[RUN_MERGING] = { .name = "merging", .active = 1, .step = RUN_STEP_MERGE,
		.next = OPEN | S(MERGED) | S(APPROVED) | S(GATING) | S(REVIEWING) | S(RESOLVING) |
			S(MERGE_CONFLICT) | S(FAILED) | S(INTERRUPTED) },
	[RUN_MERGED] = { .name = "merged", .final = 1, .step = RUN_STEP_NONE,
		.next = 0 },
	/* gating: a person's resolution (runner/human.c) goes through the run's gates */
	[RUN_RESOLVING] = { .name = "resolving", .active = 1, .runnable = 1, .step = RUN_STEP_RESOLVE,
		.next = OPEN | S(BUILDING) | S(GATING) | S(MERGE_CONFLICT) | S(FAILED) | S(INTERRUPTED) },
	[RUN_MERGE_CONFLICT] = { .name = "merge_conflict", .needs_person = 1, .waits = 1, .step = RUN_STEP_NONE,
		.next = OPEN | S(RESOLVING) | S(REVIEWING) | S(FAILED) },
	[RUN_REJECTED] = { .name = "rejected", .final = 1, .step = RUN_STEP_NONE,
		.next = S(QUEUED) },
	[RUN_FAILED] = { .name = "failed", .final = 1, .step = RUN_STEP_NONE,
		.next = S(QUEUED) },
	[RUN_ABANDONED] = { .name = "abandoned", .final = 1, .step = RUN_STEP_NONE,
		.next = 0 },
	[RUN_INTERRUPTED] = { .name = "interrupted", .step = RUN_STEP_NONE,
		.next = OPEN | S(QUEUED) | S(APPROVED) | S(RESOLVING) },
	/* a read-only or none run (worktree mode) whose report was approved: it never merges */
	[RUN_REPORTED] = { .name = "reported", .final = 1, .step = RUN_STEP_NONE,
		.next = 0 },
};

#undef S

const struct run_state_info *run_state_info(enum run_state s)
{
	return (unsigned)s < RUN_STATE_COUNT ? &states[s] : NULL;
}

const char *run_state_name(enum run_state s)
{
	return (unsigned)s < RUN_STATE_COUNT ? states[s].name : "?";
}

/* The index of `name` in a table of `n` rows of `size` bytes whose first member is the name. */
static int find_name(const char *name, const void *table, size_t n, size_t size)
{
	size_t i;

	for (i = 0; name && i < n; i++)
		if (!strcmp(name, *(const char *const *)((const char *)table + i * size)))
			return (int)i;
	return -1;
}

#define NAME_OF(table, v) ((unsigned)(v) < sizeof(table) / sizeof(table[0]) ? table[v] : "?")
#define INDEX_OF(table, name)                                                                      \
	find_name(name, table, sizeof(table) / sizeof(table[0]), sizeof(table[0]))

int run_state_parse(const char *name, enum run_state *out)
{
	int i = INDEX_OF(states, name);

	if (i < 0)
		return -1;
	*out = (enum run_state)i;
	return 0;
}

int run_state_is(const char *name, enum run_state s)
{
	return name && (unsigned)s < RUN_STATE_COUNT && !strcmp(name, states[s].name);
}

int run_state_is_final(enum run_state s)
{
	return (unsigned)s < RUN_STATE_COUNT && states[s].final;
}

int run_state_is_active(enum run_state s)
{
	return (unsigned)s < RUN_STATE_COUNT && states[s].active;
}

int run_state_is_runnable(enum run_state s)
{
	return (unsigned)s < RUN_STATE_COUNT && states[s].runnable;
}

int run_state_needs_person(enum run_state s)
{
	return (unsigned)s < RUN_STATE_COUNT && states[s].needs_person;
}

int run_state_waits(enum run_state s)
{
	return (unsigned)s < RUN_STATE_COUNT && states[s].waits;
}

enum run_step run_state_step(enum run_state s)
{
	return (unsigned)s < RUN_STATE_COUNT ? states[s].step : RUN_STEP_NONE;
}

int run_state_can_move(enum run_state from, enum run_state to)
{
	if ((unsigned)from >= RUN_STATE_COUNT || (unsigned)to >= RUN_STATE_COUNT)
		return 0;
	return from == to || (states[from].next & RUN_SET(to)) != 0;
}

run_state_set run_states_where(int (*pred)(enum run_state))
{
	run_state_set set = 0;
	int i;

	for (i = 0; i < RUN_STATE_COUNT; i++)
		if (pred((enum run_state)i))
			set |= RUN_SET(i);
	return set;
}

/* ---- the other names ------------------------------------------------------ */

static const char *const modes[RUN_MODE_COUNT] = {
	[RUN_MODE_BUILD] = "build",
	[RUN_MODE_RESOLVE] = "resolve",
};

static const char *const merge_statuses[RUN_MERGE_STATUS_COUNT] = {
	[RUN_MERGE_STATUS_PENDING] = "pending",
	[RUN_MERGE_STATUS_MERGED] = "merged",
	[RUN_MERGE_STATUS_CONFLICT] = "conflict",
};

static const char *const wo_states[WO_STATE_COUNT] = {
	[WO_INVALID] = "invalid", [WO_WAITING] = "waiting", [WO_READY] = "ready",
	[WO_RUNNING] = "running", [WO_DONE] = "done",	    [WO_FAILED] = "failed",
	[WO_BLOCKED] = "blocked", [WO_SKIPPED] = "skipped",
};

static const char *const wo_statuses[WO_STATUS_COUNT] = {
	[WO_STATUS_READY] = "ready", [WO_STATUS_DRAFT] = "draft", [WO_STATUS_BACKLOG] = "backlog",
	[WO_STATUS_HOLD] = "hold",   [WO_STATUS_DONE] = "done",
};


static const char *const train_statuses[TRAIN_STATUS_COUNT] = {
	[TRAIN_WAITING] = "waiting", [TRAIN_PENDING] = "pending", [TRAIN_TESTING] = "testing",
	[TRAIN_GREEN] = "green",     [TRAIN_RED] = "red",	  [TRAIN_CONFLICT] = "conflict",
};

static const char *const conflict_kinds[CONFLICT_KIND_COUNT] = {
	[CONFLICT_TEXTUAL] = "textual",
	[CONFLICT_SEMANTIC] = "semantic",
};

const char *train_status_name(enum train_status t)
{
	return NAME_OF(train_statuses, t);
}

int train_status_parse(const char *name, enum train_status *out)
{
	int i = INDEX_OF(train_statuses, name);

	if (i < 0)
		return -1;
	*out = (enum train_status)i;
	return 0;
}

const char *conflict_kind_name(enum conflict_kind k)
{
	return NAME_OF(conflict_kinds, k);
}

int conflict_kind_parse(const char *name, enum conflict_kind *out)
{
	int i = INDEX_OF(conflict_kinds, name);

	if (i < 0)
		return -1;
	*out = (enum conflict_kind)i;
	return 0;
}

const char *run_mode_name(enum run_mode m)
{
	return NAME_OF(modes, m);
}

int run_mode_parse(const char *name, enum run_mode *out)
{
	int i = INDEX_OF(modes, name);

	if (i < 0)
		return -1;
	*out = (enum run_mode)i;
	return 0;
}

const char *run_merge_status_name(enum run_merge_status m)
{
	return NAME_OF(merge_statuses, m);
}

const char *wo_state_name(enum wo_state s)
{
	return NAME_OF(wo_states, s);
}

int wo_state_parse(const char *name, enum wo_state *out)
{
	int i = INDEX_OF(wo_states, name);

	if (i < 0)
		return -1;
	*out = (enum wo_state)i;
	return 0;
}

int wo_state_is(const char *name, enum wo_state s)
{
	return name && (unsigned)s < WO_STATE_COUNT && !strcmp(name, wo_states[s]);
}

const char *wo_status_name(enum wo_status s)
{
	return NAME_OF(wo_statuses, s);
}

int wo_status_parse(const char *name, enum wo_status *out)
{
	int i = INDEX_OF(wo_statuses, name);

	if (i < 0)
		return -1;
	*out = (enum wo_status)i;
	return 0;
}

int wo_status_is(const char *name, enum wo_status s)
{
	return name && (unsigned)s < WO_STATUS_COUNT && !strcmp(name, wo_statuses[s]);
}

const char *store__state_list(char buf[STORE_STATE_LIST_MAX], run_state_set set)
{
	size_t len = 1;
	int i;

	buf[0] = ',';
	buf[1] = '\0';
	for (i = 0; i < RUN_STATE_COUNT; i++) {
		size_t n = strlen(states[i].name);
		if (!(set & RUN_SET(i)))
			continue;
		/* every name fits: STORE_STATE_LIST_MAX is above the sum of them all */
		if (len + n + 2 > STORE_STATE_LIST_MAX)
			break;
		memcpy(buf + len, states[i].name, n);
		len += n;
		buf[len++] = ',';
		buf[len] = '\0';
	}
	if (len == 1) {
		buf[len++] = ',';
		buf[len] = '\0';
	}
	return buf;
}
