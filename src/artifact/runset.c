/*
 * The commits of the runs, each with its run: what the runs brought, as
 * opposed to the target history they started from (target/target.h).
 */
#include "artifact/artifact_int.h"
#include "store/store.h"
#include "worktree/worktree.h"
#include "core/fs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REFLOG_MAX ((size_t)4 << 20)

int artifact_oids_add(struct artifact_oids *o, const git_oid *id)
{
	git_oid *nv;

	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 64;
		if (!(nv = realloc(o->v, o->cap * sizeof(*nv))))
			return SL_ERROR;
		o->v = nv;
	}
	git_oid_cpy(&o->v[o->n++], id);
	return 0;
}

int artifact_oid_cmp(const void *a, const void *b)
{
	return git_oid_cmp(a, b);
}

struct tipctx {
	struct artifact_runset *set;
	git_revwalk *walk;
	const char *run;
	const git_oid *base;
	int own_only;
};

static int add_tip(struct tipctx *t, const git_oid *id)
{
	struct artifact_runset *set = t->set;
	struct artifact_runset_tip *nv;

	if (git_revwalk_push(t->walk, id) != 0) {
		git_error_clear();
		return 0; /* gone (gc), or not a commit: nothing of it can be on the target */
	}
	if (!(nv = realloc(set->tips, (set->ntips + 1) * sizeof(*nv))))
		return SL_ERROR;
	set->tips = nv;
	memset(&nv[set->ntips], 0, sizeof(*nv));
	git_oid_cpy(&nv[set->ntips].id, id);
	if (t->base) {
		git_oid_cpy(&nv[set->ntips].base, t->base);
		nv[set->ntips].has_base = 1;
	}
	nv[set->ntips].own_only = t->own_only;
	if (!(nv[set->ntips].run = strdup(t->run ? t->run : "")))
		return SL_ERROR;
	set->ntips++;
	return 0;
}

/* Every commit a reflog file names (old and new values of each entry). */
static int add_reflog(struct tipctx *t, const char *path)
{
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	const char *p, *end;
	git_oid id;
	int error = 0, i;

	if (!path || sl_read_file(&b, path, REFLOG_MAX, &err) != 0)
		goto out; /* no reflog: nothing to add */
	for (p = sl_buf_cstr(&b); p && *p && !error; p = end ? end + 1 : NULL) {
		const char *msg;
		end = strchr(p, '\n');
		msg = memchr(p, '\t', end ? (size_t)(end - p) : strlen(p));
		/* the merge train's checkouts of a car: the car is no commit of the run's */
		if (msg && !strncmp(msg + 1, WORKTREE_TRAIN_REFLOG, strlen(WORKTREE_TRAIN_REFLOG)))
			continue;
		for (i = 0; i < 2 && !error; i++) {
			const char *hex = p + i * (GIT_OID_HEXSZ + 1);
			if ((end && hex + GIT_OID_HEXSZ > end) || strlen(hex) < GIT_OID_HEXSZ ||
			    git_oid_fromstrn(&id, hex, GIT_OID_HEXSZ) != 0 || git_oid_is_zero(&id))
				continue;
			error = add_tip(t, &id);
		}
	}
out:
	sl_buf_release(&b);
	return error;
}

/* A run's branch, its reflog and its worktree's HEAD reflog. */
static int add_branch(struct sl_ctx *ctx, struct tipctx *t, git_repository *git,
		      const char *branch)
{
	char *ref = sl_path_fmt("refs/heads/%s", branch), *log = NULL, *wt = NULL;
	git_oid id;
	int error = 0;

	if (!ref)
		return SL_ERROR;
	if (git_reference_name_to_id(&id, git, ref) == 0)
		error = add_tip(t, &id);
	git_error_clear();
	if (!error && asprintf(&log, "%s/logs/%s", ctx->repo.gitdir, ref) >= 0)
		error = add_reflog(t, log);
	if (!error && (wt = worktree_entry_path(ctx->repo.gitdir, t->run, "logs/HEAD")))
		error = add_reflog(t, wt);
	free(ref);
	free(log);
	free(wt);
	return error;
}

struct glob_data {
	struct tipctx *t;
	git_repository *git;
};

static int add_sluice_ref(const char *name, void *data)
{
	struct glob_data *g = data;
	const char *slash = strrchr(name, '/');
	git_oid id;

	if (git_reference_name_to_id(&id, g->git, name) != 0) {
		git_error_clear();
		return 0;
	}
	g->t->run = slash ? slash + 1 : name;
	g->t->base = &id; /* the ref's own commit only: what it merges is the target's or a run's */
	g->t->own_only = 1;
	return add_tip(g->t, &id) ? -1 : 0;
}

static int add_run(struct sl_ctx *ctx, git_repository *git, git_revwalk *walk,
		   struct artifact_runset *set, const struct store_run_commit *rc)
{
	struct tipctx t = { set, walk, rc->run_id, NULL, 0 };
	git_oid base, head;

	if (rc->base && git_oid_fromstr(&base, rc->base) == 0)
		t.base = &base;
	if (rc->head && git_oid_fromstr(&head, rc->head) == 0 && add_tip(&t, &head))
		return SL_ERROR;
	return rc->branch ? add_branch(ctx, &t, git, rc->branch) : 0;
}

static int cmp_owned(const void *a, const void *b)
{
	return git_oid_cmp(&((const struct artifact_owned *)a)->id,
			   &((const struct artifact_owned *)b)->id);
}

