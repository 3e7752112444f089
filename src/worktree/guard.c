/*
 * The no_write guard of a read-only run (worktree.h): after its builder
 * exited, the run's worktree must be what it was made: HEAD on the run
 * branch, the branch at its base, nothing tracked or untracked changed.
 * Every git here runs with GIT_DIR naming the worktree's entry in the
 * repository's .git/worktrees and GIT_WORK_TREE the worktree, so that a
 * .git file the builder replaced or deleted points git nowhere else.
 */
#include "worktree/worktree_int.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/fs.h"
#include "core/git.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GUARD_OUT_MAX ((size_t)64 << 20)

/* The buffer without its trailing newlines and spaces. */
static void rtrim(struct sl_buf *b)
{
	while (b->len && (b->ptr[b->len - 1] == '\n' || b->ptr[b->len - 1] == ' ' ||
			  b->ptr[b->len - 1] == '\r'))
		b->ptr[--b->len] = '\0';
}

struct guard_env {
	char git_dir[4200], work_tree[4200], index[4200];
	const char *env[4];
};

static int guard_env_init(struct guard_env *g, const char *wt, const char *entry,
			  const char *index, struct sl_err *err)
{
	size_t n = 0;

	if (sl_fmt_fixed(g->git_dir, sizeof(g->git_dir), "GIT_DIR=%s", entry) != 0 ||
	    sl_fmt_fixed(g->work_tree, sizeof(g->work_tree), "GIT_WORK_TREE=%s", wt) != 0 ||
	    (index && sl_fmt_fixed(g->index, sizeof(g->index), "GIT_INDEX_FILE=%s", index) != 0))
		return sl_err_set(err, SL_EINVALID, "the worktree path '%s' is too long", wt);
	g->env[n++] = g->git_dir;
	g->env[n++] = g->work_tree;
	if (index)
		g->env[n++] = g->index;
	g->env[n] = NULL;
	return 0;
}

/* git `args` in the worktree: 0 with *exit_code set, or an error (git could not run). */
static int git_in(const char *wt, const struct guard_env *g, const char *const *args,
		  const struct sl_buf *in, struct sl_buf *out, int out_fd, int *exit_code,
		  struct sl_err *err)
{
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	struct sl_git_result res;
	int error;

	o.cwd = wt;
	o.ceiling = 1;
	o.env = g->env;
	o.out = out;
	o.out_fd = out_fd;
	o.caller_checks = 1;
	if (in) {
		o.stdin_data = in->ptr;
		o.stdin_len = in->len;
	}
	if ((error = sl_git_run(&o, args, &res, err)) != 0)
		return error;
	if (res.timed_out)
		return sl_err_set(err, SL_ERROR, "'git %s' in '%s' %s", args[0], wt, res.how);
	*exit_code = res.exit_code;
	return 0;
}

/* One changed path: counted, kept in the list (bounded), added to the pathspec. */
static int add_path(struct worktree_guard *out, struct sl_buf *spec, const char *p,
		    const char *const *excluded)
{
	size_t i;

	if (!*p || worktree__is_excluded(p, excluded))
		return 0;
	for (i = 0; out->paths && out->paths[i]; i++)
		if (!strcmp(out->paths[i], p))
			return 0;
	out->count++;
	if (sl_strv_len(out->paths) < WORKTREE_GUARD_PATHS_MAX && sl_strv_push(&out->paths, p) < 0)
		return -1;
	if (sl_buf_puts(spec, ":(literal)") < 0 || sl_buf_add(spec, p, strlen(p) + 1) < 0)
		return -1;
	return 0;
}

/*
 * The HEAD check: HEAD names refs/heads/<branch>, and the branch is at
 * base. Sets out->head (why not) and *moved_to (the branch's commit when it
 * moved to one, for the paths of what it committed).
 */
static int check_head(const char *wt, const struct guard_env *g, const char *branch,
		      const char *base, struct worktree_guard *out, char moved_to[41],
		      struct sl_err *err)
{
	const char *sym[] = { "symbolic-ref", "-q", "HEAD", NULL };
	const char *rev[] = { "rev-parse", "-q", "--verify", NULL, NULL };
	struct sl_buf b = SL_BUF_INIT;
	char want[600];
	int error, code = 0;

