/*
 * merge_preview: git merge-tree --write-tree is the authority (verdict,
 * tree, conflicted paths, messages); libgit2's in-memory merge is only a
 * second opinion, computed when asked and reported apart.
 */
#include "merge/merge_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIT_MESSAGES_MAX ((size_t)64 << 10)

int merge__resolve_commit(git_commit **out, git_repository *repo, const char *rev,
			  struct sl_err *err)
{
	git_object *obj = NULL;
	int error;

	*out = NULL;
	if (!rev || !*rev || rev[0] == '-')
		return sl_err_set(err, SL_EINVALID, "invalid revision '%s'; name a commit",
				  rev ? rev : "");
	error = git_revparse_single(&obj, repo, rev);
	if (!error)
		error = git_object_peel((git_object **)out, obj, GIT_OBJECT_COMMIT);
	git_object_free(obj);
	if (error)
		return sl_err_set(err, SL_EINVALID, "revision '%s' names no commit; %s", rev,
				  "check the branch name or commit id");
	return 0;
}

/* Add every side's path of every conflict entry of `idx`. */
static int add_index_conflicts(struct merge_paths *p, git_index *idx, struct sl_err *err)
{
	git_index_conflict_iterator *it = NULL;
	const git_index_entry *e[3];
	int error, i;

	error = git_index_conflict_iterator_new(&it, idx);
	if (error)
		return sl_err_git(err, error, "cannot list merge conflicts");
	while (!(error = git_index_conflict_next(&e[0], &e[1], &e[2], it)))
		for (i = 0; i < 3; i++)
			if (e[i] && merge_paths_add(p, e[i]->path)) {
				error = sl_err_set(err, SL_ERROR, "out of memory");
				goto out;
			}
	error = error == GIT_ITEROVER ? 0 : sl_err_git(err, error, "cannot list merge conflicts");
out:
	git_index_conflict_iterator_free(it);
	return error;
}

/* libgit2's second opinion, into res->lg_*; its index to *idx. */
static int run_libgit2(git_repository *repo, const git_commit *ours, const git_commit *theirs,
		       struct merge_result *res, git_index **idx, struct sl_err *err)
{
	git_merge_options mo;
	int error;

	git_merge_options_init(&mo, GIT_MERGE_OPTIONS_VERSION);
	error = git_merge_commits(idx, repo, ours, theirs, &mo);
	if (error)
		return sl_err_git(err, error, "cannot merge '%s' into '%s' with libgit2",
				  git_oid_tostr_s(&res->theirs), git_oid_tostr_s(&res->ours));
	res->lg_clean = !git_index_has_conflicts(*idx);
	if (!res->lg_clean)
		return add_index_conflicts(&res->lg_conflicts, *idx, err);
	error = git_index_write_tree_to(&res->lg_tree, *idx, repo);
	return error ? sl_err_git(err, error, "cannot write libgit2's merged tree") : 0;
}

/*
 * git names the side of a file/directory or file/symlink conflict it moves
 * away "<path>~<label>"; the labels are the hex ids we passed. The length
 * of `path` without that suffix.
 */
static size_t unlabelled_len(const char *path, const struct merge_result *res)
{
	char hex[2][GIT_OID_HEXSZ + 1];
	size_t n = strlen(path), i;

	git_oid_tostr(hex[0], sizeof(hex[0]), &res->ours);
	git_oid_tostr(hex[1], sizeof(hex[1]), &res->theirs);
	for (i = 0; i < 2; i++)
		if (n > GIT_OID_HEXSZ + 1 && path[n - GIT_OID_HEXSZ - 1] == '~' &&
		    !strcmp(path + n - GIT_OID_HEXSZ, hex[i]))
			return n - GIT_OID_HEXSZ - 1;
	return n;
}

/* git merge-tree: the verdict, the tree, the paths and the messages. */
static int run_git(git_repository *repo, struct merge_result *res, struct merge__git_tree *gt,
		   struct sl_err *err)
{
	size_t i;
	int error;

