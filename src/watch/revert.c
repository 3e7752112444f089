/*
 * The revert and the fix-up (docs/watch.md, "Reverts through the train"):
 * when a watch gate's bisection names a run's landing, two work orders go
 * into the inbox. <WO>-revert says `revert: {commit, run, gate}`: sluice
 * builds it as the exact inverse of that landing, it is reviewed per
 * watch.revert_review and lands through the train with the merge gates and
 * the watch gate (runner/revert.c). <WO>-fix depends on it and carries the
 * original work order, its diff, the failing output and the bisection, so
 * the agent tries again knowing what went wrong.
 *
 * Order, so that a kill at any point loses nothing and reverts nothing
 * twice: both files are staged in .system/watch/reverts/, then the row of
 * watch_reverts is written (one per landing: a second bisection naming the
 * same landing finds it), then the files are copied into the inbox, never
 * over a file that is there. watch_revert_resume() finishes a watch killed
 * between the row and the copies.
 */
#include "watch/watch.h"
#include "store/store.h"
#include "core/ctx.h"
#include "core/fault.h"
#include "core/fs.h"
#include "core/git.h"
#include "core/log.h"
#include "core/time.h"
#include "core/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WO_ID_MAX 64                     /* docs/work-orders.md: id */
#define TITLE_MAX 200
#define DIFF_MAX ((size_t)256 << 10)     /* of the culprit's diff in the fix-up */
#define ORIGINAL_MAX ((size_t)256 << 10) /* of its work order */
#define OUTPUT_TAIL ((size_t)16 << 10)   /* of the failing output */
#define WO_FILE_MAX ((size_t)1 << 20)    /* docs/work-orders.md: at most 1 MiB */

/* `wo` with `suffix`, cut so that the id stays a valid one (at most 64 bytes). */
static void id_with(char *out, size_t n, const char *wo, const char *suffix)
{
	size_t keep = strlen(wo), room = WO_ID_MAX - strlen(suffix);

	if (keep > room)
		keep = room;
	while (keep > 1 && (wo[keep - 1] == '.' || wo[keep - 1] == '-'))
		keep--; /* no "..", no '.' before the suffix's '-' that reads odd */
	snprintf(out, n, "%.*s%s", (int)keep, wo, suffix);
}

/* data as UTF-8 text a work order may hold: NUL and bytes that are no UTF-8 become '?'. */
static void add_text(struct sl_buf *b, const char *data, size_t len)
{
	size_t i = 0, k;

	while (i < len) {
		k = sl_utf8_seq((const unsigned char *)data + i, len - i, NULL);
		if (!k || !data[i]) {
			sl_buf_add(b, "?", 1);
			i++;
			continue;
		}
		sl_buf_add(b, data + i, k);
		i += k;
	}
}

/*
 * `key: value` with value as JSON, which is YAML too (a quoted string, a
 * flow list or map); but YAML allows no DEL and no C1 control in a quoted
 * string, which jansson writes as they are: those become \u escapes.
 */
static void fm_json(struct sl_buf *b, const char *key, json_t *v)
{
	char *text = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
	const unsigned char *p;

	if (!text)
		return;
	sl_buf_addf(b, "%s: ", key);
	for (p = (const unsigned char *)text; *p; p++) {
		if (*p == 0x7f)
			sl_buf_puts(b, "\\u007f");
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			sl_buf_addf(b, "\\u00%02x", *++p);
		else
			sl_buf_add(b, p, 1);
	}
	sl_buf_puts(b, "\n");
	free(text);
}

static void fm_str(struct sl_buf *b, const char *key, const char *v)
{
	json_t *j = json_string(v);

	fm_json(b, key, j);
	json_decref(j);
}

