#ifndef SL_RUNNER_DIFF_H
#define SL_RUNNER_DIFF_H
/*
 * A run's diff artifacts (DESIGN.md section 9): diff.patch, byte for byte
 * what `git diff --binary --full-index -M <base> <head>` prints, and
 * files_changed.json, the list of changed files.
 *
 * The patch is written by the git CLI itself (libgit2 1.5's patches differ
 * from git's: a TAB after names with spaces, headers of empty files, and
 * the zlib bytes of binary patches), with every option that configuration
 * could change pinned on the command line (prefixes, colour, external diff,
 * textconv, algorithm, context, order file, quoting, rename limit,
 * submodule format), so the bytes depend only on the two commits (and on
 * .gitattributes, as for git). The file list comes from libgit2 with the
 * same rename detection (renames only, 50% similarity, limit 1000).
 */
#include <stddef.h>
#include <jansson.h>
#include "core/buf.h"
#include "core/err.h"

struct runner_file_change {
	char status;    /* 'A' added, 'M' modified, 'D' deleted, 'R' renamed, 'C' copied, 'T' type changed */
	char *path;     /* the path in head (in base for 'D') */
	char *old_path; /* the path in base, for 'R' and 'C'; else NULL */
};

struct runner_file_changes {
	struct runner_file_change *v; /* sorted by path (strcmp) */
	size_t n;
};

#define RUNNER_FILE_CHANGES_INIT { NULL, 0 }

/* The rename limit both the patch and the list use (git's default). */
#define RUNNER_DIFF_RENAME_LIMIT 1000

/*
 * The files changed from base to head (commit ids, 40 hex digits) in the
 * repository at `repo_path` (a work tree or a git dir). *out is the
 * caller's: runner_file_changes_release().
 */
int runner_diff_files(const char *repo_path, const char *base_hex, const char *head_hex,
		      struct runner_file_changes *out, struct sl_err *err);
void runner_file_changes_release(struct runner_file_changes *fc);

/*
 * files_changed.json: [{"path","status","old_path"?}]. A name that is not
 * UTF-8 (git allows any bytes but NUL) is written with each such byte as
 * U+FFFD, and beside it "path_quoted" (or "old_path_quoted"): the name as
 * git quotes it in diff.patch (core.quotePath, without the quotes), which
 * keeps every byte. runner_file_changes_to_json(): a new reference, the
 * caller's (NULL on out-of-memory); runner_file_changes_json(): the text,
 * a new string, the caller's (free()).
 */
/*
 * A JSON string of n bytes of text that need not be UTF-8 (file contents in
 * a diff, file names, git's messages): each byte that is not part of valid
 * UTF-8, and NUL, becomes U+FFFD. A new reference; NULL on out-of-memory.
 */
json_t *runner_diff_json_text(const char *s, size_t n);

json_t *runner_file_changes_to_json(const struct runner_file_changes *fc);
char *runner_file_changes_json(const struct runner_file_changes *fc);

/*
 * Write the patch of base..head to `patch_path` (atomically: a temporary
 * file beside it, then rename) with `git diff` run in `repo_path`.
 */
int runner_diff_patch(const char *repo_path, const char *base_hex, const char *head_hex,
		      const char *patch_path, struct sl_err *err);

/*
 * A `git diff --stat` of base..head from git objects, with the file list's
 * rename detection: *out is a new reference, the caller's:
 * {"files_changed", "insertions", "deletions",
 *  "files": [{"path", "binary", "insertions", "deletions"}]}.
 */
int runner_diff_stat(const char *repo_path, const char *base_hex, const char *head_hex,
		     json_t **out, struct sl_err *err);

/*
 * The same patch as runner_diff_patch(), from git objects only, into `out`
 * (bounded by out->max: the bytes past it are dropped) with its full size
 * in *total. What the reviewer is shown comes from here, never from a file
 * in the run folder, which builders and gates can write.
 */
int runner_diff_patch_mem(const char *repo_path, const char *base_hex, const char *head_hex,
			  struct sl_buf *out, size_t *total, struct sl_err *err);

/*
 * Both artifacts: diff.patch at `patch_path` and files_changed.json at
 * `files_json_path` (either may be NULL to skip it). When `files` is not
 * NULL it receives the list (the caller's, runner_file_changes_release()).
 */
int runner_diff_write(const char *repo_path, const char *base_hex, const char *head_hex,
		      const char *patch_path, const char *files_json_path,
		      struct runner_file_changes *files, struct sl_err *err);

#endif
