/*
 * The one reader of landings: the target's first-parent line one commit at a
 * time with the run its MERGE_TRAILER_RUN trailer (written by merge/commit.c)
 * names (merge_line_*), and over it which runs landed between a base and a
 * tip. A semantic conflict's rivals, the dossier's rivals, the train and the
 * audit's walk of the target read through it (docs/ARCHITECTURE.md, "merge").
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

int merge_line_open(struct merge_line *l, git_repository *repo, const struct merge_line_opts *o)
{
	size_t i;
	int rc;

	memset(l, 0, sizeof(*l));
	l->repo = repo;
	l->max = o->max_commits;
	for (i = 0; i < 2; i++)
		if (o->until[i])
			git_oid_cpy(&l->until[l->nuntil++], o->until[i]);
	if ((rc = git_revwalk_new(&l->walk, repo)) || (rc = git_revwalk_push(l->walk, o->tip)) ||
	    (o->base && (rc = git_revwalk_hide(l->walk, o->base)))) {
		l->done = 1;
		return rc;
	}
	git_revwalk_simplify_first_parent(l->walk);
	return 0;
}

/* `id` was walked: 1 when it was the last `until` still to come. */
static int until_reached(struct merge_line *l, const git_oid *id)
{
	unsigned int i;

	for (i = 0; i < l->nuntil; i++)
		if (git_oid_equal(id, &l->until[i]))
			l->seen |= 1u << i;
	return l->nuntil && l->seen == (1u << l->nuntil) - 1;
}

/* What the walk gave last. */
static void let_go(struct merge_line *l)
{
	git_commit_free(l->commit);
	free(l->run);
	l->commit = NULL;
	l->run = NULL;
}

int merge_line_next(struct merge_line *l, struct merge_line_commit *c)
{
	const char *subj;
	git_oid id;

	let_go(l);
	while (!l->done && (!l->max || l->walked < l->max)) {
		if (git_revwalk_next(&id, l->walk) != 0) {
			l->done = 1; /* the end (libgit2 starts again after it) */
			break;
		}
		l->walked++;
		l->done = until_reached(l, &id);
		if (git_commit_lookup(&l->commit, l->repo, &id) != 0)
			continue;
		memset(c, 0, sizeof(*c));
		c->commit = l->commit;
		c->id = git_commit_id(l->commit);
		git_oid_tostr(c->hex, sizeof(c->hex), c->id);
		c->run = l->run = merge_run_of_message(git_commit_message(l->commit));
		c->author = git_commit_author(l->commit);
		subj = git_commit_summary(l->commit);
		c->subject = subj ? subj : "";
		c->parents = git_commit_parentcount(l->commit);
		return 1;
	}
	return 0;
}

void merge_line_close(struct merge_line *l)
{
	let_go(l);
	git_revwalk_free(l->walk);
	l->walk = NULL;
	l->done = 1;
}

/* `c` as an entry of *v when the options keep it: 0, 1 kept, or -1 out of memory. */
static int keep(const struct merge_landings_opts *o, const struct merge_line_commit *c,
		struct merge_run_landing *l)
{
	size_t len;

	memset(l, 0, sizeof(*l));
	if ((o->merges_only && c->parents != 2) || (!c->run && !o->persons) ||
	    (c->run && o->skip_run && !strcmp(c->run, o->skip_run)))
		return 0;
	memcpy(l->commit, c->hex, sizeof(l->commit));
	if (c->run && !(l->run = strdup(c->run)))
		return -1;
	len = strlen(c->author->name) + strlen(c->author->email) + 4;
	if ((l->author = malloc(len)) != NULL)
		snprintf(l->author, len, "%s <%s>", c->author->name, c->author->email);
	l->subject = strdup(c->subject);
	return l->author && l->subject ? 1 : -1;
}

/* The landings of `line` that `o` keeps into *v. */
static int walk_line(struct merge_line *line, const struct merge_landings_opts *o,
		     struct merge_run_landing **v, size_t *n)
{
	struct merge_line_commit c;
	size_t cap = 0;
	int rc = 0;

	while (rc >= 0 && (!o->max_found || *n < o->max_found) && merge_line_next(line, &c)) {
		if (*n == cap) {
			struct merge_run_landing *nv = realloc(*v, (cap = cap ? cap * 2 : 16) * sizeof(**v));

			if (!nv)
				return -1;
			*v = nv;
		}
		if ((rc = keep(o, &c, &(*v)[*n])) != 0)
			(*n)++; /* a half-made entry (-1) is freed with the rest */
	}
	return rc < 0 ? -1 : 0;
}

int merge_landings_between(const char *repo_root, const struct merge_landings_opts *o,
			   struct merge_run_landing **out, size_t *n, struct sl_err *err)
{
	struct merge_line_opts lo = MERGE_LINE_OPTS_INIT;
	struct merge_line line = MERGE_LINE_INIT;
	git_repository *repo = NULL;
	git_oid t, b;
	int rc, oom = 0;

	*out = NULL;
	*n = 0;
	lo.tip = &t;
	lo.base = o->base ? &b : NULL;
	lo.max_commits = o->max_commits;
	if ((rc = git_oid_fromstr(&t, o->tip ? o->tip : "")) ||
	    (o->base && (rc = git_oid_fromstr(&b, o->base))) ||
	    (rc = git_repository_open(&repo, repo_root)) || (rc = merge_line_open(&line, repo, &lo)))
		goto out;
	if (walk_line(&line, o, out, n) != 0) {
		merge_run_landings_free(*out, *n);
		*out = NULL;
		*n = 0;
		oom = 1;
	}
out:
	merge_line_close(&line);
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