	moved_to[0] = '\0';
	if (sl_fmt_fixed(want, sizeof(want), "refs/heads/%s", branch) != 0)
		return sl_err_set(err, SL_EINVALID, "the run branch name '%s' is too long", branch);
	sl_buf_init(&b, 4096);
	if ((error = git_in(wt, g, sym, NULL, &b, 0, &code, err)) != 0)
		goto out;
	rtrim(&b);
	if (code || strcmp(sl_buf_cstr(&b), want)) {
		snprintf(out->head, sizeof(out->head), "HEAD (%.200s, not '%.200s')",
			 code ? "detached or unreadable" : sl_buf_cstr(&b), want);
		goto out;
	}
	sl_buf_reset(&b);
	{
		char spec[620];
		snprintf(spec, sizeof(spec), "%s^{commit}", want);
		rev[3] = spec;
		error = git_in(wt, g, rev, NULL, &b, 0, &code, err);
	}
	if (error)
		goto out;
	rtrim(&b);
	if (code)
		snprintf(out->head, sizeof(out->head), "the run branch '%.200s' (deleted)", branch);
	else if (strcmp(sl_buf_cstr(&b), base)) {
		snprintf(out->head, sizeof(out->head), "the run branch '%.200s' (moved to %.12s)",
			 branch, sl_buf_cstr(&b));
		snprintf(moved_to, 41, "%.40s", sl_buf_cstr(&b));
	}
out:
	sl_buf_release(&b);
	return error;
}

/* The worktree's .git file still names its entry (a builder could rewrite or delete it). */
static void check_dotgit(const char *wt, const char *entry, struct worktree_guard *out)
{
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err e = SL_ERR_INIT;
	char *dotgit = sl_path_join(wt, ".git");
	const char *t;
	struct stat st;

	if (!dotgit)
		return;
	if (lstat(dotgit, &st) < 0 || !S_ISREG(st.st_mode) ||
	    sl_read_file(&b, dotgit, 8192, &e) != 0)
		goto changed;
	rtrim(&b);
	t = sl_buf_cstr(&b);
	if (!strncmp(t, "gitdir: ", 8) && worktree__same_path(t + 8, entry))
		goto done;
changed:
	if (!out->head[0])
		snprintf(out->head, sizeof(out->head), "the worktree's .git file");
done:
	sl_buf_release(&b);
	free(dotgit);
}

/* Every path `git status` names (staged, unstaged, untracked; not ignored). */
static int status_paths(const char *wt, const struct guard_env *g, struct worktree_guard *out,
			struct sl_buf *spec, const char *const *excluded, struct sl_err *err)
{
	const char *args[] = { "--no-optional-locks", "status", "--porcelain", "-z", "--no-renames",
			       "--untracked-files=all", "--ignore-submodules=none", NULL };
	struct sl_buf b = SL_BUF_INIT;
	size_t i;
	int error, code = 0;

	sl_buf_init(&b, GUARD_OUT_MAX);
	if ((error = git_in(wt, g, args, NULL, &b, 0, &code, err)) != 0)
		goto out;
	if (code) {
		if (!out->head[0])
			snprintf(out->head, sizeof(out->head),
				 "the worktree's git data ('git status' fails in it)");
		goto out;
	}
	for (i = 0; i + 3 < b.len; i += strlen(b.ptr + i) + 1)
		if (add_path(out, spec, b.ptr + i + 3, excluded) < 0) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			break;
		}
out:
	sl_buf_release(&b);
	return error;
}

