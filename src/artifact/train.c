/*
 * What people read about the merge train (issue 12): a run's car, from the
 * store's train_cars while it is in the train, or its gate record
 * (train.json) once it landed; the tail of a merge gate's log. Shared by
 * sluice show (dossier.c) and sluice report (report.c). Reads only.
 */
#include "artifact/artifact_int.h"
#include "worktree/worktree.h"
#include "store/store.h"
#include "merge/merge.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/time.h"

#include <fcntl.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TRAIN_JSON_MAX ((size_t)16 << 20)

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Out of the line: red, or in conflict with the car ahead (as the train says, step_train.c). */
static int in_line(const struct store_car *c)
{
	return c->status != TRAIN_RED && c->status != TRAIN_CONFLICT;
}

/* The car of `run_id` and its place in the line of its target. 1: found; 0: none. */
int artifact_car_get(struct sl_ctx *ctx, const char *run_id, struct artifact_car *out)
{
	struct store_car c, *all = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0, i;

	struct store_run r;
	int merged;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	memset(&r, 0, sizeof(r));
	if (store_train_get(ctx->st, run_id, &c, &err) != 0)
		return 0;
	/* a landed run's car stays in the store until the next tick: its record is train.json */
	merged = store_run_get(ctx->st, run_id, &r, &err) == 0 && r.state == RUN_MERGED;
	store_run_release(&r);
	if (merged) {
		store_car_release(&c);
		return 0;
	}
	out->status = c.status;
	out->base = dup_or_null(c.base);
	out->head = dup_or_null(c.head);
	out->commit = dup_or_null(c.commit);
	out->tree = dup_or_null(c.tree);
	out->ahead = dup_or_null(c.ahead);
	out->gates_json = dup_or_null(c.gates_json);
	out->covered_by = dup_or_null(c.covered_by);
	out->covered_commit = dup_or_null(c.covered_commit);
	out->lanes = c.lanes;
	out->lane_commit = dup_or_null(c.lane_commit);
	out->joined_ms = c.joined_ms;
	out->started_ms = c.started_ms;
	out->tested_ms = c.tested_ms;
	if (store_train_list(ctx->st, c.target, &all, &n, &err) == 0)
		for (i = 0; i < n; i++) {
			/* merge.lanes: its line is the cars that share a lane with it (train_shares()) */
			if (!in_line(&all[i]) ||
			    (all[i].lanes && c.lanes && !(all[i].lanes & c.lanes)))
				continue;
			out->cars++;
			if (all[i].seq <= c.seq && in_line(&c))
				out->position++;
		}
	store_cars_free(all, n);
	store_car_release(&c);
	return 1;
}

void artifact_car_release(struct artifact_car *c)
{
	free(c->base);
	free(c->head);
	free(c->commit);
	free(c->tree);
	free(c->ahead);
	free(c->gates_json);
	free(c->covered_by);
	free(c->covered_commit);
	free(c->lane_commit);
	memset(c, 0, sizeof(*c));
}

/* The work order of a run (a new string), or NULL. */
char *artifact_run_work_order(struct sl_ctx *ctx, const char *run_id)
{
	struct store_run r;
	struct sl_err err = SL_ERR_INIT;
	char *wo = NULL;

	memset(&r, 0, sizeof(r));
	if (run_id && store_run_get(ctx->st, run_id, &r, &err) == 0 && !strcmp(r.id, run_id) &&
	    r.work_order_id)
		wo = strdup(r.work_order_id);
	store_run_release(&r);
	return wo;
}

