/*
 * merge_conflict_info: the conflicted paths and gitConflictOutput, the file
 * contents with conflict markers (or a one-line description where markers
 * make no sense), bounded at MERGE_CONFLICT_OUTPUT_MAX.
 */
#include "merge/merge_int.h"

#include <stdio.h>
#include <string.h>

#define NOTE_ROOM 64

struct ci {
	git_repository *repo;
	struct merge_conflict_info *info;
	const char *ours, *theirs; /* labels */
};

/* Append unless it would pass the bound; then note the truncation once. */
static void put(struct ci *c, const char *data, size_t len)
{
	struct sl_buf *b = &c->info->output;

	if (c->info->truncated)
		return;
	if (b->len + len + NOTE_ROOM > MERGE_CONFLICT_OUTPUT_MAX ||
	    sl_buf_add(b, data, len)) {
		c->info->truncated = 1;
		sl_buf_puts(b, "[sluice: conflict output truncated]\n");
	}
}

static void putf(struct ci *c, const char *fmt, const char *a, const char *b, const char *d)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), fmt, a, b, d);

	put(c, line, n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* A path for a "--- path: ..." header: its line breaks as \n, so it stays one line. */
static const char *one_line_path(char *out, size_t n, const char *path)
{
	size_t o = 0;

	for (; *path && o + 3 < n; path++) {
		if (*path == '\n' || *path == '\r') {
			out[o++] = '\\';
			out[o++] = *path == '\n' ? 'n' : 'r';
		} else {
			out[o++] = *path;
		}
	}
	out[o] = '\0';
	return out;
}

static int is_file(const git_index_entry *e)
{
	return e && (e->mode == GIT_FILEMODE_BLOB || e->mode == GIT_FILEMODE_BLOB_EXECUTABLE);
}

static const char *kind(const git_index_entry *e)
{
	if (!e)
		return "absent";
	if (e->mode == GIT_FILEMODE_LINK)
		return "a symlink";
	if (e->mode == GIT_FILEMODE_COMMIT)
		return "a submodule";
	return "a file";
}

/* Both sides regular files: the merged text with markers, or "binary". */
static int text_conflict(struct ci *c, const git_index_entry *const e[3], struct sl_err *err)
{
	git_merge_file_options fo;
	git_merge_file_result r = { 0 };
	int error;

	git_merge_file_options_init(&fo, GIT_MERGE_FILE_OPTIONS_VERSION);
	fo.our_label = c->ours;
	fo.their_label = c->theirs;
	error = git_merge_file_from_index(&r, c->repo, e[0], e[1], e[2], &fo);
	if (error)
		return sl_err_git(err, error, "cannot merge the file '%s'", e[1]->path);
	char p[1024];

	if (!r.ptr) {
		putf(c, "--- %s: binary file changed in %s and in %s\n",
		     one_line_path(p, sizeof(p), e[1]->path), c->ours, c->theirs);
	} else {
		putf(c, "--- %s: content conflict%s%s\n", one_line_path(p, sizeof(p), e[1]->path),
		     "", "");
		put(c, r.ptr, r.len);
		if (r.len && r.ptr[r.len - 1] != '\n')
			put(c, "\n", 1);
	}
	git_merge_file_result_free(&r);
	return 0;
}

static void one_line(struct ci *c, const git_index_entry *const e[3])
{
	const char *path = e[1] ? e[1]->path : e[2] ? e[2]->path : e[0]->path;
	char what[512], line[1024];

	if (e[1] && e[2])
		snprintf(what, sizeof(what), "%s in %s, %s in %s", kind(e[1]), c->ours, kind(e[2]),
			 c->theirs);
	else if (e[1] || e[2])
		snprintf(what, sizeof(what), "%s in %s, deleted or renamed in %s",
			 e[0] ? "modified" : "added", e[1] ? c->ours : c->theirs,
			 e[1] ? c->theirs : c->ours);
	else
		snprintf(what, sizeof(what), "deleted or renamed in both %s and %s", c->ours,
			 c->theirs);
	putf(c, "--- %s: %s%s\n", one_line_path(line, sizeof(line), path), what, "");
}

static int describe(struct ci *c, git_index *idx, struct sl_err *err)
{
	git_index_conflict_iterator *it = NULL;
	const git_index_entry *e[3];
	int error;

	error = git_index_conflict_iterator_new(&it, idx);
	while (!error && !(error = git_index_conflict_next(&e[0], &e[1], &e[2], it)))
		if (is_file(e[1]) && is_file(e[2]) && (!e[0] || is_file(e[0])))
			error = text_conflict(c, e, err);
		else
			one_line(c, e);
	git_index_conflict_iterator_free(it);
	if (error == GIT_ITEROVER)
		return 0;
	return error < 0 && !err->msg[0] ? sl_err_git(err, error, "cannot list conflicts") : error;
}

static int fill(struct ci *c, const struct merge_result *r, git_index *idx, struct sl_err *err)
{
	size_t i;
	int error;

	snprintf(c->info->reason, sizeof(c->info->reason), "%s", r->reason);
	for (i = 0; i < r->conflicts.n; i++)
		if (merge_paths_add(&c->info->paths, r->conflicts.v[i]))
			return sl_err_set(err, SL_ERROR, "out of memory");
	if (r->clean)
		return 0;
	if ((error = describe(c, idx, err)))
		return error;
	if (r->git_messages.len) {
		put(c, "--- git merge-tree:\n", 20);
		put(c, r->git_messages.ptr, r->git_messages.len);
	}
	return 0;
}

int merge_conflict_info(const char *repo_path, const char *ours_rev, const char *theirs_rev,
			const char *ours_label, const char *theirs_label, const struct merge_opts *opts,
			struct merge_conflict_info *info, struct sl_err *err)
{
	struct merge_result r = MERGE_RESULT_INIT;
	struct ci c = { NULL, info, ours_label ? ours_label : ours_rev,
			theirs_label ? theirs_label : theirs_rev };
	git_commit *ours = NULL, *theirs = NULL;
	git_index *idx = NULL;
	int error;

	sl_buf_init(&info->output, MERGE_CONFLICT_OUTPUT_MAX);
	error = git_repository_open_ext(&c.repo, repo_path, 0, NULL);
	if (error) {
		error = sl_err_git(err, error, "cannot open the repository '%s'", repo_path);
		goto out;
	}
	if ((error = merge__resolve_commit(&ours, c.repo, ours_rev, err)) ||
	    (error = merge__resolve_commit(&theirs, c.repo, theirs_rev, err)) ||
	    (error = merge__preview_commits(c.repo, ours, theirs, opts, &r, &idx, err)))
		goto out;
	error = fill(&c, &r, idx, err);
out:
	git_index_free(idx);
	merge_result_release(&r);
	git_commit_free(ours);
	git_commit_free(theirs);
	git_repository_free(c.repo);
	return error;
}

void merge_conflict_info_release(struct merge_conflict_info *info)
{
	merge_paths_release(&info->paths);
	sl_buf_release(&info->output);
}
