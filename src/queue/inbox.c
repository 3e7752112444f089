/*
 * The inbox: find the *.md files, parse and validate each one; then bring
 * the store up to date with what queue_evaluate() made of them.
 */
#include "queue/queue.h"
#include "queue/queue_int.h"
#include "core/fs.h"
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define INBOX_MAX_DEPTH 32

struct paths {
	char **v;
	size_t n, cap;
};

static int paths_add(struct paths *p, char *s)
{
	char **nv;

	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 256;
		if (!(nv = realloc(p->v, p->cap * sizeof(*nv))))
			return -1;
		p->v = nv;
	}
	p->v[p->n++] = s;
	return 0;
}

static int ends_with_md(const char *name)
{
	size_t n = strlen(name);

	return n > 3 && !strcmp(name + n - 3, ".md");
}

/* Collect relative paths of *.md files under root/rel; symlinks as "!path". */
static int walk(struct paths *out, const char *root, const char *rel, int depth, struct sl_err *err)
{
	char *dir = sl_path_join(root, rel), *child = NULL, *full = NULL;
	struct dirent *de;
	struct stat st;
	DIR *d = NULL;
	int error = 0;

	if (!dir)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if (depth > INBOX_MAX_DEPTH)
		goto out;
	if (!(d = opendir(dir))) {
		error = sl_err_sys(err, errno, "cannot read the inbox directory '%s'", rel);
		goto out;
	}
	while (!error && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		free(child);
		free(full);
		child = sl_path_join(rel, de->d_name);
		full = child ? sl_path_join(root, child) : NULL;
		if (!full) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			break;
		}
		if (lstat(full, &st) < 0)
			continue; /* vanished meanwhile */
		if (S_ISDIR(st.st_mode)) {
			error = walk(out, root, child, depth + 1, err);
		} else if (ends_with_md(de->d_name) &&
		           (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) {
			char *s =
			        queue__strdup_printf("%s%s", S_ISLNK(st.st_mode) ? "!" : "", child);
			if (!s || paths_add(out, s) < 0) {
				free(s);
				error = sl_err_set(err, SL_ERROR, "out of memory");
			}
		}
	}
out:
	if (d)
		closedir(d);
	free(child);
	free(full);
	free(dir);
	return error;
}

static int cmp_path(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;

	return strcmp(x + (*x == '!'), y + (*y == '!'));
}

/*
 * The id a file that did not parse seems to give: the value of its first
 * line "id: X" (quotes taken off), else its name without ".md". For the
 * message of a work order that depends on it. NULL when out of memory.
 */
static char *guess_id(struct queue_entry *e, const char *root, const char *path)
{
	struct sl_err err = SL_ERR_INIT;
	struct sl_buf b = SL_BUF_INIT;
	char *full = sl_path_join(root, path), *id = NULL;
	const char *p, *base = strrchr(path, '/');

	if (full && sl_read_file(&b, full, QUEUE_WO_MAX_BYTES, &err) == 0)
		sl_sha256_hex(e->hash, b.ptr ? b.ptr : "", b.len);
	if (e->hash[0])
		for (p = sl_buf_cstr(&b); p && *p && !id; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
			size_t k = 3, len;
			if (strncmp(p, "id:", 3))
				continue;
			k += strspn(p + k, " \t\"'");
			len = strcspn(p + k, " \t\"'#\r\n");
			if (len)
				id = strndup(p + k, len);
		}
	base = base ? base + 1 : path;
	if (!id)
		id = strndup(base, strlen(base) - 3); /* the walk found only *.md */
	sl_buf_release(&b);
	free(full);
	return id;
}

