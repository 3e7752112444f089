#ifndef SL_QUEUE_INT_H
#define SL_QUEUE_INT_H
/* Helpers shared inside the queue module. */
#include "queue/queue.h"

/* Set err to "<path>:<line>:<col>: <msg>" (or "<path>: <msg>" when line is 0). */
int queue__fail(struct sl_err *err, int code, const char *path, int line, int col, const char *fmt,
                ...) __attribute__((format(printf, 6, 7)));

/* A JSON scalar as text (strings as they are, numbers printed); NULL otherwise. New. */
char *queue__text(const json_t *v);

/* The line and column of key (idx -1) or its item idx, falling back to the key, then the file. */
void queue__where(const struct queue_wo *wo, const char *key, int idx, int *line, int *col);

/* A new string, or NULL on out of memory. */
char *queue__strdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
