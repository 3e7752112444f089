/*
 * The one reader of landings: which runs landed between a base and a tip,
 * from the MERGE_TRAILER_RUN trailer (written by merge/commit.c) on the
 * tip's first-parent line. A semantic conflict's rivals, the dossier's
 * rivals and the train use it (docs/ARCHITECTURE.md, "merge").
 */
#include "merge/merge_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *merge_run_of_message(const char *message)
{
	git_message_trailer_array arr = { 0 };
	char *run = NULL;
	size_t i;

	if (message && git_message_trailers(&arr, message) == 0)
		for (i = 0; i < arr.count && !run; i++) /* the first one counts */
			if (!strcmp(arr.trailers[i].key, MERGE_TRAILER_RUN))
				run = strdup(arr.trailers[i].value);
	git_message_trailer_array_free(&arr);
	git_error_clear();
	return run;
}

/* `c` as an entry of *v when the options keep it: 0, 1 kept, or -1 out of memory. */
static int keep(const struct merge_landings_opts *o, const git_commit *c,
		struct merge_run_landing *l)
{
	const git_signature *a = git_commit_author(c);
	const char *subj = git_commit_summary((git_commit *)c);
	char *run = NULL;
	size_t len;

	memset(l, 0, sizeof(*l));
	if (o->merges_only && git_commit_parentcount(c) != 2)
		return 0;
	run = merge_run_of_message(git_commit_message(c));
	if ((!run && !o->persons) || (run && o->skip_run && !strcmp(run, o->skip_run))) {
		free(run);
		return 0;
	}
	git_oid_tostr(l->commit, sizeof(l->commit), git_commit_id(c));
	l->run = run;
	len = strlen(a->name) + strlen(a->email) + 4;
	if ((l->author = malloc(len)) != NULL)
		snprintf(l->author, len, "%s <%s>", a->name, a->email);
	l->subject = strdup(subj ? subj : "");
	return l->author && l->subject ? 1 : -1;
}

/* The walk itself, with `repo` and `walk` the caller's. */
static int walk_line(git_repository *repo, git_revwalk *walk,
		     const struct merge_landings_opts *o, struct merge_run_landing **v,
		     size_t *n)
{
	size_t walked = 0, cap = 0;
	git_oid id;
	int rc = 0;

	while (rc >= 0 && (!o->max_commits || walked < o->max_commits) &&
	       (!o->max_found || *n < o->max_found) && git_revwalk_next(&id, walk) == 0) {
		git_commit *c = NULL;

		walked++;
		if (git_commit_lookup(&c, repo, &id) != 0)
			continue;
		if (*n == cap) {
			struct merge_run_landing *nv = realloc(*v, (cap = cap ? cap * 2 : 16) * sizeof(**v));

			if (!nv) {
				git_commit_free(c);
				return -1;
			}
			*v = nv;
		}
		if ((rc = keep(o, c, &(*v)[*n])) != 0)
			(*n)++; /* a half-made entry (-1) is freed with the rest */
		git_commit_free(c);
	}
	return rc < 0 ? -1 : 0;
}

int merge_landings_between(const char *repo_root, const struct merge_landings_opts *o,
			   struct merge_run_landing **out, size_t *n, struct sl_err *err)
{
	git_repository *repo = NULL;
	git_revwalk *walk = NULL;
	git_oid t, b;
	int rc, oom = 0;

	*out = NULL;
	*n = 0;
	if ((rc = git_oid_fromstr(&t, o->tip ? o->tip : "")) ||
	    (o->base && (rc = git_oid_fromstr(&b, o->base))) ||
	    (rc = git_repository_open(&repo, repo_root)) || (rc = git_revwalk_new(&walk, repo)) ||
	    (rc = git_revwalk_push(walk, &t)) || (o->base && (rc = git_revwalk_hide(walk, &b))))
		goto out;
	git_revwalk_simplify_first_parent(walk);
	if (walk_line(repo, walk, o, out, n) != 0) {
		merge_run_landings_free(*out, *n);
		*out = NULL;
		*n = 0;
		oom = 1;
	}
out:
	git_revwalk_free(walk);
	git_repository_free(repo);
	if (oom)
		return sl_err_set(err, SL_ERROR, "out of memory walking '%s'", o->tip);
	if (!rc)
		return 0;
	return sl_err_git(err, rc, "cannot walk '%s' for the runs it landed", o->tip ? o->tip : "");
}

void merge_run_landings_free(struct merge_run_landing *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++) {
		free(v[i].run);
		free(v[i].author);
		free(v[i].subject);
	}
	free(v);
}
