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

#endif