static int owned_add(struct artifact_runset *set, size_t *cap, const git_oid *id, const char *run)
{
	struct artifact_owned *nv;

	if (set->n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		if (!(nv = realloc(set->v, *cap * sizeof(*nv))))
			return SL_ERROR;
		set->v = nv;
	}
	git_oid_cpy(&set->v[set->n].id, id);
	set->v[set->n++].run = run;
	return 0;
}

static int in_oids(const struct artifact_oids *o, const git_oid *id)
{
	return o->n && bsearch(id, o->v, o->n, sizeof(*o->v), artifact_oid_cmp) != NULL;
}

/*
 * One run's own commits: its tips [from, to) that `live` holds (the others
 * are reachable from `hide`), minus what its base or `hide` reaches.
 */
static int own_run(struct artifact_runset *set, size_t *cap, git_revwalk *walk, size_t from,
		   size_t to, const struct artifact_oids *live, const git_oid *hide)
{
	const struct artifact_runset_tip *t = &set->tips[from];
	git_oid id;
	size_t i;
	int pushed = 0, error = 0;

	git_revwalk_reset(walk);
	for (i = from; i < to; i++)
		if (in_oids(live, &set->tips[i].id) && git_revwalk_push(walk, &set->tips[i].id) == 0)
			pushed = 1;
	git_error_clear();
	if (!pushed)
		return 0;
	for (i = from; i < to; i++)
		if (set->tips[i].has_base && git_revwalk_hide(walk, &set->tips[i].base) != 0)
			git_error_clear();
	if (hide && git_revwalk_hide(walk, hide) != 0)
		git_error_clear();
	if (t->own_only) /* a refs/sluice/ ref: its own commit */
		return owned_add(set, cap, &t->id, t->run);
	while (!error && !git_revwalk_next(&id, walk))
		error = owned_add(set, cap, &id, t->run);
	git_error_clear();
	return error;
}

int artifact_runset_load(struct sl_ctx *ctx, git_repository *git, const git_oid *hide,
			struct artifact_runset *set, struct sl_err *err)
{
	struct store_run_commit *rc = NULL;
	struct artifact_oids live = { NULL, 0, 0 };
	struct tipctx t;
	struct glob_data g;
	git_revwalk *walk = NULL;
	git_oid id;
	size_t n = 0, i, from, cap = 0;
	int error;

	memset(set, 0, sizeof(*set));
	if ((error = store_run_commits(ctx->st, &rc, &n, err)) != 0)
		return error;
	if ((error = git_revwalk_new(&walk, git)) != 0) {
		error = sl_err_git(err, error, "cannot walk the history");
		goto out;
	}
	for (i = 0; i < n && !error; i++)
		error = add_run(ctx, git, walk, set, &rc[i]);
	memset(&t, 0, sizeof(t));
	t.set = set;
	t.walk = walk;
	g.t = &t;
	g.git = git;
	if (!error && git_reference_foreach_glob(git, "refs/sluice/*", add_sluice_ref, &g) < 0)
		error = SL_ERROR;
	if (error)
		goto oom;
	/* one walk first: the tips `hide` reaches can bring nothing new */
	if (hide && git_revwalk_hide(walk, hide) != 0)
		git_error_clear();
	while (set->ntips && !git_revwalk_next(&id, walk))
		if (artifact_oids_add(&live, &id))
			goto oom;
	git_error_clear();
	if (live.n)
		qsort(live.v, live.n, sizeof(*live.v), artifact_oid_cmp);
	for (from = 0; from < set->ntips && !error; from = i) {
		/*
		 * A run's tips together; a refs/sluice/ ref (a train car, named by its
		 * run) alone: hiding its commit would hide the run's head it merges
		 */
		for (i = from + 1; i < set->ntips && !set->tips[from].own_only &&
				   !set->tips[i].own_only &&
				   !strcmp(set->tips[i].run, set->tips[from].run);
		     i++)
			;
		error = own_run(set, &cap, walk, from, i, &live, hide);
	}
	if (error)
		goto oom;
	if (set->n)
		qsort(set->v, set->n, sizeof(*set->v), cmp_owned);
	goto out;
oom:
	error = sl_err_set(err, SL_ERROR, "out of memory");
out:
	free(live.v);
	git_revwalk_free(walk);
	store_run_commits_free(rc, n);
	return error;
}

const char *artifact_runset_owner(const struct artifact_runset *set, const git_oid *id)
{
	struct artifact_owned key, *o;

	if (!set->n)
		return NULL;
	git_oid_cpy(&key.id, id);
	o = bsearch(&key, set->v, set->n, sizeof(*set->v), cmp_owned);
	if (!o)
		return NULL;
	/* the first of equal entries is as good as any: every one names a run that brought it */
	return o->run && o->run[0] ? o->run : NULL;
}

void artifact_runset_release(struct artifact_runset *set)
{
	size_t i;

	for (i = 0; i < set->ntips; i++)
		free(set->tips[i].run);
	free(set->tips);
	free(set->v);
	memset(set, 0, sizeof(*set));
}

/* What one observation found. */

const char *artifact_trailer(const git_message_trailer_array *arr, const char *key)
{
	size_t i;

	for (i = 0; i < arr->count; i++)
		if (!strcmp(arr->trailers[i].key, key))
			return arr->trailers[i].value;
	return NULL;
}