/* `prefix` and `title`, cut to at most TITLE_MAX bytes of whole characters. */
static void title_of(char out[TITLE_MAX + 1], const char *prefix, const char *title)
{
	char whole[TITLE_MAX * 4];
	size_t len = 0, k;

	snprintf(whole, sizeof(whole), "%s%s", prefix, title ? title : "");
	while (whole[len] && (k = sl_utf8_seq((const unsigned char *)whole + len,
					      strlen(whole + len), NULL)) != 0 &&
	       len + k <= TITLE_MAX)
		len += k;
	memcpy(out, whole, len);
	out[len] = '\0';
}

/* `got` bytes of a text of `total` (its first or last ones), fenced, into b. */
static void add_block(struct sl_buf *b, const char *data, size_t got, long long total, int tail,
		      const char *lang)
{
	if ((long long)got < total)
		sl_buf_addf(b, "(%s %zu bytes of %lld)\n\n", tail ? "the last" : "the first", got,
			    total);
	sl_buf_addf(b, "````%s\n", lang);
	add_text(b, data, got);
	sl_buf_addf(b, "%s````\n\n", got > 0 && data[got - 1] != '\n' ? "\n" : "");
}

/* The last max bytes of a file sluice wrote (a gate's output), bounded, never through a link. */
static void add_file_tail(struct sl_buf *b, const char *path, size_t max)
{
	struct stat st;
	char *data = NULL;
	ssize_t got = -1;
	size_t want;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		want = (size_t)st.st_size > max ? max : (size_t)st.st_size;
		if ((data = malloc(want + 1)) != NULL)
			got = pread(fd, data, want, st.st_size - (off_t)want);
	}
	if (got >= 0)
		add_block(b, data, (size_t)got, (long long)st.st_size, 1, "text");
	else
		sl_buf_addf(b, "(not available: %s)\n\n", fd < 0 ? strerror(errno) : "not read");
	free(data);
	if (fd >= 0)
		close(fd);
}

/*
 * What the culprit landed, from git (`git diff <landing>^1 <landing>`), not
 * from its run folder, which its builder could write: its first DIFF_MAX bytes.
 */
static void add_landed_diff(struct sl_buf *b, struct sl_ctx *ctx, const char *landing)
{
	char parent[48];
	const char *args[] = { "diff", "--no-color", "--no-ext-diff", parent, landing, NULL };
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	struct sl_git_result res;
	struct sl_buf out = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;

	snprintf(parent, sizeof(parent), "%s^1", landing);
	sl_buf_init(&out, DIFF_MAX);
	o.cwd = ctx->repo.root;
	o.out = &out;
	o.out_cut_ok = 1;
	if (sl_git_run(&o, args, &res, &err) == 0)
		add_block(b, out.ptr ? out.ptr : "", out.len, (long long)res.out_bytes, 0, "diff");
	else
		sl_buf_addf(b, "(not available: %s)\n\n", err.msg);
	sl_buf_release(&out);
}

/* The culprit's work order as the store keeps its bytes (the queue read them from the inbox). */
static void add_original(struct sl_buf *b, struct sl_ctx *ctx, const char *wo_id)
{
	struct sl_buf text = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;

	sl_buf_init(&text, WO_FILE_MAX + 1);
	if (store_wo_content(ctx->st, wo_id, &text, &err) == 0)
		add_block(b, text.ptr ? text.ptr : "",
			  text.len > ORIGINAL_MAX ? ORIGINAL_MAX : text.len, (long long)text.len, 0,
			  "markdown");
	else
		sl_buf_addf(b, "(not available: %s)\n\n", err.msg);
	sl_buf_release(&text);
}