/* The paths the moved branch changed since the base (what the builder committed). */
static int committed_paths(const char *wt, const struct guard_env *g, const char *base,
			   const char *moved_to, struct worktree_guard *out, struct sl_buf *spec,
			   const char *const *excluded, struct sl_err *err)
{
	const char *args[] = { "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff",
			       base, moved_to, "--", NULL };
	struct sl_buf b = SL_BUF_INIT;
	size_t i;
	int error, code = 0;

	sl_buf_init(&b, GUARD_OUT_MAX);
	if ((error = git_in(wt, g, args, NULL, &b, 0, &code, err)) == 0 && !code)
		for (i = 0; i < b.len; i += strlen(b.ptr + i) + 1)
			if (add_path(out, spec, b.ptr + i, excluded) < 0) {
				error = sl_err_set(err, SL_ERROR, "out of memory");
				break;
			}
	sl_buf_release(&b);
	return error;
}

/*
 * no_write.patch: the base with the changed paths as the worktree holds
 * them, staged in a scratch index (GIT_INDEX_FILE): neither the run
 * branch nor the worktree's own index is touched.
 */
static int write_patch(const char *wt, const char *entry, const char *base,
		       const struct sl_buf *spec, const char *index, const char *patch_path,
		       struct sl_err *err)
{
	const char *read_tree[] = { "read-tree", base, NULL };
	const char *add[] = { "-c", "core.splitIndex=false", "add", "-A", "--pathspec-from-file=-",
			      "--pathspec-file-nul", NULL };
	const char *diff[] = { "diff", "--cached", "--binary", "--full-index", "--no-color",
			       "--no-ext-diff", "--no-textconv", "--no-renames", "--src-prefix=a/",
			       "--dst-prefix=b/", base, "--", NULL };
	struct guard_env g;
	int error, code = 0, fd = -1;

	unlink(index);
	if ((error = guard_env_init(&g, wt, entry, index, err)) != 0 ||
	    (error = git_in(wt, &g, read_tree, NULL, NULL, 0, &code, err)) != 0)
		goto out;
	if (!code && spec->len)
		error = git_in(wt, &g, add, spec, NULL, 0, &code, err);
	if (error || code) {
		error = error ? error : sl_err_set(err, SL_ERROR, "cannot stage the changes of '%s' "
						   "in a scratch index (git exit %d)", wt, code);
		goto out;
	}
	if ((error = sl_open_file(patch_path, O_WRONLY | O_CREAT | O_TRUNC, 0644, &fd, err)) != 0)
		goto out;
	if ((error = git_in(wt, &g, diff, NULL, NULL, fd, &code, err)) == 0 && code)
		error = sl_err_set(err, SL_ERROR, "cannot write '%s' (git diff exit %d)", patch_path,
				   code);
out:
	if (fd >= 0)
		close(fd);
	unlink(index);
	return error;
}

int worktree_guard_no_write(const struct worktree_guard_opts *o, struct worktree_guard *out,
			    struct sl_err *err)
{
	struct sl_buf spec = SL_BUF_INIT;
	struct guard_env g;
	char moved_to[41];
	int error;

	memset(out, 0, sizeof(*out));
	sl_buf_init(&spec, 0);
	if ((error = guard_env_init(&g, o->wt, o->entry, NULL, err)) != 0 ||
	    (error = check_head(o->wt, &g, o->branch, o->base, out, moved_to, err)) != 0)
		goto out;
	check_dotgit(o->wt, o->entry, out);
	if ((error = status_paths(o->wt, &g, out, &spec, o->excluded, err)) != 0 ||
	    (moved_to[0] && (error = committed_paths(o->wt, &g, o->base, moved_to, out, &spec,
						     o->excluded, err)) != 0))
		goto out;
	if ((out->count || out->head[0]) && o->patch_path)
		error = write_patch(o->wt, o->entry, o->base, &spec, o->scratch_index, o->patch_path,
				    err);
out:
	sl_buf_release(&spec);
	return error;
}

void worktree_guard_describe(const struct worktree_guard *g, char *out, size_t n)
{
	struct sl_buf b = SL_BUF_INIT;
	size_t i, shown = sl_strv_len(g->paths);

	for (i = 0; i < shown; i++)
		sl_buf_addf(&b, "%s%s", i ? ", " : "", g->paths[i]);
	if (g->count > shown)
		sl_buf_addf(&b, " and %zu more", g->count - shown);
	if (g->head[0])
		sl_buf_addf(&b, "%s%s", b.len ? "; " : "", g->head);
	snprintf(out, n, "%s", b.len ? sl_buf_cstr(&b) : "nothing");
	sl_buf_release(&b);
}

