/*
 * merge_preview: libgit2's in-memory merge, cross-checked with git
 * merge-tree. Clean only when both say clean and wrote the same tree.
 */
#include "merge/merge_int.h"

#include <stdio.h>
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

/* The paths where two trees differ (both sides' names). */
static int add_tree_diff(struct merge_paths *p, git_repository *repo, const git_oid *a,
			 const git_oid *b, struct sl_err *err)
{
	git_tree *ta = NULL, *tb = NULL;
	git_diff *diff = NULL;
	size_t i, n;
	int error;

	if ((error = git_tree_lookup(&ta, repo, a)) || (error = git_tree_lookup(&tb, repo, b)) ||
	    (error = git_diff_tree_to_tree(&diff, repo, ta, tb, NULL))) {
		error = sl_err_git(err, error, "cannot compare the merged trees");
		goto out;
	}
	n = git_diff_num_deltas(diff);
	for (i = 0; i < n && !error; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		if (merge_paths_add(p, d->old_file.path) || merge_paths_add(p, d->new_file.path))
			error = sl_err_set(err, SL_ERROR, "out of memory");
	}
out:
	git_diff_free(diff);
	git_tree_free(ta);
	git_tree_free(tb);
	return error;
}

static int run_libgit2(git_repository *repo, const git_commit *ours, const git_commit *theirs,
		       struct merge_result *res, git_index **idx, struct sl_err *err)
{
	git_merge_options mo;
	int error;

	git_merge_options_init(&mo, GIT_MERGE_OPTIONS_VERSION);
	error = git_merge_commits(idx, repo, ours, theirs, &mo);
	if (error)
		return sl_err_git(err, error, "cannot merge '%s' into '%s'",
				  git_oid_tostr_s(&res->theirs), git_oid_tostr_s(&res->ours));
	res->lg_clean = !git_index_has_conflicts(*idx);
	if (!res->lg_clean)
		return add_index_conflicts(&res->conflicts, *idx, err);
	error = git_index_write_tree_to(&res->tree, *idx, repo);
	return error ? sl_err_git(err, error, "cannot write the merged tree") : 0;
}

/*
 * git names the side of a file/directory or file/symlink conflict it moves
 * away "<path>~<label>"; the labels are the hex ids we passed. Report the
 * repository path itself: the copy of `path` without that suffix.
 */
static void strip_label(char *path, const struct merge_result *res)
{
	char hex[2][GIT_OID_HEXSZ + 1];
	size_t n = strlen(path), i;

	git_oid_tostr(hex[0], sizeof(hex[0]), &res->ours);
	git_oid_tostr(hex[1], sizeof(hex[1]), &res->theirs);
	for (i = 0; i < 2; i++)
		if (n > GIT_OID_HEXSZ + 1 && path[n - GIT_OID_HEXSZ - 1] == '~' &&
		    !strcmp(path + n - GIT_OID_HEXSZ, hex[i]))
			path[n - GIT_OID_HEXSZ - 1] = '\0';
}

static int run_git(git_repository *repo, struct merge_result *res, struct sl_err *err)
{
	struct merge__git_tree gt = { 0 };
	size_t i;
	int error;

	sl_buf_init(&gt.messages, GIT_MESSAGES_MAX);
	error = merge__git_merge_tree(git_repository_commondir(repo), &res->ours, &res->theirs,
				      &gt, err);
	if (error)
		goto out;
	res->git_clean = gt.clean;
	git_oid_cpy(&res->git_tree, &gt.tree);
	for (i = 0; i < gt.paths.n; i++)
		strip_label(gt.paths.v[i], res);
	for (i = 0; i < gt.paths.n && !error; i++)
		if (merge_paths_add(&res->git_conflicts, gt.paths.v[i]) ||
		    merge_paths_add(&res->conflicts, gt.paths.v[i]))
			error = sl_err_set(err, SL_ERROR, "out of memory");
	sl_buf_add(&res->git_messages, sl_buf_cstr(&gt.messages), gt.messages.len);
out:
	merge__git_tree_release(&gt);
	return error;
}

/* Append git's first CONFLICT line to the reason, for people. */
static void add_git_message(struct merge_result *res)
{
	const char *msg = sl_buf_cstr(&res->git_messages);
	size_t len = strlen(res->reason), n = strcspn(msg, "\n");

	if (n && len + 3 < sizeof(res->reason))
		snprintf(res->reason + len, sizeof(res->reason) - len, " (%.*s)", (int)n, msg);
}

/* Decide clean or not and say why; res->lg_* and git_* are filled. */
static int judge(git_repository *repo, struct merge_result *res, int verify, struct sl_err *err)
{
	size_t n = res->conflicts.n;

	res->clean = 0;
	if (res->lg_clean && (!verify || (res->git_clean && git_oid_equal(&res->tree, &res->git_tree)))) {
		res->clean = 1;
		res->reason[0] = '\0';
	} else if (res->lg_clean && res->git_clean == 1) {
		snprintf(res->reason, sizeof(res->reason), "%s",
			 "libgit2 and git merge-tree wrote different trees (directory rename?); "
			 "treated as a conflict");
		return add_tree_diff(&res->conflicts, repo, &res->tree, &res->git_tree, err);
	} else if (res->lg_clean) {
		snprintf(res->reason, sizeof(res->reason),
			 "libgit2 and git merge-tree disagree (directory rename?): git reports "
			 "conflicts in %zu path%s, libgit2 none; treated as a conflict",
			 n, n == 1 ? "" : "s");
	} else if (res->git_clean == 1) {
		snprintf(res->reason, sizeof(res->reason),
			 "libgit2 and git merge-tree disagree: libgit2 reports conflicts in %zu "
			 "path%s, git none; treated as a conflict", n, n == 1 ? "" : "s");
	} else {
		snprintf(res->reason, sizeof(res->reason), "conflicting changes in %zu path%s",
			 n, n == 1 ? "" : "s");
	}
	if (!res->clean) {
		memset(&res->tree, 0, sizeof(res->tree));
		add_git_message(res);
	}
	return 0;
}

int merge__preview_commits(git_repository *repo, const git_commit *ours, const git_commit *theirs,
			   const struct merge_opts *opts, struct merge_result *res,
			   git_index **idx_out, struct sl_err *err)
{
	struct merge_opts defaults = MERGE_OPTS_INIT;
	git_index *idx = NULL;
	int error;

	if (!opts)
		opts = &defaults;
	if (!res->git_messages.max)
		sl_buf_init(&res->git_messages, GIT_MESSAGES_MAX);
	git_oid_cpy(&res->ours, git_commit_id(ours));
	git_oid_cpy(&res->theirs, git_commit_id(theirs));
	res->git_clean = -1;
	error = run_libgit2(repo, ours, theirs, res, &idx, err);
	if (!error && opts->verify)
		error = run_git(repo, res, err);
	if (!error)
		error = judge(repo, res, opts->verify, err);
	if (!error && idx_out) {
		*idx_out = idx;
		idx = NULL;
	}
	git_index_free(idx);
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
	merge_paths_release(&res->git_conflicts);
	sl_buf_release(&res->git_messages);
}
