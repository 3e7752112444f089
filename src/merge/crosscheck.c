/*
 * git's merge, the authority: `git merge-tree --write-tree -z --name-only OURS THEIRS`
 * (git >= 2.38). Exit 0: clean, the output is "<tree>\0". Exit 1:
 * conflicts, the output is "<tree>\0", then one "<path>\0" per conflicted
 * path, an empty "\0", then messages, each "<n>\0<path>\0 x n <type>\0<text>\0".
 * It runs in a git directory of sluice's own (private_gitdir()).
 */
#include "merge/merge_int.h"
#include "core/fs.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include <stdlib.h>
#include <string.h>

#define MERGE_TREE_OUT_MAX ((size_t)64 << 20)
#define MESSAGES_MAX ((size_t)64 << 10)

/* The next NUL-terminated token at *pos, or NULL at the end. */
static const char *next_token(const char *data, size_t len, size_t *pos, size_t *tlen)
{
	const char *start, *nul;

	if (*pos >= len)
		return NULL;
	start = data + *pos;
	nul = memchr(start, '\0', len - *pos);
	if (!nul)
		return NULL;
	*tlen = (size_t)(nul - start);
	*pos += *tlen + 1;
	return start;
}

/* Note the n paths of a message of `type` starting at `pos` where the type asks for it. */
static int note_paths(const char *data, size_t len, size_t pos, long n, const char *type,
		      struct merge__git_tree *out)
{
	struct merge_paths *set = !strcmp(type, "CONFLICT (contents)") ? &out->content :
				  !strcmp(type, "CONFLICT (binary)")   ? &out->binary :
									 NULL;
	const char *tok;
	size_t tlen;

	while (set && n-- > 0 && (tok = next_token(data, len, &pos, &tlen)))
		if (merge_paths_add(set, tok))
			return SL_ERROR;
	return 0;
}

static int parse_messages(const char *data, size_t len, size_t pos, struct merge__git_tree *out)
{
	const char *tok, *type;
	size_t tlen, first;

	while ((tok = next_token(data, len, &pos, &tlen))) {
		long n = strtol(tok, NULL, 10), k = n;

		if (n < 0 || n > 1000000)
			return SL_ERROR;
		first = pos;
		while (k-- > 0)
			if (!next_token(data, len, &pos, &tlen))
				return SL_ERROR;
		type = next_token(data, len, &pos, &tlen);
		tok = type ? next_token(data, len, &pos, &tlen) : NULL;
		if (!tok || note_paths(data, len, first, n, type, out))
			return SL_ERROR;
		if (!strcmp(type, "Auto-merging"))
			continue;
		/* one line each: a line break inside comes from a path (a full buffer drops the rest) */
		if (tlen && tok[tlen - 1] == '\n')
			tlen--;
		for (size_t i = 0; i < tlen; i++)
			if (tok[i] == '\n' || tok[i] == '\r')
				sl_buf_puts(&out->messages, tok[i] == '\n' ? "\\n" : "\\r");
			else
				sl_buf_add(&out->messages, tok + i, 1);
		sl_buf_add(&out->messages, "\n", 1);
	}
	return 0;
}

int merge__parse_merge_tree(const char *data, size_t len, int clean, struct merge__git_tree *out,
			    struct sl_err *err)
{
	const char *tok;
	size_t pos = 0, tlen;

	out->clean = clean;
	if (!out->messages.max)
		sl_buf_init(&out->messages, MESSAGES_MAX);
	tok = next_token(data, len, &pos, &tlen);
	if (!tok || tlen != GIT_OID_HEXSZ || git_oid_fromstrn(&out->tree, tok, tlen))
		goto bad;
	if (clean)
		return 0;
	while ((tok = next_token(data, len, &pos, &tlen)) && tlen)
		if (merge_paths_add(&out->paths, tok))
			return sl_err_set(err, SL_ERROR, "out of memory");
	if (!tok || parse_messages(data, len, pos, out))
		goto bad;
	return 0;
bad:
	return sl_err_set(err, SL_ERROR,
			  "cannot parse the output of 'git merge-tree'; is git 2.38 or newer installed?");
}

