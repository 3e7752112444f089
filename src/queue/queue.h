#ifndef SL_QUEUE_H
#define SL_QUEUE_H
/*
 * Work orders (docs/work-orders.md, The file): Markdown files with
 * YAML front matter in the inbox. This module parses and validates them
 * (parse.c, validate.c), scans the inbox and brings the store up to date
 * (inbox.c, graph.c), and decides the order and what may start now
 * (schedule.c).
 *
 * Every problem is reported as "<path>:<line>:<col>: <what>; <what to do>",
 * with the path relative to the repository root and 1-based positions.
 */
#include <jansson.h>
#include <stddef.h>
#include "core/buf.h"
#include "core/config.h"
#include "core/err.h"
#include "core/sha256.h"

struct store;

#define QUEUE_WO_MAX_BYTES ((size_t)1 << 20) /* 1 MiB per work-order file */
#define QUEUE_ID_MAX 64
/* Longest title, in characters (code points): it is the merge commit subject. */
#define QUEUE_TITLE_MAX 200

/* Where a front-matter key (idx -1) or one item of its list (idx >= 0) is. */
struct queue_mark {
	char *key;
	int idx;
	int line, col; /* 1-based, in the file */
};

/* priority: urgent (docs/work-orders.md): ahead of every number, lands through a freeze that allows it. */
#define QUEUE_PRIORITY_URGENT 0

/* A priority as a person wrote it: "urgent" for QUEUE_PRIORITY_URGENT, else its number. */
const char *queue_priority_word(int priority, char *buf, size_t n);

struct queue_wo {
	char *id, *title, *goal, *status, *created_at, *updated_at;
	char *path; /* relative to the repository root, as given to the parser */
	char *body; /* the Markdown after the front matter */
	sl_strv context, acceptance_criteria, non_goals, stop_conditions, tags, depends_on;
	int priority; /* default 3; 1 is the most urgent; "urgent": QUEUE_PRIORITY_URGENT */
	double estimate_hours;
	int has_estimate;
	json_t *fields; /* the whole front matter as JSON, unknown keys kept (owned) */
	char content_hash[SL_SHA256_HEX_LEN + 1]; /* SHA-256 of the file bytes */
	char *raw;                                /* the exact bytes of the file */
	size_t raw_len;
	int line; /* line of the front matter's first key (for file-wide messages) */
	struct queue_mark *marks;
	size_t nmarks;
};

/*
 * Parse a work order from its bytes. `path` is only used in messages and
 * kept in wo->path. Fails with SL_EINVALID (or SL_ETOOBIG over 1 MiB) when
 * the file cannot be read as a work order at all: empty, no or unterminated
 * front matter, not UTF-8, a NUL byte, a YAML error, a tab in the
 * indentation, an alias, front matter that is not a mapping. The typed
 * fields are filled leniently (a value of the wrong type is left unset);
 * queue_validate() says what is wrong with them. *out is the caller's:
 * queue_wo_free().
 */
int queue_parse(struct queue_wo **out, const char *path, const void *data, size_t len,
                struct sl_err *err);

/* Read `root`/`relpath` (at most 1 MiB) and parse it; wo->path = relpath. */
int queue_parse_file(struct queue_wo **out, const char *root, const char *relpath,
                     struct sl_err *err);

void queue_wo_free(struct queue_wo *wo);

/*
 * Check the fields of one parsed work order (docs/work-orders.md, Fields): id and
 * title present and well formed, priority an integer, list fields lists of
 * strings, context paths relative and inside the repository, status known,
 * depends_on entries valid ids and not the work order itself. The first
 * problem is the error (SL_EINVALID), with its line and column.
 */
int queue_validate(const struct queue_wo *wo, struct sl_err *err);

/* 1 when id matches [A-Za-z0-9][A-Za-z0-9._-]{0,63}, has no "..", and does
 * not end in "." or ".lock". */
int queue_id_valid(const char *id);

/* Find the mark of key (idx -1) or of one of its items; NULL if none. Borrowed. */
const struct queue_mark *queue_wo_mark(const struct queue_wo *wo, const char *key, int idx);

/*
 * The path part of a context entry: the text before a trailing
 * " (comment)", as in "server/db.ts (run tracking)". A new string.
 */
char *queue_context_path(const char *entry);

/* ---- the inbox -------------------------------------------------------- */

/* One file of the inbox and what came of it. */
struct queue_entry {
	char *path;          /* relative to the repository root */
	struct queue_wo *wo; /* NULL when the file did not parse */
	char *error;         /* the first problem ("path:line:col: ..."), or NULL */
	char *state;         /* after queue_evaluate(): invalid, waiting, ready, ... */
	char *reason;        /* after queue_evaluate(): why, for people */
	int owner;           /* 1 for the file that owns its id's row (first of duplicates) */
	char *id_guess;      /* a file that did not parse: the id it seems to give, or NULL */
	char hash[SL_SHA256_HEX_LEN + 1]; /* SHA-256 of the file's bytes ("" if unread) */
};