/* The gate record of a landed run, <dir>/train.json, or NULL. */
json_t *artifact_train_record(const char *dir)
{
	struct sl_err err = SL_ERR_INIT;
	char *path = sl_path_join(dir, "train.json");
	json_t *j = NULL;

	if (path && sl_path_exists(path))
		sl_json_read(path, TRAIN_JSON_MAX, &j, &err);
	free(path);
	if (j && !json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

/* A gate's name that can name a file of train/gates/ (no '/', not a dot name). */
static int plain_name(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..") &&
	       strlen(name) <= 128;
}

json_t *artifact_gate_log_tail(const char *dir, const char *name, size_t max)
{
	char rel[160], *path;
	struct stat st;
	json_t *j = NULL;
	char *buf = NULL;
	ssize_t n;
	int fd = -1;

	if (!plain_name(name) ||
	    (size_t)snprintf(rel, sizeof(rel), "train/gates/%s.log", name) >= sizeof(rel) ||
	    !(path = sl_path_join(dir, rel)))
		return NULL;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	free(path);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !(buf = malloc(max + 1)))
		goto out;
	n = pread(fd, buf, max, st.st_size > (off_t)max ? st.st_size - (off_t)max : 0);
	if (n >= 0)
		j = worktree_diff_json_text(buf, (size_t)n);
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return j;
}


/* The gates a car was tested with: its gates_json, else train/gates.json while it has none. */
static json_t *car_gates(const char *run_id, const struct artifact_car *c, const char *dir)
{
	struct sl_err err = SL_ERR_INIT;
	struct store_gates sg;
	char *path = NULL;
	json_t *g;

	store_gates_parse(run_id, c->gates_json, &sg, &err); /* logged there */
	g = sg.all ? json_incref(sg.all) : NULL;
	store_gates_release(&sg);
	sl_err_clear(&err);
	if (!g && (c->status == TRAIN_GREEN || c->status == TRAIN_RED) &&
	    (path = sl_path_join(dir, "train/gates.json")))
		sl_json_read(path, TRAIN_JSON_MAX, &g, &err);
	free(path);
	if (g && !json_is_array(g)) {
		json_decref(g);
		g = NULL;
	}
	return g ? g : json_null();
}

/* The sum of the gates' duration_ms. */
static json_int_t gates_ms(json_t *gates)
{
	json_int_t ms = 0;
	json_t *g;
	size_t i;

	json_array_foreach(gates, i, g)
		ms += json_integer_value(json_object_get(g, "duration_ms"));
	return ms;
}

/*
 * merge.batch (docs/config.md, "Batches"): the commit the gates ran on, and
 * the run whose test covers the car (null: its own test) with its work order.
 */
static void covered(struct sl_ctx *ctx, json_t *j, const char *by, const char *tested)
{
	char *wo = artifact_run_work_order(ctx, by);

	json_object_set_new(j, "tested_commit", artifact__str_or_null(tested));
	json_object_set_new(j, "covered_by", artifact__str_or_null(by));
	json_object_set_new(j, "covered_by_work_order", artifact__str_or_null(wo));
	free(wo);
}

/* merge.lanes: the names of a car's lanes; null for a wide car or no lanes. */
static json_t *lanes_of(const struct sl_config *cfg, int64_t lanes)
{
	json_t *a;
	size_t i;

	if (!lanes || !cfg->merge.nlanes)
		return json_null();
	a = json_array();
	for (i = 0; i < cfg->merge.nlanes; i++)
		if (lanes & ((int64_t)1 << i))
			json_array_append_new(a, json_string(cfg->merge.lanes[i].name));
	return a;
}

static json_t *car_json(struct sl_ctx *ctx, const char *run_id, const struct artifact_car *c,
		       const char *dir)
{
	char *ahead_wo = artifact_run_work_order(ctx, c->ahead);
	json_t *gates = car_gates(run_id, c, dir);
	json_t *j = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
			      "s:o, s:o, s:o}",
			      "source", "store", "status", train_status_name(c->status), "position",
			      c->position ? json_integer((json_int_t)c->position) : json_null(),
			      "cars", c->cars ? json_integer((json_int_t)c->cars) : json_null(), "base",
			      artifact__str_or_null(c->base), "head", artifact__str_or_null(c->head), "commit",
			      artifact__str_or_null(c->commit), "tree", artifact__str_or_null(c->tree), "ahead",
			      artifact__str_or_null(c->ahead), "ahead_work_order", artifact__str_or_null(ahead_wo),
			      "joined_at", artifact__iso_or_null(c->joined_ms), "started_at",
			      artifact__iso_or_null(c->started_ms), "tested_at", artifact__iso_or_null(c->tested_ms),
			      "green", c->status == TRAIN_GREEN ? json_true() :
				       c->status == TRAIN_RED ? json_false() : json_null(),
			      "gates_ms", json_is_array(gates) ? json_integer(gates_ms(gates)) :
				       json_null(), "gates", json_incref(gates));

	json_decref(gates);
	free(ahead_wo);
	covered(ctx, j, c->covered_by, c->covered_commit ? c->covered_commit : c->lane_commit ?
		c->lane_commit : c->status == TRAIN_GREEN || c->status == TRAIN_RED ? c->commit : NULL);
	json_object_set_new(j, "lanes", lanes_of(ctx->cfg, c->lanes));
	return j;
}