void worktree_guard_release(struct worktree_guard *g)
{
	sl_strv_free(g->paths);
	memset(g, 0, sizeof(*g));
}

/* The worktree's .git file and its entry's gitdir file, as a worktree's are made. */
static int relink(const struct worktree_guard_opts *o, struct sl_err *err)
{
	char *dotgit = sl_path_join(o->wt, ".git"), *back = sl_path_join(o->entry, "gitdir");
	char *a = sl_path_fmt("gitdir: %s\n", o->entry), *b = sl_path_fmt("%s\n", dotgit);
	int error;

	if (!dotgit || !back || !a || !b)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if ((error = sl_rm_rf(dotgit, err)) == 0 &&
		 (error = sl_write_file_atomic(dotgit, a, strlen(a), err)) == 0)
		error = sl_write_file_atomic(back, b, strlen(b), err);
	free(dotgit);
	free(back);
	free(a);
	free(b);
	return error;
}

int worktree_guard_restore(const struct worktree_guard_opts *o, struct sl_err *err)
{
	const char *sym[] = { "symbolic-ref", "HEAD", NULL, NULL };
	const char *upd[] = { "update-ref", NULL, o->base, NULL };
	struct guard_env g;
	char ref[600];
	int error, code = 0;

	if (sl_fmt_fixed(ref, sizeof(ref), "refs/heads/%s", o->branch) != 0)
		return sl_err_set(err, SL_EINVALID, "the run branch name '%s' is too long", o->branch);
	sym[2] = ref;
	upd[1] = ref;
	/* HEAD back on the run branch first: a reset moves the branch HEAD names */
	if ((error = relink(o, err)) != 0 ||
	    (error = guard_env_init(&g, o->wt, o->entry, NULL, err)) != 0 ||
	    (error = git_in(o->wt, &g, sym, NULL, NULL, 0, &code, err)) != 0 ||
	    (!code && (error = git_in(o->wt, &g, upd, NULL, NULL, 0, &code, err)) != 0))
		return error;
	if (code)
		return sl_err_set(err, SL_ERROR, "cannot put the run branch '%s' back at %.12s "
				  "(git exit %d)", o->branch, o->base, code);
	return worktree_reset(o->wt, o->base, o->excluded, err);
}

/* ---- the state of a worktree as a tree (a read-only gate) ----------------- */

/* The excluded paths as ":(literal)p\0" pathspecs. */
static int excluded_spec(struct sl_buf *spec, const char *const *excluded)
{
	for (; excluded && *excluded; excluded++)
		if (sl_buf_puts(spec, ":(literal)") < 0 ||
		    sl_buf_add(spec, *excluded, strlen(*excluded) + 1) < 0)
			return -1;
	return 0;
}

int worktree_state_tree(const char *wt, const char *const *excluded, const char *index,
			char out[41], struct sl_err *err)
{
	const char *read_tree[] = { "read-tree", "HEAD", NULL };
	const char *add[] = { "-c", "core.splitIndex=false", "add", "-A", NULL };
	const char *rm[] = { "rm", "--cached", "-r", "-q", "--ignore-unmatch",
			     "--pathspec-from-file=-", "--pathspec-file-nul", NULL };
	const char *write_tree[] = { "write-tree", NULL };
	struct sl_buf spec = SL_BUF_INIT, b = SL_BUF_INIT;
	struct guard_env g;
	char env[4200];
	int error, code = 0;

	sl_buf_init(&b, 4096);
	unlink(index);
	if (sl_fmt_fixed(env, sizeof(env), "GIT_INDEX_FILE=%s", index) != 0)
		return sl_err_set(err, SL_EINVALID, "the path '%s' is too long", index);
	g.env[0] = env;
	g.env[1] = NULL;
	if ((error = git_in(wt, &g, read_tree, NULL, NULL, 0, &code, err)) != 0 || code ||
	    (error = git_in(wt, &g, add, NULL, NULL, 0, &code, err)) != 0 || code)
		goto out;
	if (excluded && *excluded) {
		if (excluded_spec(&spec, excluded) < 0) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			goto out;
		}
		if ((error = git_in(wt, &g, rm, &spec, NULL, 0, &code, err)) != 0 || code)
			goto out;
	}
	if ((error = git_in(wt, &g, write_tree, NULL, &b, 0, &code, err)) != 0 || code)
		goto out;
	rtrim(&b);
	snprintf(out, 41, "%.40s", sl_buf_cstr(&b));