	sl_buf_init(&gt->messages, GIT_MESSAGES_MAX);
	error = merge__git_merge_tree(git_repository_commondir(repo), &res->ours, &res->theirs,
				      gt, err);
	if (error)
		return error;
	res->clean = gt->clean;
	git_oid_cpy(&res->tree, &gt->tree);
	for (i = 0; i < gt->paths.n && !error; i++) {
		char *copy = strdup(gt->paths.v[i]);

		if (copy)
			copy[unlabelled_len(copy, res)] = '\0';
		if (!copy || merge_paths_add(&res->conflicts, copy))
			error = sl_err_set(err, SL_ERROR, "out of memory");
		free(copy);
	}
	sl_buf_add(&res->git_messages, sl_buf_cstr(&gt->messages), gt->messages.len);
	return error;
}

/* The reason, for people: how many paths, and git's first CONFLICT line. */
static void set_reason(struct merge_result *res)
{
	const char *msg = sl_buf_cstr(&res->git_messages);
	size_t n = res->conflicts.n, len, first = strcspn(msg, "\n");

	res->reason[0] = '\0';
	if (res->clean)
		return;
	snprintf(res->reason, sizeof(res->reason), "conflicting changes in %zu path%s", n,
		 n == 1 ? "" : "s");
	len = strlen(res->reason);
	if (first && len + 3 < sizeof(res->reason))
		snprintf(res->reason + len, sizeof(res->reason) - len, " (%.*s)", (int)first, msg);
}

/* git's merge into res (and *gt), libgit2's when asked (its index to *idx_out if wanted). */
static int preview(git_repository *repo, const git_commit *ours, const git_commit *theirs,
		   const struct merge_opts *opts, struct merge_result *res,
		   struct merge__git_tree *gt, git_index **idx_out, struct sl_err *err)
{
	git_index *idx = NULL;
	int error;

	if (idx_out)
		*idx_out = NULL;
	if (!res->git_messages.max)
		sl_buf_init(&res->git_messages, GIT_MESSAGES_MAX);
	git_oid_cpy(&res->ours, git_commit_id(ours));
	git_oid_cpy(&res->theirs, git_commit_id(theirs));
	res->lg_clean = -1;
	error = run_git(repo, res, gt, err);
	if (!error)
		set_reason(res);
	if (!error && opts && opts->libgit2_opinion)
		error = run_libgit2(repo, ours, theirs, res, &idx, err);
	if (!error && idx_out) {
		*idx_out = idx;
		idx = NULL;
	}
	git_index_free(idx);
	return error;
}

int merge__preview_git(git_repository *repo, const git_commit *ours, const git_commit *theirs,
		       const struct merge_opts *opts, struct merge_result *res,
		       struct merge__git_tree *gt, struct sl_err *err)
{
	return preview(repo, ours, theirs, opts, res, gt, NULL, err);
}

int merge__preview_commits(git_repository *repo, const git_commit *ours, const git_commit *theirs,
			   const struct merge_opts *opts, struct merge_result *res,
			   git_index **idx_out, struct sl_err *err)
{
	struct merge__git_tree gt = { 0 };
	int error = preview(repo, ours, theirs, opts, res, &gt, idx_out, err);

	merge__git_tree_release(&gt);
	return error;
}

int merge_preview(const char *repo_path, const char *ours_rev, const char *theirs_rev,
		  const struct merge_opts *opts, struct merge_result *res, struct sl_err *err)
{
	git_repository *repo = NULL;
	git_commit *ours = NULL, *theirs = NULL;
	int error;

	error = git_repository_open_ext(&repo, repo_path, 0, NULL);
	if (error) {
		error = sl_err_git(err, error, "cannot open the repository '%s'", repo_path);
		goto out;
	}
	if ((error = merge__resolve_commit(&ours, repo, ours_rev, err)) ||
	    (error = merge__resolve_commit(&theirs, repo, theirs_rev, err)))
		goto out;
	error = merge__preview_commits(repo, ours, theirs, opts, res, NULL, err);
out:
	git_commit_free(ours);
	git_commit_free(theirs);
	git_repository_free(repo);
	return error;
}

void merge_result_release(struct merge_result *res)
{
	merge_paths_release(&res->conflicts);
	merge_paths_release(&res->lg_conflicts);
	sl_buf_release(&res->git_messages);
}