/* What every fix-up and revert body says first. */
static void add_why(struct sl_buf *b, struct sl_ctx *ctx, const struct sl_gate *g,
		    const struct watch_report *r, const char *wo)
{
	char *log = sl_path_fmt("%s/%s", ctx->repo.sysdir, r->log);
	size_t i;

	sl_buf_addf(b, "## What went wrong\n\nThe watch gate `%s` (`", g->name);
	for (i = 0; g->argv && g->argv[i]; i++)
		sl_buf_addf(b, "%s%s", i ? " " : "", g->argv[i]);
	sl_buf_addf(b, "`) went red on %s, the tip of %s, and red again. Its bisection over the "
		    "%zu first-parent commits since its last green result (%.12s) tested %zu and "
		    "names the landing %s of work order %s (run %s) as the first red one.\n\n",
		    r->tip, ctx->target_ref, r->landings, r->last_green, r->tests, r->culprit, wo,
		    r->culprit_run);
	sl_buf_puts(b, "## The bisection\n\n");
	add_text(b, r->steps.ptr ? r->steps.ptr : "", r->steps.len);
	sl_buf_addf(b, "\n## The failing output (`.system/%s`)\n\n", r->log);
	if (log)
		add_file_tail(b, log, OUTPUT_TAIL);
	free(log);
}

static void compose_revert(struct sl_buf *b, struct sl_ctx *ctx, const struct sl_gate *g,
			   const struct watch_report *r, const struct store_wo *wo, const char *id)
{
	json_t *rv = json_pack("{s:s, s:s, s:s}", "commit", r->culprit, "run", r->culprit_run,
			       "gate", g->name);
	char title[TITLE_MAX + 1], prefix[WO_ID_MAX + 16], goal[600];

	snprintf(prefix, sizeof(prefix), "Revert %s: ", wo->id);
	title_of(title, prefix, wo->title);
	snprintf(goal, sizeof(goal), "Undo the landing %.12s of work order %s (run %s): the "
		 "watch gate '%s' went red with it. sluice builds this revert itself.",
		 r->culprit, wo->id, r->culprit_run, g->name);
	sl_buf_puts(b, "---\n");
	fm_str(b, "id", id);
	fm_str(b, "title", title);
	fm_str(b, "goal", goal);
	sl_buf_puts(b, "priority: urgent\n");
	sl_buf_puts(b, "worktree: read-write\n"); /* whatever worktree.mode says */
	fm_json(b, "revert", rv);
	sl_buf_puts(b, "---\n");
	sl_buf_addf(b, "Written by `sluice watch` (docs/watch.md). The run of this work order "
		    "makes the exact inverse of the landing %s; it is reviewed per "
		    "`watch.revert_review` and lands through the merge train, whose car runs the "
		    "merge gates and the watch gate `%s`.\n\n", r->culprit, g->name);
	add_why(b, ctx, g, r, wo->id);
	json_decref(rv);
}

/* The culprit's fields a fix-up keeps (its goal, paths, criteria...). */
static const char *const kept[] = { "goal", "context", "non_goals", "stop_conditions", "tags",
				    "worktree", "budget", NULL };

static void compose_fix(struct sl_buf *b, struct sl_ctx *ctx, const struct sl_gate *g,
			const struct watch_report *r, const struct store_wo *wo, const char *id,
			const char *revert_id)
{
	json_t *all = wo->fields_json ? json_loads(wo->fields_json, 0, NULL) : NULL;
	json_t *crit = json_array(), *old = json_object_get(all, "acceptance_criteria"), *v;
	json_t *deps = json_pack("[s]", revert_id);
	char title[TITLE_MAX + 1], prefix[WO_ID_MAX + 16], line[400];
	size_t i;

	snprintf(prefix, sizeof(prefix), "Fix %s again: ", wo->id);
	title_of(title, prefix, wo->title);
	sl_buf_puts(b, "---\n");
	fm_str(b, "id", id);
	fm_str(b, "title", title);
	for (i = 0; kept[i]; i++)
		if ((v = json_object_get(all, kept[i])) != NULL && !json_is_null(v))
			fm_json(b, kept[i], v);
	json_array_foreach(old, i, v)
		if (json_is_string(v))
			json_array_append(crit, v);
	snprintf(line, sizeof(line), "The watch gate '%s' passes (it failed with the first "
		 "landing of %s).", g->name, wo->id);
	json_array_append_new(crit, json_string(line));
	fm_json(b, "acceptance_criteria", crit);
	fm_json(b, "depends_on", deps);
	if (wo->priority > 0)
		sl_buf_addf(b, "priority: %d\n", wo->priority);
	else
		sl_buf_puts(b, "priority: urgent\n");
	fm_str(b, "fixes", wo->id);
	sl_buf_puts(b, "---\n");
	sl_buf_addf(b, "Written by `sluice watch` (docs/watch.md). Work order %s landed in run %s "
		    "as %s and broke the watch gate `%s`; %s reverts it. Do the work of %s again, "
		    "so that the gate passes too. It starts once the revert has landed.\n\n",
		    wo->id, r->culprit_run, r->culprit, g->name, revert_id, wo->id);
	add_why(b, ctx, g, r, wo->id);
	sl_buf_addf(b, "## The original work order (%s)\n\n", wo->id);
	add_original(b, ctx, wo->id);
	sl_buf_addf(b, "## Its diff, as it landed (run %s, %.12s)\n\n", r->culprit_run,
		    r->culprit);
	add_landed_diff(b, ctx, r->culprit);
	json_decref(all);
	json_decref(crit);
	json_decref(deps);
}