out:
	if (!error && code)
		error = sl_err_set(err, SL_ERROR, "cannot read the state of the worktree '%s' (git "
				   "exit %d)", wt, code);
	unlink(index);
	sl_buf_release(&spec);
	sl_buf_release(&b);
	return error;
}

int worktree_tree_changes(const char *wt, const char *a, const char *b, char *out, size_t n,
			  struct sl_err *err)
{
	const char *args[] = { "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", a, b,
			       "--", NULL };
	struct worktree_guard gd = { 0 };
	struct sl_buf names = SL_BUF_INIT, spec = SL_BUF_INIT;
	struct guard_env g = { .env = { NULL } };
	size_t i;
	int error, code = 0;

	sl_buf_init(&names, GUARD_OUT_MAX);
	if ((error = git_in(wt, &g, args, NULL, &names, 0, &code, err)) == 0)
		for (i = 0; !code && i < names.len; i += strlen(names.ptr + i) + 1)
			if (add_path(&gd, &spec, names.ptr + i, NULL) < 0) {
				error = sl_err_set(err, SL_ERROR, "out of memory");
				break;
			}
	if (!error)
		worktree_guard_describe(&gd, out, n);
	worktree_guard_release(&gd);
	sl_buf_release(&names);
	sl_buf_release(&spec);
	return error;
}

static void guard_opts(const struct worktree_guard_run *r, struct worktree_guard_opts *o,
		       char *entry, char *index, char *patch)
{
	memset(o, 0, sizeof(*o));
	o->wt = r->wt;
	o->entry = entry;
	o->branch = r->branch;
	o->base = r->base;
	o->excluded = r->excluded;
	o->scratch_index = index;
	o->patch_path = patch;
}

int worktree_guard_run_restore(const struct worktree_guard_run *r, struct sl_err *err)
{
	struct worktree_guard_opts o;
	char *entry = worktree_entry_path(r->gitdir, r->run_id, NULL);
	int error;

	if (!entry)
		return sl_err_set(err, SL_ERROR, "out of memory");
	guard_opts(r, &o, entry, NULL, NULL);
	error = worktree_guard_restore(&o, err);
	free(entry);
	return error;
}

int worktree_guard_run_check(const struct worktree_guard_run *r, char *why, size_t n,
			     struct sl_err *err)
{
	struct worktree_guard g = { 0 };
	struct worktree_guard_opts o;
	char *entry = worktree_entry_path(r->gitdir, r->run_id, NULL);
	char *index = NULL, *patch = NULL, what[2048];
	int error;

	if (!entry || !(index = sl_path_fmt("%s/attempts/%d/no_write.index", r->run_dir,
					      r->attempt)) ||
	    !(patch = sl_path_fmt("%s/attempts/%d/no_write.patch", r->run_dir, r->attempt))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	guard_opts(r, &o, entry, index, patch);
	if ((error = worktree_guard_no_write(&o, &g, err)) != 0)
		goto out;
	if (g.count || g.head[0]) {
		worktree_guard_describe(&g, what, sizeof(what));
		snprintf(why, n, "no_write: the builder changed %s (attempt %d; see "
			 "attempts/%d/no_write.patch)", what, r->attempt, r->attempt);
		error = 1;
	}
out:
	worktree_guard_release(&g);
	free(entry);
	free(index);
	free(patch);
	return error;
}
