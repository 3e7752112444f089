/*
 * Lanes of the merge train (docs/config.md, "Lanes"): merge.lanes names
 * sets of paths, each with its own merge gates. A car's lanes are those of
 * the paths its run changed; a car with a path in no lane is wide (every
 * lane, lanes 0). Cars that share no lane are in different lines: each is
 * built on the nearest car ahead that shares one (else the tip), tested
 * with its lanes' gates only, and lands on its own. A car built again on a
 * tip another lane moved keeps its green when its lanes' paths are the same
 * there: a lane's gates depend only on its paths, the promise the docs
 * state and the audit checks on every such landing.
 */
#include "train/train.h"
#include "core/config.h"
#include "core/ctx.h"
#include "core/fs.h"

#include "core/tree_paths.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t train_lanes_of_path(const struct sl_config *cfg, const char *path)
{
	int64_t m = 0;
	size_t i, k;

	for (i = 0; i < cfg->merge.nlanes; i++)
		for (k = 0; cfg->merge.lanes[i].paths && cfg->merge.lanes[i].paths[k]; k++)
			if (sl_path_glob(cfg->merge.lanes[i].paths[k], path)) {
				m |= (int64_t)1 << i;
				break;
			}
	return m;
}

/* FNV-1a of string s and a separator after it, on from h. */
static uint32_t fnv(uint32_t h, const char *s, unsigned char sep)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return (h ^ sep) * 16777619u;
}

int64_t train_lanes_key(const struct sl_config *cfg)
{
	uint32_t h = 2166136261u;
	size_t i, k;

	if (!cfg->merge.nlanes)
		return 0;
	for (i = 0; i < cfg->merge.nlanes; i++) { /* names, paths and gates, in order */
		const struct sl_lane *l = &cfg->merge.lanes[i];
		h = fnv(h, l->name, 1);
		for (k = 0; l->paths[k]; k++)
			h = fnv(h, l->paths[k], 2);
		for (k = 0; l->gates[k]; k++)
			h = fnv(h, l->gates[k], 3);
		h = fnv(h, "", 4);
	}
	return (int64_t)(h & 0x7fffffffu) | 1;
}

int train_shares(const struct store_car *a, const struct store_car *b)
{
	return !a->lanes || !b->lanes || (a->lanes & b->lanes);
}

void train_lane_words(const struct sl_config *cfg, int64_t lanes, char *buf, size_t n)
{
	size_t i, len = 0;

	buf[0] = '\0';
	if (!lanes) {
		snprintf(buf, n, "every lane");
		return;
	}
	for (i = 0; i < cfg->merge.nlanes && len < n; i++)
		if (lanes & ((int64_t)1 << i))
			len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? ", " : "",
						cfg->merge.lanes[i].name);
}

struct change_walk {
	int (*fn)(void *arg, const char *path);
	void *arg;
};

static int each_path(const char *path, void *payload)
{
	struct change_walk *cw = payload;

	return cw->fn(cw->arg, path) ? 1 : 0;
}

/* Each path the two trees differ on (old and new names both), given to fn until it returns 1. */
static int each_change(git_repository *repo, const char *tree_a, const char *tree_b,
		       int (*fn)(void *arg, const char *path), void *arg)
{
	struct change_walk cw = { fn, arg };
	git_oid a, b;
	git_tree *ta = NULL, *tb = NULL;
	int rc = -1;

	if (!git_oid_fromstr(&a, tree_a) && !git_oid_fromstr(&b, tree_b) &&
	    !git_tree_lookup(&ta, repo, &a) && !git_tree_lookup(&tb, repo, &b))
		rc = sl_tree_paths(repo, ta, tb, each_path, &cw);
	git_tree_free(ta);
	git_tree_free(tb);
	return rc < 0 ? -1 : rc;
}

struct lanes_walk {
	const struct sl_config *cfg;
	int64_t lanes; /* train_lanes_of_run(): what the paths touch; else the lanes looked at */
	int wide;      /* a path in no lane */
};

static int touch(void *arg, const char *path)
{
	struct lanes_walk *w = arg;
	int64_t m = train_lanes_of_path(w->cfg, path);

	w->lanes |= m;
	w->wide |= !m;
	return w->wide; /* a wide car: no need to look further */
}