static char *staged_path(struct sl_ctx *ctx, const char *culprit, const char *what)
{
	return sl_path_fmt("%s/watch/reverts/%s-%s.md", ctx->repo.sysdir, culprit, what);
}

/*
 * The staged file into the inbox as <id>.md, unless the store knows the
 * work order (then the queue has it, or had it and a person removed it) or
 * a file is there: never over anything.
 */
static int install(struct sl_ctx *ctx, const char *id, const char *staged, struct sl_err *err)
{
	struct store_wo wo = STORE_WO_INIT;
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err e = SL_ERR_INIT;
	char *dir = sl_path_fmt("%s/%s", ctx->repo.root, ctx->cfg->queue.inbox);
	char *dst = dir ? sl_path_fmt("%s/%s.md", dir, id) : NULL;
	char *tmp = dir ? sl_path_fmt("%s/.%s.md.sluice-tmp", dir, id) : NULL;
	int error = 0;

	if (!dst || !tmp) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if (store_wo_get(ctx->st, id, &wo, &e) == 0 || sl_path_exists(dst))
		goto out;
	sl_buf_init(&b, (size_t)1 << 20);
	if ((error = sl_read_file(&b, staged, (size_t)1 << 20, err)) != 0 ||
	    (error = sl_mkdir_p(dir, err)) != 0 ||
	    (error = sl_write_file(tmp, b.ptr ? b.ptr : "", b.len, err)) != 0)
		goto out;
	if (link(tmp, dst) != 0 && errno != EEXIST)
		error = sl_err_set(err, SL_ERROR, "cannot write %s: %s", dst, strerror(errno));
	unlink(tmp);
out:
	sl_err_clear(&e);
	store_wo_release(&wo);
	sl_buf_release(&b);
	free(dir);
	free(dst);
	free(tmp);
	return error;
}

static int install_both(struct sl_ctx *ctx, const struct store_watch_revert *w,
			struct sl_err *err)
{
	char *rp = staged_path(ctx, w->culprit, "revert"), *fp = staged_path(ctx, w->culprit, "fix");
	int error;

	if (!rp || !fp)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if ((error = install(ctx, w->revert_wo, rp, err)) == 0)
		error = install(ctx, w->fix_wo, fp, err);
	free(rp);
	free(fp);
	return error;
}

/* Stage both work orders in .system/watch/reverts/ (atomically, each). */
static int stage(struct sl_ctx *ctx, const struct sl_gate *g, const struct watch_report *r,
		 const struct store_wo *wo, const char *revert_id, const char *fix_id,
		 struct sl_err *err)
{
	struct sl_buf rb, fb;
	char *dir = sl_path_fmt("%s/watch/reverts", ctx->repo.sysdir);
	char *rp = staged_path(ctx, r->culprit, "revert"), *fp = staged_path(ctx, r->culprit, "fix");
	int error;