static int load_entry(struct queue_entry *e, const char *root, const char *found)
{
	struct sl_err err = SL_ERR_INIT;
	int link = found[0] == '!';

	if (!(e->path = strdup(found + link)))
		return -1;
	if (link) {
		e->error = queue__strdup_printf("%s: is a symbolic link; the inbox holds regular "
		                                "files only, copy the work order in",
		                                e->path);
		return e->error ? 0 : -1;
	}
	if (queue_parse_file(&e->wo, root, e->path, &err) == 0)
		queue_validate(e->wo, &err);
	if (err.code == SL_ERROR && !strcmp(err.msg, "out of memory"))
		return -1;
	if (err.msg[0] && !(e->error = strdup(err.msg)))
		return -1;
	if (e->wo)
		memcpy(e->hash, e->wo->content_hash, sizeof(e->hash));
	else if (!(e->id_guess = guess_id(e, root, e->path)))
		return -1;
	return 0;
}

int queue_scan(struct queue_scan *out, const char *root, const char *inbox, struct sl_err *err)
{
	struct paths found = {NULL, 0, 0};
	char *dir = NULL;
	size_t i;
	int error = 0;

	memset(out, 0, sizeof(*out));
	if (!(out->inbox = strdup(inbox)) || !(dir = sl_path_join(root, inbox))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if (!sl_path_exists(dir))
		goto out;
	if (!sl_is_dir(dir)) {
		error = sl_err_set(err, SL_EINVALID,
		                   "the inbox '%s' is not a directory; fix queue.inbox in "
		                   ".system/config.yaml",
		                   inbox);
		goto out;
	}
	if ((error = walk(&found, root, inbox, 0, err)) != 0)
		goto out;
	if (found.n)
		qsort(found.v, found.n, sizeof(*found.v), cmp_path);
	if (found.n && !(out->v = calloc(found.n, sizeof(*out->v)))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	for (i = 0; i < found.n; i++, out->n++)
		if (load_entry(&out->v[i], root, found.v[i]) < 0) {
			out->n++;
			error = sl_err_set(err, SL_ERROR, "out of memory");
			goto out;
		}
out:
	for (i = 0; i < found.n; i++)
		free(found.v[i]);
	free(found.v);
	free(dir);
	if (error)
		queue_scan_release(out);
	return error;
}

void queue_scan_release(struct queue_scan *scan)
{
	size_t i;

	for (i = 0; scan->v && i < scan->n; i++) {
		free(scan->v[i].path);
		queue_wo_free(scan->v[i].wo);
		free(scan->v[i].error);
		free(scan->v[i].state);
		free(scan->v[i].reason);
		free(scan->v[i].id_guess);
	}
	free(scan->v);
	free(scan->inbox);
	memset(scan, 0, sizeof(*scan));
}

int queue_problems(const struct queue_scan *scan, struct sl_buf *out)
{
	size_t i;
	int n = 0;

	for (i = 0; i < scan->n; i++)
		if (scan->v[i].error) {
			/* one line each: a line break inside comes from a file name */
			for (const char *p = scan->v[i].error; *p; p++)
				if (*p == '\n' || *p == '\r')
					sl_buf_puts(out, *p == '\n' ? "\\n" : "\\r");
				else
					sl_buf_add(out, p, 1);
			sl_buf_puts(out, "\n");
			n++;
		}
	return n;
}

/* ---- ingestion -------------------------------------------------------------- */

static const struct store_wo *find_row(const struct store_wo *rows, size_t n, const char *id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) { /* rows are sorted by id (store_wo_list) */
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(rows[mid].id, id);
		if (!c)
			return &rows[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int put_entry(struct store *st, const struct queue_entry *e, const struct store_wo *old,
                     struct queue_ingest_stats *stats, struct sl_err *err)
{
	const struct queue_wo *wo = e->wo;
	struct store_wo row = STORE_WO_INIT;
	char *json = NULL, *why = NULL;
	const char *what;
	int error = 0;

	row.id = wo->id;
	row.path = e->path;
	row.content_hash = (char *)wo->content_hash;
	row.body = wo->body;
	row.title = wo->title ? wo->title : (char *)"";
	row.created_at = wo->created_at ? wo->created_at : (char *)"";
	row.status = wo->status ? wo->status : (char *)wo_status_name(WO_STATUS_READY);
	row.state = e->state;
	row.reason = e->reason;
	row.priority = wo->priority;
	row.present = 1;
	if (old && !strcmp(old->content_hash, wo->content_hash) && old->present &&
	    !strcmp(old->state, e->state) && !strcmp(old->reason, e->reason) &&
	    !strcmp(old->path, e->path))
		return 0; /* nothing changed */
	if (!(json = json_dumps(wo->fields, JSON_COMPACT))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	row.fields_json = json;
	if ((error = store_wo_put_tx(st, &row, wo->raw, wo->raw_len, err)) != 0)
		goto out;
	what = !old                                          ? "new work order %s: %s"
	       : strcmp(old->content_hash, wo->content_hash) ? "new revision of %s: %s"
	       : !old->present                               ? "%s is back in the inbox: %s"
	                                                     : NULL;
	if (!old)
		stats->added++;
	else if (strcmp(old->content_hash, wo->content_hash))
		stats->revised++;
	else
		stats->changed++;
	if (!what && !strcmp(old->state, e->state))
		goto out; /* only the reason changed: no event */
	if (what)
		why = queue__strdup_printf(what, e->path, e->reason);
	else
		why = strdup(e->reason);
	if (!why) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	error = store_event_add(st, NULL, wo->id, old ? old->state : NULL, e->state, why, err);
out:
	free(json);
	free(why);
	return error;
}

static int mark_gone(struct store *st, const struct store_wo *rows, size_t nrows,
                     const struct queue_scan *scan, struct queue_ingest_stats *stats,
                     struct sl_err *err)
{
	json_t *seen = json_object();
	char *why = NULL;
	size_t i;
	int error = 0;

	if (!seen)
		return sl_err_set(err, SL_ERROR, "out of memory");
	for (i = 0; i < scan->n; i++)
		if (scan->v[i].owner && json_object_set_new(seen, scan->v[i].wo->id, json_true())) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			goto out;
		}
	for (i = 0; !error && i < nrows; i++) {
		if (!rows[i].present || json_object_get(seen, rows[i].id))
			continue;
		free(why);
		if (!(why = queue__strdup_printf("file '%s' is gone from the inbox; state %s kept",
		                                 rows[i].path, rows[i].state))) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			break;
		}
		error = store_wo_mark_gone_tx(st, rows[i].id, why, err);
		stats->gone++;
	}
out:
	free(why);
	json_decref(seen);
	return error;
}

static int save_errors(struct store *st, const struct queue_scan *scan, struct sl_err *err)
{
	struct store_inbox_error *v = calloc(scan->n + 1, sizeof(*v));
	size_t i, n = 0;
	int error;

	if (!v)
		return sl_err_set(err, SL_ERROR, "out of memory");
	for (i = 0; i < scan->n; i++)
		if (!scan->v[i].owner) {
			v[n].path = scan->v[i].path;
			v[n++].message = scan->v[i].error ? scan->v[i].error : scan->v[i].reason;
		}
	error = store_inbox_errors_replace_tx(st, v, n, err);
	free(v);
	return error;
}

/* Each revision of an invalid work order is told to the notifiers once. */
static int tell_invalid(struct store *st, const struct queue_scan *scan, struct sl_err *err)
{
	size_t i;
	int error = 0;

	for (i = 0; !error && i < scan->n; i++) {
		const struct queue_entry *e = &scan->v[i];
		const char *id = e->wo && e->wo->id ? e->wo->id : e->id_guess;
		if (!e->hash[0] || !e->state || !wo_state_is(e->state, WO_INVALID))
			continue;
		error = store_notify_invalid_tx(st, e->path, e->hash, id ? id : e->path,
		                                e->wo ? e->wo->title : NULL,
		                                e->error ? e->error : e->reason, err);
	}
	return error;
}

static int write_all(struct store *st, const struct queue_scan *scan,
                     struct queue_ingest_stats *stats, struct sl_err *err)
{
	struct store_wo *rows = NULL;
	size_t nrows = 0, i;
	int error;

	if ((error = store_wo_list(st, &rows, &nrows, err)) != 0)
		return error;
	for (i = 0; !error && i < scan->n; i++) {
		const struct queue_entry *e = &scan->v[i];
		const struct store_wo *old;
		if (!e->owner)
			continue;
		old = find_row(rows, nrows, e->wo->id);
		if (old && wo_state_is(old->state, WO_RUNNING) && wo_state_is(e->state, WO_RUNNING) &&
		    strcmp(old->content_hash, e->wo->content_hash))
			continue; /* frozen while its run goes on; see queue_evaluate() */
		if (wo_state_is(e->state, WO_INVALID))
			stats->invalid++;
		error = put_entry(st, e, old, stats, err);
	}
	if (!error)
		error = mark_gone(st, rows, nrows, scan, stats, err);
	if (!error)
		error = save_errors(st, scan, err);
	if (!error)
		error = tell_invalid(st, scan, err);
	store_wo_list_free(rows, nrows);
	return error;
}

int queue_ingest(struct store *st, const char *root, const char *inbox,
                 struct queue_ingest_stats *stats, struct sl_err *err)
{
	struct queue_scan scan = QUEUE_SCAN_INIT;
	struct queue_ingest_stats dummy;
	int error;

	if (!stats)
		stats = &dummy;
	memset(stats, 0, sizeof(*stats));
	if ((error = queue_scan(&scan, root, inbox, err)) != 0)
		goto out;
	stats->files = scan.n;
	if ((error = store_begin(st, err)) != 0)
		goto out;
	if ((error = queue_evaluate(&scan, st, err)) != 0 ||
	    (error = write_all(st, &scan, stats, err)) != 0 || (error = store_commit(st, err)) != 0)
		store_rollback(st);
out:
	queue_scan_release(&scan);
	return error;
}

/* ---- the invalid ones, for people -------------------------------------------- */

static int cmp_invalid(const void *a, const void *b)
{
	return strcmp(((const struct queue_invalid *)a)->path,
	              ((const struct queue_invalid *)b)->path);
}

static int invalid_add(struct queue_invalid *v, size_t *n, const char *path, const char *msg)
{
	if (!(v[*n].path = strdup(path)) || !(v[*n].message = strdup(msg))) {
		free(v[*n].path);
		return -1;
	}
	(*n)++;
	return 0;
}

int queue_invalid_list(struct store *st, struct queue_invalid **out, size_t *n,
                       struct sl_err *err)
{
	struct store_inbox_error *errs = NULL;
	struct store_wo *rows = NULL;
	struct queue_invalid *v = NULL;
	size_t nerrs = 0, nrows = 0, i, len = 0;
	int error;

	*out = NULL;
	*n = 0;
	if ((error = store_inbox_errors_list(st, &errs, &nerrs, err)) != 0 ||
	    (error = store_wo_list(st, &rows, &nrows, err)) != 0)
		goto out;
	if (!(v = calloc(nerrs + nrows + 1, sizeof(*v)))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	for (i = 0; !error && i < nerrs; i++)
		if (invalid_add(v, &len, errs[i].path, errs[i].message) < 0)
			error = sl_err_set(err, SL_ERROR, "out of memory");
	for (i = 0; !error && i < nrows; i++)
		if (rows[i].present && wo_state_is(rows[i].state, WO_INVALID) &&
		    invalid_add(v, &len, rows[i].path, rows[i].reason) < 0)
			error = sl_err_set(err, SL_ERROR, "out of memory");
	if (!error && len)
		qsort(v, len, sizeof(*v), cmp_invalid);
out:
	store_inbox_errors_free(errs, nerrs);
	store_wo_list_free(rows, nrows);
	if (error) {
		queue_invalid_free(v, len);
		return error;
	}
	*out = v;
	*n = len;
	return 0;
}

void queue_invalid_free(struct queue_invalid *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].path);
		free(v[i].message);
	}
	free(v);
}