struct queue_scan {
	struct queue_entry *v;
	size_t n;
	char *inbox; /* the inbox directory, relative to the root */
};

#define QUEUE_SCAN_INIT                                                                            \
	{                                                                                          \
		NULL, 0, NULL                                                                      \
	}

/*
 * Find every *.md file under root/inbox (recursively, in path order;
 * symbolic links and hidden directories are not followed) and parse and
 * validate each one. A missing inbox is an empty scan. Per-file problems
 * land in entry->error; only I/O trouble with the directory fails.
 */
int queue_scan(struct queue_scan *out, const char *root, const char *inbox, struct sl_err *err);
void queue_scan_release(struct queue_scan *scan);

/*
 * Decide every entry's state and reason from the files and what the store
 * knows (runs, work orders already done, states set by runs): duplicate ids,
 * unknown dependencies and cycles make the work orders concerned invalid;
 * then running / done / failed from runs, skipped from the file's status,
 * blocked / waiting / ready from the dependencies. `st` may be NULL (as if
 * the store were empty). Reads only.
 */
int queue_evaluate(struct queue_scan *scan, struct store *st, struct sl_err *err);

/*
 * Every problem of the inbox, one per line ("path:line:col: message"), for
 * `sluice check`. Call after queue_evaluate(). Returns the count.
 */
int queue_problems(const struct queue_scan *scan, struct sl_buf *out);

struct queue_ingest_stats {
	size_t files, added, revised, changed, gone, invalid;
};

/*
 * Scan the inbox and bring the store up to date in one transaction: new
 * work orders, new revisions, state changes (each with an event and its
 * reason), files gone (present = 0, state kept), inbox errors replaced,
 * and a notification for each revision of an invalid work order, once
 * (store_notify_invalid_tx()).
 * A work order that is running keeps its row until its run ends; a new
 * revision of a done or failed work order is new work and becomes ready
 * again. `stats` may be NULL.
 */
int queue_ingest(struct store *st, const char *root, const char *inbox,
                 struct queue_ingest_stats *stats, struct sl_err *err);

/* One work order that does not run because its file is wrong. */
struct queue_invalid {
	char *path;    /* relative to the repository root */
	char *message; /* "path:line:col: what; what to do" */
};

/*
 * The invalid work orders as the last queue_ingest() left them in the store:
 * the files that did not parse or lost their id to another (inbox errors)
 * and the present work orders in state invalid, in path order. For `tick`
 * and `status`, which say so. *out: queue_invalid_free(*out, *n).
 */
int queue_invalid_list(struct store *st, struct queue_invalid **out, size_t *n,
                       struct sl_err *err);
void queue_invalid_free(struct queue_invalid *v, size_t n);

/* ---- scheduling ------------------------------------------------------- */

struct queue_item {
	char *id, *path, *title, *state, *reason, *status, *created_at, *content_hash;
	int priority;
	int present;
	sl_strv context; /* path parts of the context entries */
	sl_strv depends_on;
	int may_start; /* set by queue_decide(): ready and free to start now */
	char *explain; /* set by queue_decide(): what it is or why it waits */
};

struct queue_plan {
	struct queue_item *items;
	size_t n;
};

#define QUEUE_PLAN_INIT                                                                            \
	{                                                                                          \
		NULL, 0                                                                            \
	}

struct queue_plan_opts {
	int allow_overlap; /* queue.allow_overlap */
	int jobs;          /* builders at once (queue.jobs); 0: no limit */
	const char *held;  /* why no ready work order starts now (the repository's budget,
	                      docs/budgets.md), or NULL */
};

#define QUEUE_PLAN_OPTS_INIT                                                                       \
	{                                                                                          \
		0, 0, NULL                                                                         \
	}

/*
 * Sort items into schedule order: running, ready, waiting, blocked, failed,
 * invalid, skipped, done; within each, priority (1 first), created_at
 * (empty last), id.
 */
void queue_sort(struct queue_item *items, size_t n);

/*
 * 1 when two context paths overlap: the same path, or one a directory
 * prefix of the other ("src" and "src/a.c"; "." overlaps everything).
 */
int queue_paths_overlap(const char *a, const char *b);

/*
 * Walk sorted items and decide which ready ones may start now: not while a
 * running one (or one chosen before it in this pass) has an overlapping
 * context unless opts->allow_overlap, and no more than opts->jobs running
 * at once. Sets may_start and explain of every item.
 */
int queue_decide(struct queue_item *items, size_t n, const struct queue_plan_opts *opts,
                 struct sl_err *err);

/*
 * Load the work orders of the store (present ones, and running ones whose
 * file is gone), sort and decide. *out is the caller's: queue_plan_release().
 */
int queue_plan(struct queue_plan *out, struct store *st, const struct queue_plan_opts *opts,
               struct sl_err *err);
void queue_plan_release(struct queue_plan *plan);
void queue_item_release(struct queue_item *item);

#endif