/* A string of train.json, or JSON null (what show.schema.json promises). */
static json_t *str_of(json_t *t, const char *key)
{
	return artifact__str_or_null(json_string_value(json_object_get(t, key)));
}

/* What train.json says of a landed run, in the keys of a car. */
static json_t *landed_json(struct sl_ctx *ctx, json_t *t)
{
	json_t *ms = json_object_get(t, "gates_ms"), *gates = json_object_get(t, "gates");
	char *ahead_wo = artifact_run_work_order(ctx, json_string_value(json_object_get(t, "ahead")));
	json_t *j = json_pack("{s:s, s:s, s:n, s:n, s:o, s:o, s:o, s:o, s:o, s:o, s:n, s:o, s:o, "
			      "s:b, s:o, s:O?}",
			      "source", "train.json", "status", "landed", "position", "cars",
			      "base", str_of(t, "base"), "head", str_of(t, "head"), "commit",
			      str_of(t, "commit"), "tree", str_of(t, "tree"), "ahead",
			      str_of(t, "ahead"), "ahead_work_order", artifact__str_or_null(ahead_wo),
			      "joined_at", "started_at",
			      artifact__iso_or_null(json_integer_value(json_object_get(t, "started_ms"))),
			      "tested_at",
			      artifact__iso_or_null(json_integer_value(json_object_get(t, "tested_ms"))),
			      "green", json_is_true(json_object_get(t, "green")), "gates_ms",
			      json_is_integer(ms) ? json_integer(json_integer_value(ms)) : json_null(),
			      "gates", json_is_array(gates) ? gates : NULL);

	free(ahead_wo);
	covered(ctx, j, json_string_value(json_object_get(t, "covered_by")),
		json_string_value(json_object_get(t, "tested_commit")));
	json_object_set(j, "lanes", json_is_array(json_object_get(t, "lanes")) ?
		json_object_get(t, "lanes") : json_null());
	return j;
}

json_t *artifact_train_json(struct sl_ctx *ctx, const char *run_id, const char *dir)
{
	struct artifact_car c;
	json_t *t, *j = NULL;

	if (artifact_car_get(ctx, run_id, &c)) {
		j = car_json(ctx, run_id, &c, dir);
		artifact_car_release(&c);
	} else if ((t = artifact_train_record(dir))) {
		j = landed_json(ctx, t);
		json_decref(t);
	}
	return j ? j : json_null();
}

json_t *artifact_rivals_between(struct sl_ctx *ctx, const char *tip, const char *base)
{
	struct merge_landings_opts o = { .tip = tip, .base = base, .max_commits = 1000 };
	struct merge_run_landing *v = NULL;
	struct sl_err err = SL_ERR_INIT;
	json_t *ids = json_array();
	size_t n = 0, i;

	if (tip && merge_landings_between(ctx->repo.root, &o, &v, &n, &err) != 0)
		sl_err_clear(&err);
	for (i = 0; i < n; i++)
		json_array_append_new(ids, worktree_diff_json_text(v[i].run, strlen(v[i].run)));
	merge_run_landings_free(v, n);
	return ids;
}