static int in_lanes(void *arg, const char *path)
{
	struct lanes_walk *w = arg;

	return (train_lanes_of_path(w->cfg, path) & w->lanes) != 0;
}

static int tree_of(git_repository *repo, const git_oid *commit, char out[41])
{
	git_commit *c = NULL;

	if (git_commit_lookup(&c, repo, commit))
		return -1;
	git_oid_tostr(out, 41, git_commit_tree_id(c));
	git_commit_free(c);
	return 0;
}

int train_lanes_of_run(struct sl_ctx *ctx, const char *tip, const char *head, int64_t *lanes,
		       struct sl_err *err)
{
	struct lanes_walk w = { ctx->cfg, 0, 0 };
	git_repository *repo = NULL;
	git_oid t, h, mb;
	char from[41], to[41];
	int rc;

	*lanes = 0;
	if (!ctx->cfg->merge.nlanes)
		return 0;
	if ((rc = git_repository_open(&repo, ctx->repo.root)) || (rc = git_oid_fromstr(&t, tip)) ||
	    (rc = git_oid_fromstr(&h, head)) || (rc = git_merge_base(&mb, repo, &t, &h)) ||
	    (rc = tree_of(repo, &mb, from)) || (rc = tree_of(repo, &h, to)) ||
	    (rc = each_change(repo, from, to, touch, &w)) < 0) {
		git_repository_free(repo);
		return sl_err_git(err, rc, "cannot read the paths %.12s changed since %.12s", head,
				  tip);
	}
	git_repository_free(repo);
	*lanes = w.wide || !w.lanes ? 0 : w.lanes;
	return 0;
}

/* The tree of `what` (a commit or a tree, hex) into out; -1 when it cannot be read. */
static int peel_tree(git_repository *repo, const char *what, char out[41])
{
	git_object *o = NULL, *t = NULL;
	git_oid oid;
	int rc = -1;

	if (!git_oid_fromstr(&oid, what) && !git_object_lookup(&o, repo, &oid, GIT_OBJECT_ANY) &&
	    !git_object_peel(&t, o, GIT_OBJECT_TREE)) {
		git_oid_tostr(out, 41, git_object_id(t));
		rc = 0;
	}
	git_object_free(t);
	git_object_free(o);
	return rc;
}

int train_lanes_same(const char *repo_root, const struct sl_config *cfg, int64_t lanes,
		     const char *a, const char *b)
{
	struct lanes_walk w = { cfg, lanes, 0 };
	git_repository *repo = NULL;
	char ta[41], tb[41];
	int rc = -1;

	if (!lanes || !a || !b)
		return 0;
	if (git_repository_open(&repo, repo_root))
		return 0;
	if (!peel_tree(repo, a, ta) && !peel_tree(repo, b, tb))
		rc = strcmp(ta, tb) ? each_change(repo, ta, tb, in_lanes, &w) : 0;
	git_repository_free(repo);
	return rc == 0;
}

int train_lane_cfg(const struct sl_ctx *ctx, int64_t lanes, struct train_lane_cfg *out)
{
	const struct sl_config *cfg = ctx->cfg;
	size_t i, k, n = 0;

	memset(out, 0, sizeof(*out));
	if (!cfg->merge.nlanes || !lanes)
		return 0; /* a wide car: merge.gates, as without lanes */
	for (i = 0; i < cfg->merge.nlanes; i++)
		n += sl_strv_len(cfg->merge.lanes[i].gates);
	if (!(out->gates = calloc(n + 1, sizeof(*out->gates))))
		return -1;
	n = 0;
	for (i = 0; i < cfg->merge.nlanes; i++)
		for (k = 0; (lanes & ((int64_t)1 << i)) && cfg->merge.lanes[i].gates[k]; k++) {
			size_t j;
			for (j = 0; j < n && strcmp(out->gates[j], cfg->merge.lanes[i].gates[k]); j++)
				;
			if (j == n)
				out->gates[n++] = cfg->merge.lanes[i].gates[k];
		}
	out->cfg = *cfg;
	out->cfg.merge.gates = out->gates;
	out->ctx = *ctx;
	out->ctx.cfg = &out->cfg;
	return 1;
}

void train_lane_cfg_release(struct train_lane_cfg *c)
{
	free(c->gates);
	memset(c, 0, sizeof(*c));
}