	sl_buf_init(&rb, WO_FILE_MAX + 1);
	sl_buf_init(&fb, WO_FILE_MAX + 1);
	compose_revert(&rb, ctx, g, r, wo, revert_id);
	compose_fix(&fb, ctx, g, r, wo, fix_id, revert_id);
	if (!dir || !rp || !fp)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if (rb.len >= WO_FILE_MAX || fb.len >= WO_FILE_MAX) /* a cut file, never */
		error = sl_err_set(err, SL_ETOOBIG, "the work orders %s and %s would be over the "
				   "1 MiB a work order may be (work order %s is too large to copy); "
				   "nothing is reverted: revert %.12s by hand", revert_id, fix_id,
				   wo->id, r->culprit);
	else if ((error = sl_mkdir_p(dir, err)) == 0 &&
		 (error = sl_write_file_atomic(rp, rb.ptr, rb.len, err)) == 0)
		error = sl_write_file_atomic(fp, fb.ptr, fb.len, err);
	sl_buf_release(&rb);
	sl_buf_release(&fb);
	free(dir);
	free(rp);
	free(fp);
	return error;
}

/* 1 when the work order says `revert:`. */
static int is_revert(const struct store_wo *wo)
{
	json_t *all = wo->fields_json ? json_loads(wo->fields_json, 0, NULL) : NULL;
	int yes = json_object_get(all, "revert") != NULL;

	json_decref(all);
	return yes;
}

/* The culprit's event log says what the watch did (sluice log RUN). */
static void tell(struct sl_ctx *ctx, const struct store_run *run, const char *what)
{
	struct sl_err ignored = SL_ERR_INIT;

	store_event_add(ctx->st, run->id, run->work_order_id, run_state_name(run->state),
			run_state_name(run->state), what, &ignored);
	sl_err_clear(&ignored);
}

/* A row of watch_reverts for r's culprit, if there is one: into r, 1. */
static int known(struct sl_ctx *ctx, struct watch_report *r, struct sl_err *err)
{
	struct store_watch_revert *v = NULL;
	size_t n = 0;
	int error;

	int found;

	if ((error = store_watch_revert_list(ctx->st, ctx->target_ref, r->culprit, &v, &n,
					     err)) != 0)
		return error;
	/* the key may match another column (a work order named like a commit) */
	if ((found = n && !strcmp(v[0].culprit, r->culprit))) {
		r->revert_wo = strdup(v[0].revert_wo);
		r->fix_wo = strdup(v[0].fix_wo);
		error = install_both(ctx, &v[0], err); /* a kill before the copies */
	}
	store_watch_reverts_free(v, n);
	return error ? error : found;
}

/*
 * 1 when work order `id` is taken: in the store, by a revert the watch
 * made, or by a file of that name in the inbox no tick has read yet.
 */
static int taken(struct sl_ctx *ctx, const char *id)
{
	struct store_wo wo = STORE_WO_INIT;
	struct store_watch_revert *v = NULL;
	struct sl_err e = SL_ERR_INIT;
	char *file = sl_path_fmt("%s/%s/%s.md", ctx->repo.root, ctx->cfg->queue.inbox, id);
	size_t n = 0;
	int yes = !file || sl_path_exists(file) || store_wo_get(ctx->st, id, &wo, &e) == 0;

	free(file);
	sl_err_clear(&e);
	if (!yes && store_watch_revert_list(ctx->st, ctx->target_ref, id, &v, &n, &e) == 0)
		yes = n > 0;
	sl_err_clear(&e);
	store_wo_release(&wo);
	store_watch_reverts_free(v, n);
	return yes;
}

/*
 * The ids of the revert and the fix-up: <WO>-revert and <WO>-fix, or, when
 * an earlier landing of the same work order was reverted (or a person took
 * the name), <WO>-revert-2 and <WO>-fix-2, and so on up to 9.
 */
