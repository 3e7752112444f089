/* Gates (builder.h): run every configured gate, record gates.json and logs. */
#include "builder/builder_int.h"
#include "worktree/worktree.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/fault.h"
#include "core/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GATES_LOG_DEFAULT_MAX ((size_t)10 << 20)

/*
 * A gate's name names its log file: [A-Za-z0-9_-]+, or a watch gate on a
 * revert's car, "watch.<name>" (runner/revert.c; no config gate has a '.').
 */
int build__gate_name_ok(const char *name)
{
	if (!name || !*name)
		return 0;
	if (!strncmp(name, "watch.", 6) && name[6])
		name += 6;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			return 0;
	return 1;
}

struct gate_env {
	char *add[8];
	sl_strv drop;
};

static int gate_env_init(struct gate_env *ge, const struct sl_config *cfg, const char *run_dir,
			 const char *name, struct sl_err *err)
{
	size_t n = 0;

	memset(ge, 0, sizeof(*ge));
	if (asprintf(&ge->add[n++], "SLUICE_RUN_DIR=%s", run_dir) < 0 ||
	    asprintf(&ge->add[n++], "SLUICE_GATE=%s", name) < 0) {
		ge->add[n - 1] = NULL;
		return sl_err_set(err, SL_ERROR, "out of memory");
	}
	for (const char *const *h = exec_hooks_env(cfg); *h; h++)
		if (!(ge->add[n++] = strdup(*h)))
			return sl_err_set(err, SL_ERROR, "out of memory");
	return exec_env_drop(&ge->drop, cfg, (const char *const *)ge->add, err);
}

static void gate_env_release(struct gate_env *ge)
{
	for (size_t i = 0; i < sizeof(ge->add) / sizeof(*ge->add); i++)
		free(ge->add[i]);
	sl_strv_free(ge->drop);
}

static void log_start_error(const char *log, const char *msg)
{
	struct sl_err e = SL_ERR_INIT;
	int fd = -1;

	if (sl_open_file(log, O_WRONLY | O_APPEND | O_CREAT, 0644, &fd, &e) < 0)
		return;
	if (write(fd, msg, strlen(msg)) < 0 || write(fd, "\n", 1) < 0) {
		/* best effort: the message is also in gates.json */
	}
	close(fd);
}

/* Run one gate; the result's fields are filled in (strings owned by r). */
static int run_one(const struct sl_config *cfg, const struct sl_gate *g, const char *wt,
		   const char *run_dir, const char *sub, struct build_gate_result *r,
		   struct sl_err *err)
{
	struct sl_proc_opts po = SL_PROC_OPTS_INIT;
	struct sl_proc_result res;
	struct sl_err perr = SL_ERR_INIT;
	struct gate_env ge;
	char *path = NULL, *owner = NULL, *env_dir = NULL;
	int error;

	if (!(env_dir = sub ? sl_path_fmt("%s/%s", run_dir, sub) : strdup(run_dir))) {
		return sl_err_set(err, SL_ERROR, "out of memory");
	}
	if (!(r->name = strdup(g->name)) || !(r->argv = sl_strv_copy((const char *const *)g->argv)) ||
	    asprintf(&r->log, "%s%sgates/%s.log", sub ? sub : "", sub ? "/" : "", g->name) < 0 ||
	    !(path = sl_path_join(run_dir, r->log)) ||
	    !(owner = sl_path_join(run_dir, BUILD_CHILD_OWNER_FILE))) {
		free(path);
		free(env_dir);
		return sl_err_set(err, SL_ERROR, "out of memory");
	}
	if ((error = gate_env_init(&ge, cfg, env_dir, g->name, err)) < 0)
		goto out;
	/* a fresh log each attempt; unlink, never truncate through a planted symlink */
	if ((error = sl_unlink(path, err)) < 0)
		goto out;
	po.argv = (const char *const *)g->argv;
	po.env_add = (const char *const *)ge.add;
	po.env_drop = (const char *const *)ge.drop;
	po.cwd = wt;
	po.log_path = path;
	po.log_max = cfg->builder.log_max ? cfg->builder.log_max : GATES_LOG_DEFAULT_MAX;
	po.timeout_ms = g->timeout_ms;
	po.owner_file = owner;
	if (sl_proc_run(&po, &res, &perr) < 0) {
		r->exit_code = 127;
		r->duration_ms = res.duration_ms;
		r->error = strdup(perr.msg);
		log_start_error(path, perr.msg);
	} else {
		r->exit_code = res.exit_code;
		r->timed_out = res.timed_out;
		r->duration_ms = res.duration_ms;
		r->passed = res.exit_code == 0 && !res.timed_out;
	}
	r->output = sl_tail_file(path, BUILD_GATE_TAIL);
out:
	gate_env_release(&ge);
	free(path);
	free(owner);
	free(env_dir);
	return error;
}

