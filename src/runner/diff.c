/* A run's diff recorded: diff.patch, files_changed.json and the store's files of base..head. */
#include "runner/runner_int.h"
#include "store/store.h"
#include "worktree/worktree.h"
#include "merge/merge.h"
#include "reviewer/reviewer.h"
#include "core/buf.h"
#include "core/fs.h"
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * What the build's git diff printed, kept for the review in the same process
 * (issue 29: one git process less a run). It is the patch of two commits
 * with git's settings pinned (worktree/diff.c), so the same bytes the review
 * would get from git again; it lives in this process's memory, out of reach
 * of the gates that run between, which may rewrite diff.patch in the run
 * folder (why the review never reads that file).
 */
struct step_diff {
	char base[41], head[41];
	struct sl_buf patch;
};

void step__diff_forget(struct step *s)
{
	if (s->diff)
		sl_buf_release(&s->diff->patch);
	free(s->diff);
	s->diff = NULL;
}

int step__diff_kept(struct step *s, const char *base, const char *head, struct sl_buf *out,
		    size_t *total)
{
	struct step_diff *d = s->diff;

	if (!d || !base || !head || strcmp(d->base, base) || strcmp(d->head, head) ||
	    d->patch.len > out->max)
		return 0; /* a cut patch is git's to cut */
	sl_buf_reset(out);
	if (sl_buf_add(out, d->patch.ptr ? d->patch.ptr : "", d->patch.len) < 0)
		return 0;
	*total = d->patch.len;
	return 1;
}

/* diff.patch: from git's bytes kept in s when they are whole, else written by git */
static int record_patch(struct step *s, const char *head, const char *path,
			struct sl_err *err)
{
	const char *base = s->run.base_commit;
	struct step_diff *d;
	size_t total = 0;
	int error;

	step__diff_forget(s);
	if (!base || !head || strlen(base) != 40 || strlen(head) != 40 ||
	    !(d = calloc(1, sizeof(*d))))
		return worktree_diff_patch(s->ctx->repo.root, base, head, path, err);
	sl_buf_init(&d->patch, REVIEWER_DIFF_MAX_DEFAULT);
	if ((error = worktree_diff_patch_mem(s->ctx->repo.root, base, head, &d->patch, &total,
					     err)) != 0 ||
	    total != d->patch.len) {
		sl_buf_release(&d->patch);
		free(d);
		return error ? error : worktree_diff_patch(s->ctx->repo.root, base, head, path, err);
	}
	memcpy(d->base, base, 41);
	memcpy(d->head, head, 41);
	s->diff = d;
	return sl_write_file_atomic(path, d->patch.ptr ? d->patch.ptr : "", d->patch.len, err);
}

int step__record_diff(struct step *s, const char *head, struct sl_err *err)
{
	struct worktree_file_changes fc = WORKTREE_FILE_CHANGES_INIT;
	struct store_file_change *sf = NULL;
	char *patch = step__path(s, "diff.patch"), *files = step__path(s, "files_changed.json");
	size_t i;
	int error;

	if (!patch || !files) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = record_patch(s, head, patch, err)) != 0 ||
	    (error = worktree_diff_write(s->ctx->repo.root, s->run.base_commit, head, NULL, files,
					 &fc, err)) != 0)
		goto out;
	if (!(sf = calloc(fc.n + 1, sizeof(*sf)))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	for (i = 0; i < fc.n; i++) {
		sf[i].status = fc.v[i].status;
		sf[i].path = fc.v[i].path;
	}
	error = store_files_changed_set(s->ctx->st, s->run.id, sf, fc.n, err);
out:
	worktree_file_changes_release(&fc);
	free(sf);
	free(patch);
	free(files);
	return error;
}