static int free_ids(struct sl_ctx *ctx, const char *wo, char revert_id[WO_ID_MAX + 1],
		    char fix_id[WO_ID_MAX + 1], struct sl_err *err)
{
	char rs[16], fs[16];
	int k;

	for (k = 1; k <= 9; k++) {
		snprintf(rs, sizeof(rs), k == 1 ? "-revert" : "-revert-%d", k);
		snprintf(fs, sizeof(fs), k == 1 ? "-fix" : "-fix-%d", k);
		id_with(revert_id, WO_ID_MAX + 1, wo, rs);
		id_with(fix_id, WO_ID_MAX + 1, wo, fs);
		if (!taken(ctx, revert_id) && !taken(ctx, fix_id))
			return 0;
	}
	return sl_err_set(err, SL_EEXISTS, "no free id for the revert of work order '%s': "
			  "%s and the ones before are taken; nothing is reverted", wo, revert_id);
}

int watch_revert(struct sl_ctx *ctx, const struct sl_gate *g, struct watch_report *r,
		 struct sl_err *err)
{
	struct store_run run;
	struct store_wo wo = STORE_WO_INIT;
	struct store_watch_revert w;
	char revert_id[WO_ID_MAX + 1], fix_id[WO_ID_MAX + 1], what[512];
	int error;

	memset(&run, 0, sizeof(run));
	if ((error = known(ctx, r, err)) != 0)
		return error < 0 ? error : 0; /* reverted before: never twice */
	if ((error = store_run_get(ctx->st, r->culprit_run, &run, err)) != 0 ||
	    (error = store_wo_get(ctx->st, run.work_order_id, &wo, err)) != 0)
		goto out;
	if (is_revert(&wo)) { /* a revert's revert would bring the breakage back */
		r->not_reverted = "it is itself a revert's landing; a person decides";
		tell(ctx, &run, "watch: this revert's landing broke another watch gate; it is not "
		     "reverted by the watch, a person decides");
		goto out;
	}
	if ((error = free_ids(ctx, wo.id, revert_id, fix_id, err)) != 0 ||
	    (error = stage(ctx, g, r, &wo, revert_id, fix_id, err)) != 0)
		goto out;
	sl_fault("watch.after_stage");
	memset(&w, 0, sizeof(w));
	w.culprit = r->culprit;
	w.target = ctx->target_ref;
	w.gate = (char *)g->name;
	w.culprit_run = run.id;
	w.culprit_wo = wo.id;
	w.revert_wo = revert_id;
	w.fix_wo = fix_id;
	w.tip = r->tip;
	w.created_ms = sl_now_ms();
	if ((error = store_watch_revert_add(ctx->st, &w, err)) != 0)
		goto out; /* SL_EEXISTS: an id is taken by another landing's revert */
	sl_fault("watch.after_record");
	if ((error = install_both(ctx, &w, err)) != 0)
		goto out;
	r->revert_wo = strdup(revert_id);
	r->fix_wo = strdup(fix_id);
	r->revert_new = 1;
	snprintf(what, sizeof(what), "watch gate '%s': this landing is reverted by work order %s "
		 "(through review and the train); %s does the work again after it", g->name,
		 revert_id, fix_id);
	tell(ctx, &run, what);
out:
	store_run_release(&run);
	store_wo_release(&wo);
	return error;
}

void watch_revert_resume(struct sl_ctx *ctx)
{
	struct store_watch_revert *v = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0, i;

	if (store_watch_revert_list(ctx->st, ctx->target_ref, NULL, &v, &n, &err) != 0)
		sl_log(SL_LOG_WARN, "cannot read the watch's reverts: %s", err.msg);
	for (i = 0; i < n; i++) {
		sl_err_clear(&err);
		if (install_both(ctx, &v[i], &err) != 0)
			sl_log(SL_LOG_WARN, "the revert %s of %.12s is not in the inbox yet: %s; the "
			       "next watch tries again", v[i].revert_wo, v[i].culprit, err.msg);
	}
	store_watch_reverts_free(v, n);
}

