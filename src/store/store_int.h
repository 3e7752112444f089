#ifndef SL_STORE_INT_H
#define SL_STORE_INT_H
/* Shared by the files of src/store/ only. */
#include "store/store.h"

/* The schema/db migration files, embedded at build time (cmake/embed_migrations.cmake). */
struct store_migration {
	int version;
	const char *name;
	const char *sql;
};

extern const struct store_migration store_migrations[];
extern const int store_migrations_count;

/*
 * A set of run states as one bound parameter: ",queued,reviewing," (the
 * names from the state table), matched by STORE_STATE_IN. Never spliced
 * into SQL. The returned pointer is buf; an empty set gives ",,".
 */
#define STORE_STATE_LIST_MAX 256
const char *store__state_list(char buf[STORE_STATE_LIST_MAX], run_state_set set);
/* "the column `col` is one of the states in the parameter `param`" */
#define STORE_STATE_IN(param, col) "instr(" param ", ',' || " col " || ',') > 0"

/* Statement helpers shared by the files of src/store/. */
int store__prepare(struct store *st, sqlite3_stmt **out, const char *sql, struct sl_err *err);
int store__fail(struct store *st, struct sl_err *err, const char *what);
/* Bind a text or NULL. */
int store__bind_text(sqlite3_stmt *s, int i, const char *v);
/* A column as a new string (strdup; NULL for SQL NULL). */
char *store__col_dup(sqlite3_stmt *s, int i);

/*
 * The outbox row of a move (store/notify.c), in the move's transaction:
 * nothing unless `to` is merged, merge_conflict, rejected or failed and
 * the run moved. `seq` is the move's events row.
 */
int store__notify_add(struct store *st, int64_t seq, const char *run_id, enum run_state from,
		      enum run_state to, const char *reason, struct sl_err *err);

#endif
