#ifndef SL_RUNNER_PROMPT_H
#define SL_RUNNER_PROMPT_H
/*
 * The builder's prompt (DESIGN.md section 6.2, docs/builders.md), written
 * to <run_dir>/attempts/<n>/prompt.md and named by $SLUICE_PROMPT_FILE.
 *
 * build mode: a short preamble (what the builder must do) and the whole
 * work order file, byte for byte. On a retry (attempt > 1) a retry section
 * follows: the attempt number, the error, the failed gates' output (tails),
 * the reviewer's comments and the previous diff, each bounded. A retry rule's
 * `prompt` template replaces that retry section (not the work order: every
 * attempt is a new process with no memory of the previous one).
 *
 * resolve mode: the seed's conflict-resolution prompt filled from the
 * conflict context (conflict.json: currentRun, conflictingRun,
 * conflictFiles, gitConflictOutput) and the instructions for markers.
 *
 * Template variables: {work_order.<field>} (front matter), {error}, {diff},
 * {attempt}, {review.comments}, {gate.<name>.output}, {gate.<name>.exit}.
 */
#include "core/buf.h"
#include "core/err.h"
#include "runner/gates.h"

/* Bounds of what goes into a prompt. */
#define RUNNER_PROMPT_DIFF_MAX ((size_t)64 << 10)
#define RUNNER_PROMPT_GATE_MAX ((size_t)8 << 10)
#define RUNNER_PROMPT_TEXT_MAX ((size_t)16 << 10)
#define RUNNER_PROMPT_MAX ((size_t)4 << 20)

struct json_t;

struct runner_prompt_ctx {
	const char *mode;              /* "build" (NULL) or "resolve" */
	const char *work_order_text;   /* the work order file's exact text */
	struct json_t *work_order;     /* its front matter fields (object), borrowed; may be NULL */
	int attempt;                   /* 1, 2, ... */
	/* retry context, for attempt > 1 (each may be NULL) */
	const char *error;             /* why the previous attempt failed */
	const char *diff;              /* the previous attempt's diff (base..head) */
	const char *review_comments;   /* the reviewer's comments */
	const struct runner_gate_results *gates; /* the previous attempt's gates */
	const char *prompt_override;   /* a retry rule's template, or NULL */
	/* resolve mode */
	struct json_t *conflict;       /* the conflict context (object), borrowed */
};

#define RUNNER_PROMPT_CTX_INIT { 0 }

/* Render the prompt into out (bounded at RUNNER_PROMPT_MAX unless out's max is set). */
int runner_prompt_render(struct sl_buf *out, const struct runner_prompt_ctx *c, struct sl_err *err);

/*
 * Render and write <run_dir>/attempts/<attempt>/prompt.md (creating the
 * folders). *path_out (may be NULL) gets the file's path, the caller's
 * (free()).
 */
int runner_prompt_write(const char *run_dir, const struct runner_prompt_ctx *c, char **path_out,
			struct sl_err *err);

#endif
