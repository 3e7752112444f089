#ifndef SL_STORE_INT_H
#define SL_STORE_INT_H
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
#include "store/store.h"
#define STORE_STATE_LIST_MAX 256
const char *store__state_list(char buf[STORE_STATE_LIST_MAX], run_state_set set);
/* "the column `col` is one of the states in the parameter `param`" */
#define STORE_STATE_IN(param, col) "instr(" param ", ',' || " col " || ',') > 0"

#endif