static json_t *result_json(const struct build_gate_result *r)
{
	json_t *argv = json_array(), *o;

	for (char **a = r->argv; a && *a; a++)
		json_array_append_new(argv, json_string(*a));
	o = json_pack("{s:s, s:o, s:i, s:b, s:I, s:b, s:s}", "name", r->name, "argv", argv,
		      "exit_code", r->exit_code, "passed", r->passed, "duration_ms",
		      (json_int_t)r->duration_ms, "timed_out", r->timed_out, "log", r->log);
	if (o && r->error)
		json_object_set_new(o, "error", json_string(r->error));
	if (o && r->reused)
		json_object_set_new(o, "reused", json_string(r->reused));
	return o;
}

/* Copy the file `from` to the new file `to` (an old one is replaced, never followed). */
static int copy_log(const char *from, const char *to, struct sl_err *err)
{
	char buf[1 << 16];
	int in = -1, out = -1, error;
	ssize_t n = 0;

	if ((error = sl_open_file(from, O_RDONLY | O_NONBLOCK, 0, &in, err)) < 0 ||
	    (error = sl_unlink(to, err)) < 0 ||
	    (error = sl_open_file(to, O_WRONLY | O_CREAT | O_EXCL, 0644, &out, err)) < 0)
		goto out;
	while ((n = read(in, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
		for (ssize_t w, off = 0; n > 0 && off < n; off += w)
			if ((w = write(out, buf + off, (size_t)(n - off))) < 0) {
				error = sl_err_sys(err, errno, "cannot write '%s'", to);
				goto out;
			}
	}
	if (n < 0)
		error = sl_err_sys(err, errno, "cannot read '%s'", from);
out:
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) < 0 && !error)
		error = sl_err_sys(err, errno, "cannot write '%s'", to);
	return error;
}

/* One result's log into attempts/<attempt>/gates/; r->log names the copy. */
static int keep_one(const char *run_dir, int attempt, struct build_gate_result *r,
		    struct sl_err *err)
{
	char *rel = sl_path_fmt("attempts/%d/gates/%s.log", attempt, r->name);
	char *from = r->log ? sl_path_join(run_dir, r->log) : NULL;
	char *to = rel ? sl_path_join(run_dir, rel) : NULL;
	char *dir = to ? strndup(to, (size_t)(strrchr(to, '/') - to)) : NULL;
	int error = 0;

	if (!rel || !from || !to || !dir)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if (!strcmp(r->log, rel) || !sl_path_exists(from))
		goto out; /* kept already, or no log to keep */
	else if ((error = sl_mkdir_p(dir, err)) == 0 && (error = copy_log(from, to, err)) == 0) {
		free(r->log);
		r->log = rel;
		rel = NULL;
	}
out:
	free(rel);
	free(from);
	free(to);
	free(dir);
	return error;
}

int build_gates_keep_attempt(const char *run_dir, int attempt, struct build_gate_results *r,
			     struct sl_err *err)
{
	int error = 0;

	for (size_t i = 0; i < r->n; i++) {
		struct sl_err e = SL_ERR_INIT;
		int rc = keep_one(run_dir, attempt, &r->v[i], error ? &e : err);

		if (rc && !error)
			error = rc;
	}
	return error;
}