/*
 * A git directory of sluice's own for git merge-tree: HEAD and refs/ only,
 * in a new private temporary folder. With GIT_OBJECT_DIRECTORY pointing at
 * the repository's objects, `git merge-tree` reads and writes the
 * repository's objects but never its config (merge drivers, filters, hooks,
 * fsmonitor a builder could plant in the shared .git/config), its
 * info/attributes (what selects a driver) nor its replace refs and grafts.
 */
static int private_gitdir(char *dir, size_t n, struct sl_err *err)
{
	const char *tmp = getenv("TMPDIR");
	char *refs, *head;
	int error;

	if ((size_t)snprintf(dir, n, "%s/sluice-merge-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp") >=
	    n)
		return sl_err_set(err, SL_EINVALID, "TMPDIR is too long");
	if (!mkdtemp(dir)) {
		dir[0] = '\0'; /* nothing to remove */
		return sl_err_sys(err, errno, "cannot create a temporary folder in '%s'",
				  tmp && *tmp == '/' ? tmp : "/tmp");
	}
	refs = sl_path_join(dir, "refs");
	head = sl_path_join(dir, "HEAD");
	if (!refs || !head)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if (mkdir(refs, 0700) < 0)
		error = sl_err_sys(err, errno, "cannot create '%s'", refs);
	else
		error = sl_write_file(head, "ref: refs/heads/sluice\n", 22, err);
	free(refs);
	free(head);
	return error;
}

int merge__git_merge_tree(const char *gitdir, const git_oid *ours, const git_oid *theirs,
			  struct merge__git_tree *out, struct sl_err *err)
{
	char o[GIT_OID_HEXSZ + 1], t[GIT_OID_HEXSZ + 1], own[4200], gd[4300], od[4300];
	const char *args[] = { "merge-tree", "--write-tree", "-z", "--name-only", o, t, NULL };
	const char *env[] = { gd, od, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			      "GIT_ATTR_NOSYSTEM=1", "GIT_NO_REPLACE_OBJECTS=1", "GIT_CONFIG_COUNT=1",
			      "GIT_CONFIG_KEY_0=core.attributesFile", "GIT_CONFIG_VALUE_0=/dev/null",
			      NULL };
	size_t glen = strlen(gitdir);
	struct sl_err ignored = SL_ERR_INIT;
	struct sl_buf buf;
	int error, code = 0;

	own[0] = '\0';
	sl_buf_init(&buf, MERGE_TREE_OUT_MAX);
	git_oid_tostr(o, sizeof(o), ours);
	git_oid_tostr(t, sizeof(t), theirs);
	while (glen > 1 && gitdir[glen - 1] == '/')
		glen--;
	if ((error = private_gitdir(own, sizeof(own), err)) < 0)
		goto out;
	snprintf(gd, sizeof(gd), "GIT_DIR=%s", own);
	if ((size_t)snprintf(od, sizeof(od), "GIT_OBJECT_DIRECTORY=%.*s/objects", (int)glen,
			     gitdir) >= sizeof(od)) {
		error = sl_err_set(err, SL_EINVALID, "the git directory '%s' is too long", gitdir);
		goto out;
	}
	error = merge__run_git_env(own, env, args, &buf, 1, &code, err);
	if (!error)
		error = merge__parse_merge_tree(buf.ptr ? buf.ptr : "", buf.len, code == 0, out, err);
out:
	if (own[0])
		sl_rm_rf(own, &ignored);
	sl_buf_release(&buf);
	return error;
}

void merge__git_tree_release(struct merge__git_tree *t)
{
	merge_paths_release(&t->paths);
	merge_paths_release(&t->content);
	merge_paths_release(&t->binary);
	sl_buf_release(&t->messages);
}