/* 1 when `a` is `b` or an ancestor of it, 0 when not, < 0 when git cannot say. */
static int is_ancestor(struct sl_ctx *ctx, const char *a, const char *b, struct sl_err *err)
{
	const char *args[] = { "merge-base", "--is-ancestor", a, b, NULL };
	struct sl_git_opts o = SL_GIT_OPTS_INIT;
	struct sl_git_result res;
	int error;

	if (!strcmp(a, b))
		return 1;
	o.cwd = ctx->repo.root;
	o.ok_max = 1;
	if ((error = sl_git_run(&o, args, &res, err)) != 0)
		return error;
	return res.exit_code == 0;
}

int watch_revert_green(struct sl_ctx *ctx, const char *gate, const char *tip, char *last_green,
		       struct sl_err *err)
{
	struct store_watch_revert *v = NULL;
	size_t n = 0, i, k, nr;
	int error;

	if ((error = store_watch_revert_list(ctx->st, ctx->target_ref, NULL, &v, &n, err)) != 0)
		return error;
	for (i = 0; i < n && !error; i++) {
		struct store_run *runs = NULL;

		nr = 0;
		if (strcmp(v[i].gate, gate) ||
		    store_runs_list(ctx->st, 1u << RUN_MERGED, v[i].revert_wo, &runs, &nr, err) != 0) {
			sl_err_clear(err);
			continue;
		}
		for (k = 0; k < nr && !error; k++) {
			const char *c = runs[k].merge_commit;
			int newer = 0;

			/* on tip's line, and newer than the green we have: the newer green */
			if (!c || strlen(c) != 40 || (newer = is_ancestor(ctx, c, tip, err)) <= 0 ||
			    (newer = is_ancestor(ctx, last_green, c, err)) <= 0) {
				error = newer < 0 ? newer : 0;
				continue;
			}
			memcpy(last_green, c, 41);
		}
		store_runs_free(runs, nr);
	}
	store_watch_reverts_free(v, n);
	return error;
}

int watch_revert_pending(struct sl_ctx *ctx, const char *gate, struct watch_report *r)
{
	struct store_watch_revert *v = NULL;
	struct sl_err e = SL_ERR_INIT;
	size_t n = 0, i;
	int found = 0;

	if (store_watch_revert_list(ctx->st, ctx->target_ref, NULL, &v, &n, &e) != 0) {
		sl_err_clear(&e);
		return -1;
	}
	for (i = 0; i < n && !found; i++) {
		struct store_wo wo = STORE_WO_INIT;

		if (strcmp(v[i].gate, gate))
			continue;
		/*
		 * On its way while the queue has it waiting, ready or running. Not
		 * read yet (or a file that does not parse): bisected again, which
		 * names the same landing and reverts nothing twice.
		 */
		found = store_wo_get(ctx->st, v[i].revert_wo, &wo, &e) == 0 && wo.present &&
			(wo_state_is(wo.state, WO_WAITING) || wo_state_is(wo.state, WO_READY) ||
			 wo_state_is(wo.state, WO_RUNNING));
		sl_err_clear(&e);
		store_wo_release(&wo);
		if (found) { /* the culprit named before is the tip's still */
			snprintf(r->culprit, sizeof(r->culprit), "%s", v[i].culprit);
			r->culprit_run = strdup(v[i].culprit_run);
			r->revert_wo = strdup(v[i].revert_wo);
			r->fix_wo = strdup(v[i].fix_wo);
			r->revert_pending = 1;
			if (store_watch_culprit(ctx->st, ctx->target_ref, gate, r->culprit,
						r->culprit_run, &e) != 0)
				found = -1;
			sl_err_clear(&e);
		}
	}
	store_watch_reverts_free(v, n);
	return found;
}
