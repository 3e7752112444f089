/* The paths between two git trees (core/tree_paths.h). */
#include "core/tree_paths.h"

#include <string.h>

/* git's order of tree entries: a folder's name sorts as if it ended in '/'. */
static int entry_cmp(const git_tree_entry *a, const git_tree_entry *b)
{
	const char *x = git_tree_entry_name(a), *y = git_tree_entry_name(b);
	size_t nx = strlen(x), ny = strlen(y), n = nx < ny ? nx : ny;
	int c = memcmp(x, y, n);
	unsigned char cx, cy;

	if (c)
		return c;
	cx = nx > n ? (unsigned char)x[n] : git_tree_entry_type(a) == GIT_OBJECT_TREE ? '/' : 0;
	cy = ny > n ? (unsigned char)y[n] : git_tree_entry_type(b) == GIT_OBJECT_TREE ? '/' : 0;
	return (int)cx - (int)cy;
}

struct tree_walk {
	git_repository *repo;
	sl_tree_path_fn fn;
	void *payload;
	char path[4096];
};

static int walk_pair(struct tree_walk *w, size_t len, const git_tree_entry *a,
		     const git_tree_entry *b);

/* Every path of `a`'s and `b`'s entries under w->path[0..len) (either tree may be NULL). */
static int walk_trees(struct tree_walk *w, size_t len, const git_tree *a, const git_tree *b)
{
	size_t i = 0, j = 0, na = a ? git_tree_entrycount(a) : 0, nb = b ? git_tree_entrycount(b) : 0;
	int rc = 0;

	while (rc == 0 && (i < na || j < nb)) {
		const git_tree_entry *ea = i < na ? git_tree_entry_byindex(a, i) : NULL;
		const git_tree_entry *eb = j < nb ? git_tree_entry_byindex(b, j) : NULL;
		int c = !ea ? 1 : !eb ? -1 : entry_cmp(ea, eb);

		rc = walk_pair(w, len, c <= 0 ? ea : NULL, c >= 0 ? eb : NULL);
		i += c <= 0;
		j += c >= 0;
	}
	return rc;
}

/* One name, in `a`, `b` or both: nothing when equal, else its paths on both sides. */
static int walk_pair(struct tree_walk *w, size_t len, const git_tree_entry *a,
		     const git_tree_entry *b)
{
	const git_tree_entry *e = a ? a : b;
	const char *name = git_tree_entry_name(e);
	size_t n = strlen(name);
	git_tree *ta = NULL, *tb = NULL;
	int rc = 0, da = a && git_tree_entry_type(a) == GIT_OBJECT_TREE;
	int db = b && git_tree_entry_type(b) == GIT_OBJECT_TREE;

	if (a && b && git_tree_entry_filemode(a) == git_tree_entry_filemode(b) &&
	    git_oid_equal(git_tree_entry_id(a), git_tree_entry_id(b)))
		return 0;
	if (len + n + 2 > sizeof(w->path))
		return GIT_EBUFS;
	memcpy(w->path + len, name, n + 1);
	if ((a && !da) || (b && !db)) /* a file (link, submodule) on one side at least */
		rc = w->fn(w->path, w->payload);
	if (rc == 0 && (da || db)) {
		w->path[len + n] = '/';
		w->path[len + n + 1] = '\0';
		if ((!da || (rc = git_tree_lookup(&ta, w->repo, git_tree_entry_id(a))) == 0) &&
		    (!db || (rc = git_tree_lookup(&tb, w->repo, git_tree_entry_id(b))) == 0))
			rc = walk_trees(w, len + n + 1, ta, tb);
	}
	git_tree_free(ta);
	git_tree_free(tb);
	w->path[len] = '\0';
	return rc;
}

int sl_tree_paths(git_repository *repo, const git_tree *a, const git_tree *b,
			sl_tree_path_fn fn, void *payload)
{
	struct tree_walk w;

	w.repo = repo;
	w.fn = fn;
	w.payload = payload;
	w.path[0] = '\0';
	return walk_trees(&w, 0, a, b);
}
