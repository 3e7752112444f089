#ifndef SL_STORE_H
#define SL_STORE_H
/*
 * The state database: one SQLite file (.system/sluice.db) in WAL mode.
 * store_open() applies the migrations of schema/db/ in order. Every write
 * runs inside store_begin() (BEGIN IMMEDIATE, so two sluice processes never
 * deadlock half-way through a transaction) and store_commit().
 *
 * Work orders: store/workorders.c. Runs, attempts, events: store/runs.c.
 */
#include <sqlite3.h>
#include <stdint.h>
#include "core/err.h"

#define STORE_APPLICATION_ID 1397506885 /* 'SLCE' */

struct store;

/* Open (creating if needed) and migrate. *out is the caller's: store_free(). */
int store_open(struct store **out, const char *path, struct sl_err *err);
void store_free(struct store *st);

/* The schema version (PRAGMA user_version) of an open store. */
int store_version(struct store *st);

/* The underlying handle, borrowed, for the store's own modules and tests. */
sqlite3 *store_db(struct store *st);

/* BEGIN IMMEDIATE (waits up to the busy timeout for another writer). */
int store_begin(struct store *st, struct sl_err *err);
int store_commit(struct store *st, struct sl_err *err);
/* Roll back if a transaction is open; safe to call when none is. */
void store_rollback(struct store *st);

/*
 * Append an event (inside a transaction). Any of run_id, wo_id, from, to
 * may be NULL.
 */
int store_event_add(struct store *st, const char *run_id, const char *wo_id, const char *from,
		    const char *to, const char *reason, struct sl_err *err);

/* Internal helpers for the store module. */
int store__prepare(struct store *st, sqlite3_stmt **out, const char *sql, struct sl_err *err);
int store__fail(struct store *st, struct sl_err *err, const char *what);
/* Bind a text or NULL. */
int store__bind_text(sqlite3_stmt *s, int i, const char *v);
/* A column as a new string (strdup; NULL for SQL NULL). */
char *store__col_dup(sqlite3_stmt *s, int i);

#endif