json_t *build_gates_json(const struct build_gate_results *r)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < r->n; i++)
		json_array_append_new(arr, result_json(&r->v[i]));
	return arr;
}

int build__gates_write(const char *run_dir, const char *sub, const struct build_gate_results *r,
		      struct sl_err *err)
{
	json_t *arr = build_gates_json(r);
	char *path = sub ? sl_path_fmt("%s/%s/gates.json", run_dir, sub)
			 : sl_path_join(run_dir, "gates.json");
	int error;

	if (!arr || !path)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else
		error = sl_json_write(path, arr, err);
	json_decref(arr);
	free(path);
	return error;
}

/*
 * A gate with `worktree: read-only`: the worktree's state (worktree/guard.c)
 * before it runs into `state` (41 bytes; "" for any other gate), through a
 * scratch index in the gates folder. worktree.share and .copy do not count.
 */
static int ro_state(const struct sl_config *cfg, const struct sl_gate *g, const char *wt,
		    const char *dir, char state[41], struct sl_err *err)
{
	size_t ns = sl_strv_len(cfg->worktree.share), nc = sl_strv_len(cfg->worktree.copy);
	const char **excluded = NULL;
	char *index = NULL;
	int error;

	state[0] = '\0';
	if (!sl_gate_read_only(cfg, g->name))
		return 0;
	if (!(excluded = calloc(ns + nc + 1, sizeof(*excluded))) ||
	    !(index = sl_path_fmt("%s/.%s.index", dir, g->name))) {
		free(excluded);
		return sl_err_set(err, SL_ERROR, "out of memory");
	}
	for (size_t i = 0; i < ns + nc; i++)
		excluded[i] = i < ns ? cfg->worktree.share[i] : cfg->worktree.copy[i - ns];
	error = worktree_state_tree(wt, excluded, index, state, err);
	free(excluded);
	free(index);
	return error;
}

/* After a read-only gate: a write fails it, "no_write: the gate changed <paths>". */
static int ro_check(const struct sl_config *cfg, const struct sl_gate *g, const char *wt,
		    const char *dir, const char *before, struct build_gate_result *r,
		    struct sl_err *err)
{
	char after[41], what[2048];
	int error = 0;

	if (!before[0] || (error = ro_state(cfg, g, wt, dir, after, err)) != 0)
		return before[0] ? error : 0;
	if (!strcmp(before, after))
		return 0;
	if ((error = worktree_tree_changes(wt, before, after, what, sizeof(what), err)) != 0)
		return error;
	r->passed = 0;
	free(r->error);
	if (asprintf(&r->error, "no_write: the gate changed %s (it has worktree: read-only)",
		     what) < 0)
		r->error = NULL;
	return 0;
}

int build_gates_run(const struct sl_config *cfg, const char *wt, const char *run_dir,
		     struct build_gate_results *out, struct sl_err *err)
{
	return build_gates_run_sub(cfg, wt, run_dir, NULL, out, err);
}

int build_gates_run_sub(const struct sl_config *cfg, const char *wt, const char *run_dir,
			const char *sub, struct build_gate_results *out, struct sl_err *err)
{
	char *dir = sub ? sl_path_fmt("%s/%s/gates", run_dir, sub) : sl_path_join(run_dir, "gates");
	char state[41];
	int error = 0;

	out->v = NULL;
	out->n = 0;
	out->all_passed = 1;
	if (!dir || (cfg->ngates && !(out->v = calloc(cfg->ngates, sizeof(*out->v))))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = sl_mkdir_p(dir, err)) < 0)
		goto out;
	for (size_t i = 0; i < cfg->ngates; i++) {
		const struct sl_gate *g = &cfg->gates[i];

		if (!build__gate_name_ok(g->name) || !g->argv || !g->argv[0]) {
			error = sl_err_set(err, SL_EINVALID, "gate %zu has a bad name or no "
					   "command; fix gates in .system/config.yaml", i + 1);
			goto out;
		}
		out->n++;
		sl_fault("gates.before_gate");
		if ((error = ro_state(cfg, g, wt, dir, state, err)) < 0 ||
		    (error = run_one(cfg, &cfg->gates[i], wt, run_dir, sub, &out->v[i], err)) < 0 ||
		    (error = ro_check(cfg, g, wt, dir, state, &out->v[i], err)) < 0)
			goto out;
		sl_fault("gates.after_gate");
		if (!out->v[i].passed)
			out->all_passed = 0;
	}
	error = build__gates_write(run_dir, sub, out, err);
