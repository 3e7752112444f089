#ifndef SL_ARTIFACT_INT_H
#define SL_ARTIFACT_INT_H
/* Shared by the files of src/artifact/ only. */
#include "artifact/artifact.h"

int artifact_oid_cmp(const void *a, const void *b); /* for qsort and bsearch */

/*
 * The merge train as people read it (train.c). A run's car while it is in
 * the train (table train_cars): status waiting, pending, testing, green,
 * red or conflict; position: its place in the line of its target's cars (1:
 * the front), of `cars` in the line; 0 for a car out of the line (red or in
 * conflict). artifact_car_get: 1 when the run has a car (*out: the caller's,
 * artifact_car_release()), 0 when not.
 */
struct artifact_car {
	enum train_status status;
	char *base, *head, *commit, *tree, *ahead, *gates_json;
	char *covered_by, *covered_commit; /* merge.batch: green by a later car's test */
	int64_t lanes;     /* merge.lanes: the car's lanes (0: every lane) */
	char *lane_commit; /* the commit its standing test ran on (built again since) */
	int64_t joined_ms, started_ms, tested_ms;
	size_t position, cars;
};
int artifact_car_get(struct sl_ctx *ctx, const char *run_id, struct artifact_car *out);
void artifact_car_release(struct artifact_car *c);

/* The work order of the run `run_id` (exact id; a new string), or NULL. */
char *artifact_run_work_order(struct sl_ctx *ctx, const char *run_id);

/* A landed run's gate record, <run_dir>/train.json as an object (bounded read), or NULL. */
json_t *artifact_train_record(const char *run_dir);

/*
 * show's "train" (schema/show.schema.json): the car from the store while
 * the run is in the train, else what train.json says of its landing, else
 * JSON null. A new reference.
 */
json_t *artifact_train_json(struct sl_ctx *ctx, const char *run_id, const char *run_dir);

/*
 * The runs whose landings `tip` holds and `base` does not (the Sluice-Run
 * trailers of tip's first-parent line down to base, at most 1000 commits),
 * newest first: a semantic conflict's rivals. A JSON array, a new reference.
 */
json_t *artifact_rivals_between(struct sl_ctx *ctx, const char *tip, const char *base);

/* The last `max` bytes of <run_dir>/train/gates/<name>.log as a JSON string, or NULL. */
json_t *artifact_gate_log_tail(const char *run_dir, const char *name, size_t max);

/* JSON helpers of dossier.c: an ISO time (NULL for 0 or less), a string or null. */
json_t *artifact__iso_or_null(int64_t ms);
json_t *artifact__str_or_null(const char *s);
/* What the run's attempts used (artifact/usage.c): the dossier's "usage". */
json_t *artifact__usage_json(struct sl_ctx *ctx, const char *run_id);
/* What the watch did about the run (artifact/watch.c): the dossier's "watch". */
json_t *artifact__watch_json(struct sl_ctx *ctx, const char *run_id, const char *wo_id);

#endif
