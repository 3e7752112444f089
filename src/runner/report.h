#ifndef SL_RUNNER_REPORT_H
#define SL_RUNNER_REPORT_H
/*
 * What people read about runs: one run's dossier (`sluice show`,
 * schema/show.schema.json) and the repository's report page (`sluice
 * report`: a self-contained HTML page and the work-order dependency graph
 * in Graphviz DOT). Both only read the store and the run folders.
 */
#include <jansson.h>
#include "core/buf.h"
#include "runner/runner.h"

/* How many bytes of conflict markers a dossier carries. */
#define RUNNER_DOSSIER_MARKERS_MAX 4096

/*
 * The dossier of one run (`run`: an id or a unique prefix): the work
 * order, the timeline of events with the time between them, the attempts
 * with their prompt, gates and verdict, the verdict with per-criterion
 * results, the diff stat, the conflict context summary, the merge, the
 * worktree, what to type next, and every artifact. *out is a new reference
 * (the caller's, json_decref()). SL_ENOTFOUND / SL_EAMBIGUOUS for `run`.
 */
int runner_dossier(struct runner_ctx *ctx, const char *run, json_t **out, struct sl_err *err);

/*
 * The report page: the queue (work orders, state, reason), the runs by
 * state, each run's timeline and the time spent per stage, and the
 * dependency graph as inline SVG. Everything HTML-escaped; no scripts, no
 * external assets. Appended to `out`.
 */
int runner_report_html(struct runner_ctx *ctx, struct sl_buf *out, struct sl_err *err);

/* The work-order dependency graph in Graphviz DOT, appended to `out`. */
int runner_report_dot(struct runner_ctx *ctx, struct sl_buf *out, struct sl_err *err);

#endif