out:
	free(dir);
	return error;
}

static int load_one(const char *run_dir, json_t *o, struct build_gate_result *r)
{
	json_t *argv = json_object_get(o, "argv"), *v;
	const char *name = json_string_value(json_object_get(o, "name"));
	const char *log = json_string_value(json_object_get(o, "log"));
	const char *error = json_string_value(json_object_get(o, "error"));
	char *path;
	size_t i;

	if (!name || !log || !json_is_array(argv) || !sl_path_is_safe_relative(log))
		return SL_EINVALID;
	if (!(r->name = strdup(name)) || !(r->log = strdup(log)) ||
	    !(r->argv = calloc(json_array_size(argv) + 1, sizeof(char *))))
		return SL_ERROR;
	json_array_foreach(argv, i, v)
		if (!(r->argv[i] = strdup(json_string_value(v) ? json_string_value(v) : "")))
			return SL_ERROR;
	if (error && !(r->error = strdup(error)))
		return SL_ERROR;
	r->exit_code = (int)json_integer_value(json_object_get(o, "exit_code"));
	r->passed = json_is_true(json_object_get(o, "passed"));
	r->timed_out = json_is_true(json_object_get(o, "timed_out"));
	r->duration_ms = json_integer_value(json_object_get(o, "duration_ms"));
	if (!(path = sl_path_join(run_dir, log)))
		return SL_ERROR;
	r->output = sl_tail_file(path, BUILD_GATE_TAIL);
	free(path);
	return 0;
}

int build_gates_load(const char *run_dir, struct build_gate_results *out, struct sl_err *err)
{
	char *path = sl_path_join(run_dir, "gates.json");
	json_t *arr = NULL, *o;
	size_t i;
	int error = 0;

	out->v = NULL;
	out->n = 0;
	out->all_passed = 1;
	if (!path)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if (!sl_path_exists(path)) {
		error = sl_err_set(err, SL_ENOTFOUND, "no gate results in '%s'; the gates have not "
				   "run", run_dir);
		goto out;
	}
	/* a builder or a gate can write gates.json: bounded, never through a link */
	if ((error = sl_json_read(path, SL_JSON_MAX, &arr, err)) != 0)
		goto out;
	if (!json_is_array(arr)) {
		error = sl_err_set(err, SL_EINVALID, "cannot read '%s': not an array", path);
		goto out;
	}
	if (!(out->v = calloc(json_array_size(arr) + 1, sizeof(*out->v)))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	json_array_foreach(arr, i, o) {
		out->n++;
		if ((error = load_one(run_dir, o, &out->v[i])) < 0) {
			sl_err_set(err, error, "bad entry %zu in '%s'; rerun the gates", i + 1,
				   path);
			goto out;
		}
		if (!out->v[i].passed)
			out->all_passed = 0;
	}
out:
	json_decref(arr);
	free(path);
	return error;
}

const char **build_gates_failed(const struct build_gate_results *r)
{
	const char **names = calloc(r->n + 1, sizeof(*names));
	size_t k = 0;

	for (size_t i = 0; names && i < r->n; i++)
		if (!r->v[i].passed)
			names[k++] = r->v[i].name;
	return names;
}

void build_gate_results_release(struct build_gate_results *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].name);
		sl_strv_free(r->v[i].argv);
		free(r->v[i].log);
		free(r->v[i].output);
		free(r->v[i].error);
		free(r->v[i].reused);
	}
	free(r->v);
	r->v = NULL;
	r->n = 0;
	r->all_passed = 1;
}
