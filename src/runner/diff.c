/* A run's diff recorded: diff.patch, files_changed.json and the store's files of base..head. */
#include "runner/runner_int.h"
#include "store/store.h"
#include "worktree/worktree.h"
#include "merge/merge.h"
#include "core/fs.h"
#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int step__record_diff(struct step *s, const char *head, struct sl_err *err)
{
	struct worktree_file_changes fc = WORKTREE_FILE_CHANGES_INIT;
	struct store_file_change *sf = NULL;
	char *patch = step__path(s, "diff.patch"), *files = step__path(s, "files_changed.json");
	size_t i;
	int error;

	if ((error = worktree_diff_write(s->ctx->repo.root, s->run.base_commit, head, patch, files,
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
