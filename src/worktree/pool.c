/*
 * The worktree pool (docs/design.md, The run's worktree and the pool): a finished run's worktree is
 * kept under <root>/.system/pool/<slot> and given to a new run, which then
 * rewrites only the files that differ from its base.
 *
 * A slot is a linked worktree like a run's: its directory
 * <root>/.system/pool/<slot>, its entry <gitdir>/worktrees/<slot>, HEAD
 * detached. Slot names begin with '_', run ids never do
 * (worktree_name_valid), so the one is never taken for the other.
 *
 * Moving a worktree between a run and the pool is two renames (the
 * directory, then the entry) and the two pointer files rewritten
 * (<dir>/.git and <entry>/gitdir). An intent file,
 * <root>/.system/pool/<slot>.take or <slot>.put, naming the run, is written
 * first and removed last: worktree_pool_recover() puts a take that a crash
 * cut off back into the pool, and finishes a put. So a slot is in one
 * place at a time, and a killed tick neither loses one nor gives one to
 * two runs. Everything here runs under the .system/lock flock.
 */
#include "worktree/worktree_int.h"
#include "core/config.h"
#include "core/fault.h"
#include "core/fs.h"
#include "core/git.h"
#include "core/log.h"
#include "core/sha256.h"
#include "core/time.h"

#include <git2.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SLOT_PREFIX "_pool-"
#define SLOT_NAME_MAX 64
#define CHECKOUT_MARK "sluice-checkout-settings"
/* in a taken worktree's entry from its rename until its reset: the take is not done */
#define RESET_MARK "sluice-reset-pending"
/*
 * In a slot's entry from a put whose status showed nothing until its next
 * take's reset: "<commit> <stamp of the index file>", the tracked files are
 * that commit's (reset_between()).
 */
#define CLEAN_MARK "sluice-clean-at"
/* above this many paths between the slot's commit and the run's, the full reset is as fast */
#define BETWEEN_MAX 4096
/* the files whose bytes are hashed to tell that they are their index entry's, at most */
#define HASHED_MAX 512

struct pool {
	git_repository *repo;
	const char *root;
	char common[PATH_MAX]; /* the common git directory, no trailing '/' */
};

static int slot_name_valid(const char *n)
{
	size_t len = strlen(n);

	if (len >= SLOT_NAME_MAX || strncmp(n, SLOT_PREFIX, sizeof(SLOT_PREFIX) - 1))
		return 0;
	return strspn(n + sizeof(SLOT_PREFIX) - 1, "0123456789-") == len - (sizeof(SLOT_PREFIX) - 1);
}

static char *pool_path(const char *root, const char *file, const char *suffix)
{
	return sl_path_fmt("%s/.system/pool%s%s%s", root, file ? "/" : "", file ? file : "",
			   suffix ? suffix : "");
}

static char *run_wt_path(const char *root, const char *run)
{
	return sl_path_fmt("%s/.system/runs/%s/worktree", root, run);
}

static char *entry(const struct pool *p, const char *name, const char *file)
{
	return worktree_entry_path(p->common, name, file);
}

static int pool_open(struct pool *p, const char *root, struct sl_err *err)
{
	const char *c;
	size_t n;
	int error;

	memset(p, 0, sizeof(*p));
	p->root = root;
	if ((error = worktree__open_repo(&p->repo, root, err)) < 0)
		return error;
	c = git_repository_commondir(p->repo);
	n = strlen(c);
	while (n > 1 && c[n - 1] == '/')
		n--;
	if (n >= sizeof(p->common)) {
		git_repository_free(p->repo);
		p->repo = NULL;
		return sl_err_set(err, SL_ERROR, "the git directory's path is too long");
	}
	memcpy(p->common, c, n);
	p->common[n] = '\0';
	return 0;
}

static void pool_close(struct pool *p)
{
	git_repository_free(p->repo);
	p->repo = NULL;
}

/* 1 when the small file `path` holds `want` (one line; a trailing '/', as libgit2 writes, aside). */
static int holds(const char *path, const char *want)
{
	char *line = worktree__read_line(path);
	size_t n = line ? strlen(line) : 0;
	int same;

	while (n > 1 && line[n - 1] == '/')
		line[--n] = '\0';
	same = line && !strcmp(line, want);

	free(line);
	return same;
}

/* A directory itself, not a link to one (a builder can replace its worktree by a link). */
static int real_dir(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* <dir>/.git names entry `name`, and the entry names <dir>/.git; <dir> is no link. */
static int linked(const struct pool *p, const char *dir, const char *name)
{
	char *gitfile = sl_path_fmt("%s/.git", dir), *want = NULL, *back = entry(p, name, "gitdir");
	int ok = 0;

	if (gitfile && back && (want = sl_path_fmt("gitdir: %s/worktrees/%s", p->common, name)))
		ok = real_dir(dir) && holds(gitfile, want) && holds(back, gitfile);
	free(gitfile);
	free(want);
	free(back);
	return ok;
}

/* rename(2): a directory to another folder of the same file system (sl_rename is for one folder). */
static int move(const char *from, const char *to, struct sl_err *err)
{
	if (rename(from, to) < 0)
		return sl_err_sys(err, errno, "cannot move '%s' to '%s'", from, to);
	return 0;
}

/* <dir>/.git names entry `name`. */
static int names(const struct pool *p, const char *dir, const char *name)
{
	char *gitfile = sl_path_fmt("%s/.git", dir), *want = NULL;
	int ok = gitfile && (want = sl_path_fmt("gitdir: %s/worktrees/%s", p->common, name)) &&
		 holds(gitfile, want);

	free(gitfile);
	free(want);
	return ok;
}

/* Write both pointer files so that directory `dir` and entry `name` name each other. */
static int relink(const struct pool *p, const char *dir, const char *name, struct sl_err *err)
{
	char *gitfile = sl_path_fmt("%s/.git", dir), *text = NULL, *back = entry(p, name, "gitdir");
	char *line = NULL;
	int error;

	if (!gitfile || !back || !(text = sl_path_fmt("gitdir: %s/worktrees/%s\n", p->common, name)) ||
	    !(line = sl_path_fmt("%s\n", gitfile)))
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if ((error = sl_write_file_atomic(gitfile, text, strlen(text), err)) == 0) {
		/* the worktree names the entry, the entry not yet the worktree */
		sl_fault(strncmp(name, SLOT_PREFIX, sizeof(SLOT_PREFIX) - 1) ? "pool.take_half_linked" :
									   NULL);
		error = sl_write_file_atomic(back, line, strlen(line), err);
	}
	free(gitfile);
	free(text);
	free(back);
	free(line);
	return error;
}

/* Rename entry `from` to `to` unless that is done: SL_EEXISTS when `to` is taken. */
static int move_entry(const struct pool *p, const char *from, const char *to, struct sl_err *err)
{
	char *a = entry(p, from, NULL), *b = entry(p, to, NULL);
	int error = 0;

	if (!a || !b)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if (!sl_path_exists(a) && sl_is_dir(b))
		error = 0; /* moved already */
	else if (sl_path_exists(b))
		error = sl_err_set(err, SL_EEXISTS, "worktree entry '%s' exists already", b);
	else
		error = move(a, b, err);
	free(a);
	free(b);
	return error;
}

/* The commit entry `name`'s HEAD is on, by a branch or detached. */
static int head_oid(const struct pool *p, const char *name, git_oid *oid, struct sl_err *err)
{
	char *path = entry(p, name, "HEAD"), *line = path ? worktree__read_line(path) : NULL;
	int error = 0;

	if (!line)
		error = sl_err_set(err, SL_ENOTFOUND, "worktree '%s' has no HEAD", name);
	else if (!strncmp(line, "ref: ", 5)) {
		if (git_reference_name_to_id(oid, p->repo, line + 5) < 0)
			error = sl_err_set(err, SL_ENOTFOUND, "worktree '%s' is on '%s', which is gone",
					   name, line + 5);
	} else if (strlen(line) != GIT_OID_HEXSZ || git_oid_fromstr(oid, line) < 0)
		error = sl_err_set(err, SL_EINVALID, "worktree '%s' has a HEAD git cannot read", name);
	free(line);
	free(path);
	return error;
}

/* Entry `name`'s HEAD names the commit it was on (detached), not a branch. */
static int detach_head(const struct pool *p, const char *name, struct sl_err *err)
{
	char *path = entry(p, name, "HEAD");
	char text[GIT_OID_HEXSZ + 2];
	git_oid oid;
	int error;

	if (!path)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if ((error = head_oid(p, name, &oid, err)) == 0) {
		git_oid_tostr(text, GIT_OID_HEXSZ + 1, &oid);
		text[GIT_OID_HEXSZ] = '\n';
		text[GIT_OID_HEXSZ + 1] = '\0';
		error = sl_write_file_atomic(path, text, strlen(text), err);
	}
	free(path);
	return error;
}

static int write_intent(const char *root, const char *slot, const char *kind, const char *run,
			struct sl_err *err)
{
	char *path = NULL, *dir = pool_path(root, NULL, NULL);
	int error;

	if (!dir || !(path = pool_path(root, slot, kind)))
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if ((error = sl_mkdir_p(dir, err)) == 0)
		error = sl_write_file_atomic(path, run, strlen(run), err);
	free(dir);
	free(path);
	return error;
}

static void drop_intent(const char *root, const char *slot, const char *kind)
{
	char *path = pool_path(root, slot, kind);
	struct sl_err e = SL_ERR_INIT;

	if (path)
		sl_unlink(path, &e);
	free(path);
}

/* An entry that names `dir` (or nothing that exists): ours to delete with it. */
static int entry_is_for(const struct pool *p, const char *name, const char *dir)
{
	char *back = entry(p, name, "gitdir"), *line = back ? worktree__read_line(back) : NULL;
	char *want = sl_path_fmt("%s/.git", dir);
	int ours = !line || (want && !strcmp(line, want)) || !sl_path_exists(line);

	free(back);
	free(line);
	free(want);
	return ours;
}

/* Delete slot `name`: its directory and, when it is the slot's, its entry. */
static int remove_slot(const struct pool *p, const char *name, struct sl_err *err)
{
	char *dir = pool_path(p->root, name, NULL), *ent = entry(p, name, NULL);
	int error = 0;

	if (!dir || !ent) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if (sl_is_dir(ent) && entry_is_for(p, name, dir))
		error = sl_rm_rf(ent, err);
	if (!error && sl_is_dir(dir)) {
		struct sl_err e = SL_ERR_INIT;
		worktree__make_writable(dir, &e);
		error = sl_rm_rf(dir, err);
	}
out:
	free(dir);
	free(ent);
	return error;
}

/* Is slot `name` a whole worktree of the pool: linked both ways, detached, not locked? */
static int slot_sound(const struct pool *p, const char *name, int *locked)
{
	char *dir = pool_path(p->root, name, NULL), *lock = entry(p, name, "locked");
	char *head = entry(p, name, "HEAD"), *line = head ? worktree__read_line(head) : NULL;
	int sound = dir && linked(p, dir, name) && line && strlen(line) == GIT_OID_HEXSZ;

	*locked = lock && sl_path_exists(lock);
	free(dir);
	free(lock);
	free(head);
	free(line);
	return sound;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is `d_name` a slot (suffix "") or an intent of one (".take", ".put")? Its slot name, or NULL. */
static char *scanned_name(const char *root, const char *d_name, const char *suffix)
{
	size_t len = strlen(d_name), slen = strlen(suffix);
	char *name, *full = NULL;

	if (len <= slen || strcmp(d_name + len - slen, suffix) ||
	    !(name = strndup(d_name, len - slen)))
		return NULL;
	if (!slot_name_valid(name) ||
	    (!slen && (!(full = pool_path(root, name, NULL)) || !sl_is_dir(full)))) {
		free(name);
		name = NULL;
	}
	free(full);
	return name;
}

/*
 * The slots in the pool directory (suffix "") or the slots with an intent
 * (".take", ".put"), sorted: oldest first. *out: sl_strv_free().
 */
static int scan(const char *root, const char *suffix, sl_strv *out, struct sl_err *err)
{
	char *dir = pool_path(root, NULL, NULL), *name;
	struct dirent *d;
	DIR *dh;
	int error = 0;

	*out = NULL;
	if (!dir)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if (!(dh = opendir(dir))) {
		error = errno == ENOENT ? 0 : sl_err_sys(err, errno, "cannot read '%s'", dir);
		free(dir);
		return error;
	}
	while (!error && (d = readdir(dh)))
		if ((name = scanned_name(root, d->d_name, suffix))) {
			if (sl_strv_push(out, name) < 0)
				error = sl_err_set(err, SL_ERROR, "out of memory");
			free(name);
		}
	closedir(dh);
	free(dir);
	if (*out)
		qsort(*out, sl_strv_len(*out), sizeof(**out), cmp_str);
	return error;
}

static int has_entry(const struct pool *p, const char *name)
{
	char *ent = entry(p, name, NULL);
	int has = ent && sl_is_dir(ent);

	free(ent);
	return has;
}

static int marked(const struct pool *p, const char *run)
{
	char *mark = entry(p, run, RESET_MARK);
	int is = mark && sl_path_exists(mark);

	free(mark);
	return is;
}

/*
 * A take of `slot` by `run` cut off: the worktree goes back to the pool,
 * wherever the take stopped (the run never started in it: the intent is
 * removed only once it is the run's, whole).
 */
static int undo_take(const struct pool *p, const char *slot, const char *run, struct sl_err *err)
{
	char *src = pool_path(p->root, slot, NULL), *dst = run_wt_path(p->root, run);
	int error = 0;

	if (!src || !dst) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	/*
	 * dst is the slot's when its .git still names the slot, or names the
	 * run whose entry has the take's mark: never a run's own worktree, even
	 * for an intent file someone else wrote.
	 */
	if (!sl_path_exists(src) && sl_is_dir(dst) &&
	    (names(p, dst, slot) || (names(p, dst, run) && marked(p, run))))
		error = move(dst, src, err);
	/* the slot's entry is where it was, or renamed to the run's (only a take does that) */
	if (!error && sl_is_dir(src) && (has_entry(p, slot) || (error = move_entry(p, run, slot, err)) == 0) &&
	    (error = relink(p, src, slot, err)) == 0 && (error = detach_head(p, slot, err)) != 0)
		sl_err_clear(err), error = remove_slot(p, slot, err);
out:
	free(src);
	free(dst);
	return error;
}

/* A put of `run`'s worktree into `slot` cut off: finished when the directory moved, else dropped. */
static int finish_put(const struct pool *p, const char *slot, const char *run, struct sl_err *err)
{
	char *dst = pool_path(p->root, slot, NULL);
	int error = 0;

	if (!dst)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if (sl_is_dir(dst) && (error = move_entry(p, run, slot, err)) == 0 &&
	    (error = relink(p, dst, slot, err)) == 0 && (error = detach_head(p, slot, err)) != 0)
		sl_err_clear(err), error = remove_slot(p, slot, err);
	free(dst);
	return error;
}

/* Every intent of `kind`: handled, then removed. */
static int recover_intents(const struct pool *p, const char *kind, struct sl_err *err)
{
	sl_strv slots = NULL;
	size_t i;
	int error;

	if ((error = scan(p->root, kind, &slots, err)) != 0)
		return error;
	for (i = 0; !error && slots && slots[i]; i++) {
		char *path = pool_path(p->root, slots[i], kind), *run = path ? worktree__read_line(path) : NULL;
		if (run && worktree_name_valid(run))
			error = !strcmp(kind, ".take") ? undo_take(p, slots[i], run, err)
						       : finish_put(p, slots[i], run, err);
		if (!error)
			drop_intent(p->root, slots[i], kind);
		free(path);
		free(run);
	}
	sl_strv_free(slots);
	return error;
}

/* Entries of slots whose directory is gone (rm -rf .system/pool by hand). */
static int drop_stray_entries(const struct pool *p, struct sl_err *err)
{
	char *dir = sl_path_fmt("%s/worktrees", p->common);
	struct dirent *d;
	DIR *dh;
	int error = 0;

	if (!dir || !(dh = opendir(dir))) {
		free(dir);
		return 0;
	}
	while (!error && (d = readdir(dh))) {
		char *slot_dir, *ent;
		if (!slot_name_valid(d->d_name))
			continue;
		slot_dir = pool_path(p->root, d->d_name, NULL);
		ent = entry(p, d->d_name, NULL);
		if (slot_dir && ent && !sl_path_exists(slot_dir) && entry_is_for(p, d->d_name, slot_dir))
			error = sl_rm_rf(ent, err);
		free(slot_dir);
		free(ent);
	}
	closedir(dh);
	free(dir);
	return error;
}

/* The temporary files of intents whose writer was killed: under the lock nobody else writes here. */
static void drop_dead_tmp(const struct pool *p)
{
	char *dir = pool_path(p->root, NULL, NULL), *path;
	struct sl_err e = SL_ERR_INIT;
	struct dirent *d;
	DIR *dh;

	if (!dir || !(dh = opendir(dir))) {
		free(dir);
		return;
	}
	while ((d = readdir(dh)))
		if (!strncmp(d->d_name, SLOT_PREFIX, sizeof(SLOT_PREFIX) - 1) &&
		    strstr(d->d_name, ".tmp.") && (path = sl_path_join(dir, d->d_name))) {
			sl_unlink(path, &e);
			sl_err_clear(&e);
			free(path);
		}
	closedir(dh);
	free(dir);
}

static int recover(const struct pool *p, struct sl_err *err)
{
	sl_strv slots = NULL;
	size_t i;
	int error, locked;

	drop_dead_tmp(p);
	if ((error = recover_intents(p, ".take", err)) != 0 ||
	    (error = recover_intents(p, ".put", err)) != 0 ||
	    (error = scan(p->root, "", &slots, err)) != 0)
		goto out;
	for (i = 0; !error && slots && slots[i]; i++)
		if (!slot_sound(p, slots[i], &locked) && !locked)
			error = remove_slot(p, slots[i], err);
	if (!error)
		error = drop_stray_entries(p, err);
out:
	sl_strv_free(slots);
	return error;
}

int worktree_pool_recover(const char *repo_root, struct sl_err *err)
{
	struct pool p;
	int error;

	if ((error = pool_open(&p, repo_root, err)) != 0)
		return error;
	error = recover(&p, err);
	pool_close(&p);
	return error;
}

/* What a run does not inherit from the worktree's last run: its entry is as a new one's. */
static int strip_entry(const struct pool *p, const char *name, struct sl_err *err)
{
	/* the settings mark describes the files, which are not touched here */
	static const char *const keep[] = { "HEAD", "commondir", "gitdir", "index", CHECKOUT_MARK,
					    RESET_MARK, CLEAN_MARK, NULL };
	char *dir = entry(p, name, NULL);
	struct dirent *d;
	DIR *dh;
	size_t i;
	int error = 0;

	if (!dir || !(dh = opendir(dir))) {
		error = sl_err_sys(err, errno, "cannot read worktree entry '%s'", dir ? dir : name);
		free(dir);
		return error;
	}
	while (!error && (d = readdir(dh))) {
		char *path;
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		for (i = 0; keep[i] && strcmp(keep[i], d->d_name); i++)
			;
		if (keep[i])
			continue;
		if (!(path = sl_path_join(dir, d->d_name)))
			error = sl_err_set(err, SL_ERROR, "out of memory");
		else
			error = sl_rm_rf(path, err);
		free(path);
	}
	closedir(dh);
	free(dir);
	return error;
}

/*
 * The index keeps only what tells git a file is unchanged (path, id, mode,
 * stat data): no skip-worktree, assume-unchanged or intent-to-add bit, no
 * conflict stage, and none of the extensions libgit2 does not write
 * (untracked cache, fsmonitor, split index) that would make git look away
 * from a file. An index libgit2 cannot read is deleted: every file is then
 * written again, as in a fresh checkout.
 */
static int clean_index(const struct pool *p, const char *wt, const char *name, struct sl_err *err)
{
	git_repository *r = NULL;
	git_index *idx = NULL;
	git_index_entry *v = NULL;
	size_t i, n = 0, k = 0;
	char *ipath = entry(p, name, "index");
	int rc = -1;

	if (ipath && worktree__index_plain(ipath, 0)) {
		free(ipath);
		return 0;
	}
	free(ipath);
	if (git_repository_open_ext(&r, wt, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0 ||
	    git_repository_index(&idx, r) < 0)
		goto out;
	n = git_index_entrycount(idx);
	if (n && !(v = calloc(n, sizeof(*v))))
		goto out;
	for (i = 0; i < n; i++) {
		const git_index_entry *e = git_index_get_byindex(idx, i);
		if (!e || GIT_INDEX_ENTRY_STAGE(e) != 0)
			continue;
		v[k] = *e;
		v[k].flags = 0;
		v[k].flags_extended = 0;
		if (!(v[k].path = strdup(e->path)))
			goto out;
		k++;
	}
	git_index_clear(idx);
	for (i = 0, rc = 0; i < k && rc == 0; i++)
		rc = git_index_add(idx, &v[i]);
	if (rc == 0)
		rc = git_index_write(idx);
out:
	for (i = 0; i < k; i++)
		free((char *)v[i].path);
	free(v);
	git_index_free(idx);
	git_repository_free(r);
	if (rc < 0) {
		char *path = entry(p, name, "index");
		int error = path ? sl_unlink(path, err) : sl_err_set(err, SL_ERROR, "out of memory");
		free(path);
		return error;
	}
	return 0;
}

static int git_here(const char *wt, const char *const *args, struct sl_err *err)
{
	return worktree__git_pinned(wt, args, NULL, NULL, err);
}

/* The untracked files go (and the ignored ones unless `keep_ignored`), as in a fresh checkout. */
static int clean_files(const char *wt, int keep_ignored, struct sl_err *err)
{
	const char *clean[] = { "clean", "-ffdq", keep_ignored ? NULL : "-x", NULL };

	return git_here(wt, clean, err);
}

/* Files and index as a fresh checkout of HEAD: only what differs is written. */
static int reset_files(const char *wt, int keep_ignored, struct sl_err *err)
{
	const char *reset[] = { "reset", "--hard", "-q", "--no-recurse-submodules", NULL };
	int error;

	if ((error = git_here(wt, reset, err)) == 0)
		error = clean_files(wt, keep_ignored, err);
	return error;
}

/* The stamp of the index file at `path`: a rewrite, a move elsewhere, a touch change it. */
static int index_stamp(const char *path, char *out, size_t n)
{
	struct stat st;

	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	return sl_fmt_fixed(out, n, "%llu:%llu %lld %lld.%09ld %lld.%09ld",
			    (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
			    (long long)st.st_size, (long long)st.st_mtim.tv_sec,
			    (long)st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec,
			    (long)st.st_ctim.tv_nsec);
}

/*
 * At a put whose status showed nothing (`spotless`), not even an excluded
 * path: the worktree's index and tracked files are its HEAD commit's.
 * Written in the run's entry, which becomes the slot's; reset_between()
 * relies on it while the index is the same file, untouched. Without it the
 * take resets in full.
 */
static int mark_clean(const struct pool *p, const char *run, int spotless, struct sl_err *err)
{
	char *mark = entry(p, run, CLEAN_MARK), *index = entry(p, run, "index");
	char text[GIT_OID_HEXSZ + 256], stamp[200];
	git_oid oid;
	int error;

	if (!mark || !index)
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if (!spotless) /* a mark of an earlier put goes: only this status may vouch */
		error = sl_unlink(mark, err);
	else if ((error = head_oid(p, run, &oid, err)) == 0) {
		git_oid_tostr(text, GIT_OID_HEXSZ + 1, &oid);
		if (index_stamp(index, stamp, sizeof(stamp)) < 0 ||
		    sl_fmt_fixed(text + GIT_OID_HEXSZ, sizeof(text) - GIT_OID_HEXSZ, " %s\n",
				 stamp) < 0)
			error = sl_unlink(mark, err); /* no index: no mark */
		else
			error = sl_write_file_atomic(mark, text, strlen(text), err);
	}
	free(mark);
	free(index);
	return error;
}

/*
 * The commit of `run`'s clean mark (*oid) when it still holds: 1, else 0
 * (-1 when the mark cannot be removed). The mark is used up either way,
 * before any file is touched: a take cut off after this resets in full.
 */
static int clean_at(const struct pool *p, const char *run, git_oid *oid, struct sl_err *err)
{
	char *mark = entry(p, run, CLEAN_MARK), *index = entry(p, run, "index");
	char *line = mark ? worktree__read_line(mark) : NULL, stamp[200];
	int holds = line && index && strlen(line) > GIT_OID_HEXSZ + 1 &&
		    line[GIT_OID_HEXSZ] == ' ' && git_oid_fromstrn(oid, line, GIT_OID_HEXSZ) == 0 &&
		    index_stamp(index, stamp, sizeof(stamp)) == 0 &&
		    !strcmp(line + GIT_OID_HEXSZ + 1, stamp);

	if (!mark || sl_unlink(mark, err) != 0)
		holds = -1;
	free(mark);
	free(index);
	free(line);
	return holds;
}

struct between {
	struct sl_buf paths; /* NUL-separated */
	size_t n;
};

static int add_between(const char *path, void *payload)
{
	struct between *b = payload;

	if (++b->n > BETWEEN_MAX)
		return 1;
	return sl_buf_add(&b->paths, path, strlen(path) + 1) < 0 ? -1 : 0;
}

/* The paths that differ between commit `from` and HEAD of the worktree `r`, into *b. */
static int paths_between(git_repository *r, const git_oid *from, struct between *b)
{
	git_reference *head = NULL;
	git_commit *a = NULL, *c = NULL;
	git_tree *ta = NULL, *tc = NULL;
	int rc;

	if ((rc = git_repository_head(&head, r)) == 0 && (rc = git_commit_lookup(&a, r, from)) == 0 &&
	    (rc = git_commit_lookup(&c, r, git_reference_target(head))) == 0 &&
	    (rc = git_commit_tree(&ta, a)) == 0 && (rc = git_commit_tree(&tc, c)) == 0)
		rc = sl_tree_paths(r, ta, tc, add_between, b);
	git_tree_free(ta);
	git_tree_free(tc);
	git_commit_free(a);
	git_commit_free(c);
	git_reference_free(head);
	return rc;
}

/*
 * Files and index as a fresh checkout of HEAD, for a worktree whose index
 * and tracked files are commit `from`'s (its clean mark): only the paths
 * that differ between the two commits are written (`git restore`, the
 * files and the index), then the untracked files go as in reset_files().
 * 1 when this way does not apply (too many paths, no tree): the caller
 * resets in full; as_checked_out() then checks that every tracked file is
 * still what its entry says.
 */
static int reset_between(const char *wt, const git_oid *from, int keep_ignored, long *n,
			 struct sl_err *err)
{
	const char *restore[] = { "--literal-pathspecs", "restore", "--source=HEAD", "--staged",
				  "--worktree", "--no-recurse-submodules", "--pathspec-from-file=-",
				  "--pathspec-file-nul", NULL };
	git_repository *r = NULL;
	struct between b = { SL_BUF_INIT, 0 };
	int rc, error = 1;

	sl_buf_init(&b.paths, 0);
	if (git_repository_open_ext(&r, wt, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0 ||
	    (rc = paths_between(r, from, &b)) != 0)
		goto out;
	git_repository_free(r); /* git writes the index next */
	r = NULL;
	*n = (long)b.n;
	if ((error = b.n ? worktree__git_pinned(wt, restore, &b.paths, NULL, err) : 0) == 0)
		error = clean_files(wt, keep_ignored, err);
out:
	git_repository_free(r);
	sl_buf_release(&b.paths);
	return error;
}

/* sl_tree_paths(): stops at a .gitattributes */
static int is_attributes(const char *path, void *payload)
{
	const char *base = strrchr(path, '/');

	(void)payload;
	return !strcmp(base ? base + 1 : path, ".gitattributes");
}

/*
 * Whether a .gitattributes differs between the commits `from` (what the
 * worktree holds) and `to`: line endings and filters of files whose bytes
 * in git did not change may then differ on disk, which git reset, going by
 * the index, would not see (and a checkout reads the attributes still on
 * disk). 1 also when it cannot tell.
 */
static int attributes_changed(const struct pool *p, const git_oid *from, const git_oid *to)
{
	git_commit *a = NULL, *b = NULL;
	git_tree *ta = NULL, *tb = NULL;
	int changed = 1;

	if (git_oid_equal(from, to))
		return 0;
	if (git_commit_lookup(&a, p->repo, from) == 0 && git_commit_lookup(&b, p->repo, to) == 0 &&
	    git_commit_tree(&ta, a) == 0 && git_commit_tree(&tb, b) == 0)
		changed = sl_tree_paths(p->repo, ta, tb, is_attributes, NULL) != 0;
	git_tree_free(ta);
	git_tree_free(tb);
	git_commit_free(a);
	git_commit_free(b);
	return changed;
}

/*
 * Under the lock, once the worktree is the run's: its entry as a new one's,
 * the mark that its files are not reset yet, the run's branch (created at
 * the base when missing) checked out in HEAD.
 */
static int adopt(const struct pool *p, const char *run, const char *branch, const char *base_hex,
		 struct sl_err *err)
{
	git_reference *ref = NULL;
	char *head = entry(p, run, "HEAD"), *mark = entry(p, run, RESET_MARK), *text = NULL;
	int created = 0, error;

	if (!head || !mark || !(text = sl_path_fmt("ref: refs/heads/%s\n", branch))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = strip_entry(p, run, err)) == 0 &&
	    (error = sl_write_file_atomic(mark, "", 0, err)) == 0 &&
	    (error = worktree__get_branch(&ref, &created, p->repo, branch, base_hex, err)) == 0)
		error = sl_write_file_atomic(head, text, strlen(text), err);
out:
	git_reference_free(ref);
	free(head);
	free(mark);
	free(text);
	return error;
}

static int dir_is_empty(const char *path)
{
	struct dirent *d;
	DIR *dh = opendir(path);
	int empty = 1;

	if (!dh)
		return 1;
	while (empty && (d = readdir(dh)))
		empty = !strcmp(d->d_name, ".") || !strcmp(d->d_name, "..");
	closedir(dh);
	return empty;
}

struct modes {
	const char *wt;
	mode_t dir, file, exec; /* what a checkout makes: 0777, 0666, 0777 less the umask */
	char done[PATH_MAX];    /* the last folder set right: its ancestors are right too */
	int fd;                 /* the worktree's folder, open */
	int verify;             /* 1: each tracked file is checked against its entry */
	struct timespec index_mtime;
	size_t hashed;          /* files whose bytes were hashed for that */
	int stale;              /* 1: a tracked file is not its entry's (verify) */
};

static int stat_same(const git_index_entry *e, const struct stat *st)
{
	return e->file_size == (uint32_t)st->st_size && e->ino == (uint32_t)st->st_ino &&
	       e->mtime.seconds == (int32_t)st->st_mtim.tv_sec &&
	       e->mtime.nanoseconds == (uint32_t)st->st_mtim.tv_nsec &&
	       e->ctime.seconds == (int32_t)st->st_ctim.tv_sec &&
	       e->ctime.nanoseconds == (uint32_t)st->st_ctim.tv_nsec;
}

/*
 * Does the file at `path` (st its lstat) hold what index entry `e` says? By
 * its stat data, as git decides, unless the entry is racy (written in the
 * second of the index or later: the file may have changed after, within
 * the clock's step), else by the blob id of its bytes. A file whose bytes
 * git filters differs and so is stale: the caller then resets in full.
 */
static int entry_holds(struct modes *m, const git_index_entry *e, const char *path,
		       const struct stat *st)
{
	char link[PATH_MAX];
	ssize_t len;
	git_oid id;

	if (e->mode == GIT_FILEMODE_COMMIT)
		return S_ISDIR(st->st_mode);
	if (e->mode == GIT_FILEMODE_LINK ? !S_ISLNK(st->st_mode) : !S_ISREG(st->st_mode))
		return 0;
	if (stat_same(e, st) && (int64_t)e->mtime.seconds < (int64_t)m->index_mtime.tv_sec)
		return 1;
	if (++m->hashed > HASHED_MAX)
		return 0;
	if (S_ISLNK(st->st_mode)) {
		if ((len = readlink(path, link, sizeof(link))) < 0 || (size_t)len >= sizeof(link) ||
		    git_odb_hash(&id, link, (size_t)len, GIT_OBJECT_BLOB) < 0)
			return 0;
	} else if (git_odb_hashfile(&id, path, GIT_OBJECT_BLOB) < 0)
		return 0;
	return git_oid_equal(&id, &e->id);
}

/* `path` (relative) a folder of the checkout: its mode a fresh checkout's. */
static int fix_dir(struct modes *m, const char *rel, size_t len, struct sl_err *err)
{
	char path[PATH_MAX * 2];
	struct stat st;

	if (len < sizeof(m->done) && !strncmp(m->done, rel, len) &&
	    (m->done[len] == '\0' || m->done[len] == '/'))
		return 0;
	if (sl_fmt_fixed(path, sizeof(path), "%.*s", (int)len, rel) < 0)
		return sl_err_set(err, SL_ERROR, "path too long: '%s'", rel);
	/* relative to the worktree's folder: the kernel walks two names, not twelve */
	if (fstatat(m->fd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
	    (st.st_mode & 07777) != m->dir && fchmodat(m->fd, path, m->dir, 0) < 0)
		return sl_err_sys(err, errno, "cannot set the mode of '%s/%s'", m->wt, path);
	if (len < sizeof(m->done)) {
		memcpy(m->done, rel, len);
		m->done[len] = '\0';
	}
	return 0;
}

/* One index entry: its folders, its mode; a submodule's folder emptied. */
static int fix_entry(struct modes *m, const git_index_entry *e, struct sl_err *err)
{
	const char *slash;
	char path[PATH_MAX * 2];
	struct stat st;
	mode_t want;
	int error = 0;

	if (!worktree__path_sane(e->path, strlen(e->path))) {
		m->stale = m->verify; /* never followed out of the worktree */
		return 0;
	}
	for (slash = strchr(e->path, '/'); !error && slash; slash = strchr(slash + 1, '/'))
		error = fix_dir(m, e->path, (size_t)(slash - e->path), err);
	if (error || sl_fmt_fixed(path, sizeof(path), "%s/%s", m->wt, e->path) < 0 ||
	    fstatat(m->fd, e->path, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		m->stale |= m->verify && !error;
		return error;
	}
	if (m->verify && !entry_holds(m, e, path, &st)) {
		m->stale = 1;
		return 0;
	}
	if (e->mode == GIT_FILEMODE_COMMIT && S_ISDIR(st.st_mode)) {
		/* a fresh checkout leaves a submodule's folder empty (its .git named the old entry) */
		if (!dir_is_empty(path) &&
		    ((error = sl_rm_rf(path, err)) != 0 || mkdir(path, m->dir) < 0))
			return error ? error : sl_err_sys(err, errno, "cannot make '%s'", path);
		return fix_dir(m, e->path, strlen(e->path), err);
	}
	want = e->mode == GIT_FILEMODE_BLOB_EXECUTABLE ? m->exec : m->file;
	if (S_ISREG(st.st_mode) && (st.st_mode & 07777) != want && fchmodat(m->fd, e->path, want, 0) < 0)
		return sl_err_sys(err, errno, "cannot set the mode of '%s'", path);
	return 0;
}

/*
 * What git reset does not put right, as a fresh checkout has it: the modes
 * of folders and of files (git keeps only the executable bit), and the
 * folders of submodules, empty (a builder may have checked one out).
 * Ignored files and folders of ignored files only are left alone. With
 * `stale` (after reset_between()), each tracked file is also checked to be
 * its entry's, and *stale is 1 at the first that is not.
 */
struct fix_walk {
	struct modes *m;
	struct sl_err *err;
	int error, called;
};

static int fix_each(const git_index_entry *e, void *payload)
{
	struct fix_walk *f = payload;

	f->called = 1;
	f->error = fix_entry(f->m, e, f->err);
	return f->error || f->m->stale;
}

/*
 * fix_entry() on every entry of the index: read from the file when it is
 * plain (a fifth of a libgit2 read's time), else through libgit2.
 */
static int fix_all(struct modes *m, git_repository *r, struct sl_err *err)
{
	struct fix_walk f = { m, err, 0, 0 };
	git_index *idx = NULL;
	char *path = sl_path_join(git_repository_path(r), "index");
	size_t i, n;
	int error = 0;

	if (path && (worktree__index_each(path, 0, fix_each, &f) != -1 || f.called)) {
		free(path);
		return f.error;
	}
	free(path);
	if (git_repository_index(&idx, r) < 0)
		return sl_err_set(err, SL_ERROR, "cannot read the index of '%s'", m->wt);
	n = git_index_entrycount(idx);
	for (i = 0; !error && !m->stale && i < n; i++)
		error = fix_entry(m, git_index_get_byindex(idx, i), err);
	git_index_free(idx);
	return error;
}

static int as_checked_out(const char *wt, int *stale, struct sl_err *err)
{
	struct modes m;
	git_repository *r = NULL;
	mode_t mask = umask(0);
	int error = 0;

	umask(mask);
	memset(&m, 0, sizeof(m));
	m.wt = wt;
	m.dir = m.exec = 0777 & ~mask;
	m.file = 0666 & ~mask;
	if ((m.fd = open(wt, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return sl_err_sys(err, errno, "cannot open '%s'", wt);
	if (git_repository_open_ext(&r, wt, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		error = sl_err_set(err, SL_ERROR, "cannot open the worktree '%s'", wt);
		goto out;
	}
	if ((m.verify = stale != NULL)) {
		struct stat st;
		char *index = sl_path_join(git_repository_path(r), "index");
		if (!index || lstat(index, &st) < 0)
			m.stale = 1;
		else
			m.index_mtime = st.st_mtim;
		free(index);
	}
	if (chmod(wt, m.dir) < 0)
		error = sl_err_sys(err, errno, "cannot set the mode of '%s'", wt);
	if (!error && !m.stale)
		error = fix_all(&m, r, err);
	if (stale)
		*stale = m.stale;
out:
	close(m.fd);
	git_repository_free(r);
	return error;
}

/*
 * Only the paths between the slot's clean commit and the run's start: 1
 * when done and every tracked file checked to be its entry's (*n paths
 * written), 0 when the full reset must follow (no mark, or something does
 * not hold).
 */
static int reset_quick(const struct pool *p, const char *wt, const char *run, int keep_ignored,
		       long *n)
{
	struct sl_err e = SL_ERR_INIT;
	git_oid from;
	int stale = 1;

	if (clean_at(p, run, &from, &e) != 1 || reset_between(wt, &from, keep_ignored, n, &e) != 0 ||
	    as_checked_out(wt, &stale, &e) != 0 || stale)
		sl_log(SL_LOG_DEBUG, "run %s: the pooled worktree is reset in full%s%s", run,
		       e.msg[0] ? ": " : "", e.msg);
	sl_err_clear(&e);
	return !stale;
}

/* Outside the lock (the worktree is the run's): index, files, untracked files; then no mark. */
static int reset_taken(const struct pool *p, const char *wt, const char *run, int keep_ignored,
		       long *rewritten, struct sl_err *err)
{
	char *mark = entry(p, run, RESET_MARK);
	long n = 0;
	int error;

	if (!mark)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if ((error = clean_index(p, wt, run, err)) != 0)
		goto out;
	sl_fault("pool.take_before_reset");
	*rewritten = -1;
	if (reset_quick(p, wt, run, keep_ignored, &n)) {
		*rewritten = n;
		goto done;
	}
	if ((error = reset_files(wt, keep_ignored, err)) != 0) {
		/* a builder's read-only directory: made writable, then once more */
		sl_err_clear(err);
		if ((error = worktree__make_writable(wt, err)) == 0)
			error = reset_files(wt, keep_ignored, err);
	}
	/*
	 * No new settings digest: the slot's, kept through strip_entry(), was
	 * checked equal to the settings of now when it was taken (same_settings()).
	 */
	if (!error)
		error = as_checked_out(wt, NULL, err);
done:
	sl_fault(error ? NULL : "pool.take_recycled");
	if (!error)
		error = sl_unlink(mark, err);
out:
	free(mark);
	return error;
}

/* The newest whole, unlocked slot; NULL when there is none. */
static char *newest_slot(const struct pool *p, struct sl_err *err)
{
	sl_strv slots = NULL;
	char *pick = NULL;
	size_t n;
	int locked;

	if (scan(p->root, "", &slots, err) != 0)
		return NULL;
	for (n = slots ? sl_strv_len(slots) : 0; n > 0 && !pick; n--)
		if (slot_sound(p, slots[n - 1], &locked) && !locked)
			pick = strdup(slots[n - 1]);
	sl_strv_free(slots);
	return pick;
}

/* The entry of `run` says its worktree came from the pool and is not reset yet. */
static int mark_taken(const struct pool *p, const char *run, struct sl_err *err)
{
	char *mark = entry(p, run, RESET_MARK);
	int error = mark ? sl_write_file_atomic(mark, "", 0, err) :
			   sl_err_set(err, SL_ERROR, "out of memory");

	free(mark);
	return error;
}

/* Move slot `slot` to `dst` as the worktree of `run` (entry renamed, pointers rewritten). */
static int move_in(const struct pool *p, const char *slot, const char *run, const char *dst,
		   struct sl_err *err)
{
	char *src = pool_path(p->root, slot, NULL), *parent = NULL, *cut;
	int error;

	if (!src || !(parent = strdup(dst))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((cut = strrchr(parent, '/')))
		*cut = '\0';
	if ((error = sl_mkdir_p(parent, err)) != 0 || (error = move(src, dst, err)) != 0)
		goto out;
	sl_fault("pool.take_moved");
	if ((error = move_entry(p, slot, run, err)) == 0 &&
	    (error = mark_taken(p, run, err)) == 0)
		error = relink(p, dst, run, err);
	sl_fault(error ? NULL : "pool.take_relinked");
out:
	free(src);
	free(parent);
	return error;
}

/* After a failed recycling the worktree is nobody's: it goes, entry and directory. */
static void discard_taken(const struct pool *p, const char *run, const char *dst)
{
	char *ent = entry(p, run, NULL);
	struct sl_err e = SL_ERR_INIT;

	if (ent)
		sl_rm_rf(ent, &e);
	sl_err_clear(&e);
	worktree__make_writable(dst, &e);
	sl_err_clear(&e);
	sl_rm_rf(dst, &e);
	free(ent);
}

/*
 * The digest of what decides a checkout's bytes besides the commit: the
 * repository's info/attributes, the attributes file the config names, and
 * the config's core.autocrlf, core.eol, core.safecrlf and filter.* (a
 * smudge filter). A file that a checkout wrote under other settings is not
 * what a fresh checkout writes now, and git reset, going by the index,
 * would not see it.
 */
/* The bytes of the file at `path`, if there is one, added to `b`. */
static int add_file(struct sl_buf *b, const char *path)
{
	struct sl_buf f = SL_BUF_INIT;
	struct sl_err e = SL_ERR_INIT;
	int rc = 0;

	sl_buf_init(&f, (size_t)1 << 22);
	if (sl_path_exists(path))
		rc = sl_read_file(&f, path, (size_t)1 << 22, &e) != 0 ? -1 :
		     sl_buf_add(b, f.ptr ? f.ptr : "", f.len);
	sl_buf_release(&f);
	return rc;
}

/* A config key (lower case, as libgit2 gives them) that changes what a checkout writes. */
static int checkout_key(const char *k)
{
	return !strcmp(k, "core.autocrlf") || !strcmp(k, "core.eol") ||
	       !strcmp(k, "core.safecrlf") || !strcmp(k, "core.attributesfile") ||
	       !strncmp(k, "filter.", 7);
}

static int checkout_settings(git_repository *repo, char out[SL_SHA256_HEX_LEN + 1])
{
	struct sl_buf b = SL_BUF_INIT;
	git_config *cfg = NULL;
	git_config_iterator *it = NULL;
	git_config_entry *ce;
	git_buf path = GIT_BUF_INIT;
	char *info = sl_path_fmt("%s/info/attributes", git_repository_commondir(repo));
	int error = -1;

	sl_buf_init(&b, (size_t)1 << 24);
	/* no glob iterator: libgit2 1.5 leaks pcre2 match data on every regex match */
	if (!info || git_repository_config_snapshot(&cfg, repo) < 0 ||
	    git_config_iterator_new(&it, cfg) < 0)
		goto out;
	while (git_config_next(&ce, it) == 0)
		if (checkout_key(ce->name) &&
		    sl_buf_addf(&b, "%s=%s\n", ce->name, ce->value ? ce->value : "") < 0)
			goto out;
	if (sl_buf_puts(&b, "info/attributes:\n") < 0 || add_file(&b, info) < 0)
		goto out;
	if (git_config_get_path(&path, cfg, "core.attributesFile") == 0 && path.ptr &&
	    (sl_buf_puts(&b, "core.attributesFile:\n") < 0 || add_file(&b, path.ptr) < 0))
		goto out;
	sl_sha256_hex(out, b.ptr ? b.ptr : "", b.len);
	error = 0;
out:
	git_buf_dispose(&path);
	git_config_iterator_free(it);
	git_config_free(cfg);
	sl_buf_release(&b);
	free(info);
	return error;
}

int worktree__checkout_settings_record(git_repository *repo, const char *entry_dir)
{
	char digest[SL_SHA256_HEX_LEN + 1], *path = sl_path_join(entry_dir, CHECKOUT_MARK);
	struct sl_err e = SL_ERR_INIT;
	int error = -1;

	if (path && checkout_settings(repo, digest) == 0)
		error = sl_write_file_atomic(path, digest, strlen(digest), &e);
	free(path);
	return error;
}

/* Were slot `slot`'s files written under the checkout settings of now? */
static int same_settings(const struct pool *p, const char *slot)
{
	char digest[SL_SHA256_HEX_LEN + 1], *path = entry(p, slot, CHECKOUT_MARK);
	char *line = path ? worktree__read_line(path) : NULL;
	int same = line && checkout_settings(p->repo, digest) == 0 && !strcmp(line, digest);

	free(path);
	free(line);
	return same;
}

/* Do slot `slot` and the run's start (its branch's tip, or the base) have the same .gitattributes? */
static int same_attributes(const struct pool *p, const char *slot, const char *branch,
			   const char *base_hex)
{
	char *head = entry(p, slot, "HEAD"), *line = head ? worktree__read_line(head) : NULL;
	git_reference *ref = NULL;
	git_oid from, to;
	int same = 0;

	if (git_branch_lookup(&ref, p->repo, branch, GIT_BRANCH_LOCAL) == 0 &&
	    git_reference_target(ref))
		git_oid_cpy(&to, git_reference_target(ref));
	else if (!base_hex || git_oid_fromstrn(&to, base_hex, strlen(base_hex)) < 0)
		goto out;
	if (line && git_oid_fromstrn(&from, line, strlen(line)) == 0)
		same = !attributes_changed(p, &from, &to);
out:
	git_reference_free(ref);
	free(head);
	free(line);
	return same;
}

static int take(const struct pool *p, const char *run, const char *branch, const char *base_hex,
		char **slot_out, struct sl_err *err)
{
	char *dst = run_wt_path(p->root, run), *ent = entry(p, run, NULL), *slot = NULL;
	int error;

	if (!dst || !ent) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	/* the run has a worktree, whole or in part: worktree_create() knows what to do */
	if ((error = recover(p, err)) != 0 || sl_path_exists(dst) || sl_path_exists(ent))
		goto out;
	if (!(slot = newest_slot(p, err))) {
		sl_err_clear(err); /* none: the run gets a fresh one */
		goto out;
	}
	if (!same_attributes(p, slot, branch, base_hex) || !same_settings(p, slot)) {
		/* its files' line endings or filters may differ from a fresh checkout's */
		error = remove_slot(p, slot, err);
		free(slot);
		slot = NULL;
		goto out;
	}
	if ((error = write_intent(p->root, slot, ".take", run, err)) != 0)
		goto out;
	sl_fault("pool.take_intent");
	if ((error = move_in(p, slot, run, dst, err)) != 0) {
		struct sl_err e = SL_ERR_INIT;
		if (undo_take(p, slot, run, &e) == 0)
			drop_intent(p->root, slot, ".take");
		goto out;
	}
	if ((error = adopt(p, run, branch, base_hex, err)) != 0)
		discard_taken(p, run, dst);
	sl_fault(error ? NULL : "pool.take_adopted");
	drop_intent(p->root, slot, ".take");
	if (!error && slot_out) {
		*slot_out = slot;
		slot = NULL;
	}
out:
	free(dst);
	free(ent);
	free(slot);
	return error;
}

int worktree_pool_take(const char *repo_root, const char *run, const char *branch,
		       const char *base_hex, char **slot_out, struct sl_err *err)
{
	struct pool p;
	int error;

	if (slot_out)
		*slot_out = NULL;
	if (!worktree_name_valid(run) || !worktree_branch_name_valid(branch))
		return sl_err_set(err, SL_EINVALID, "'%s' cannot take a pooled worktree", run);
	if ((error = pool_open(&p, repo_root, err)) != 0)
		return error;
	error = take(&p, run, branch, base_hex, slot_out, err);
	pool_close(&p);
	return error;
}

int worktree_pool_pending(const char *gitdir, const char *run)
{
	char *mark;
	int pending;

	/* every preparing step asks: a path, no repository opened */
	if (!worktree_name_valid(run) || !(mark = worktree_entry_path(gitdir, run, RESET_MARK)))
		return 0;
	pending = sl_path_exists(mark);
	free(mark);
	return pending;
}

int worktree_pool_reset(const char *repo_root, const char *run, int keep_ignored,
			long *rewritten, struct sl_err *err)
{
	struct pool p;
	char *wt = NULL, *mark = NULL;
	long n = -1;
	int error;

	if (!worktree_name_valid(run))
		return sl_err_set(err, SL_EINVALID, "'%s' is not a run", run);
	if ((error = pool_open(&p, repo_root, err)) != 0)
		return error;
	if (!(wt = run_wt_path(repo_root, run)) || !(mark = entry(&p, run, RESET_MARK)))
		error = sl_err_set(err, SL_ERROR, "out of memory");
	else if (sl_path_exists(mark) &&
		 (error = reset_taken(&p, wt, run, keep_ignored, &n, err)) != 0)
		discard_taken(&p, run, wt);
	if (rewritten)
		*rewritten = n;
	free(wt);
	free(mark);
	pool_close(&p);
	return error;
}

/* A new slot name: the time, so that names sort oldest first, and the pid. */
static int new_slot_name(const struct pool *p, char *out, size_t n, struct sl_err *err)
{
	char *path;
	int i, taken;

	for (i = 0; i < 1000; i++) {
		if (sl_fmt_fixed(out, n, SLOT_PREFIX "%013lld-%ld-%d", (long long)sl_now_ms(),
				 (long)getpid(), i) < 0)
			return sl_err_set(err, SL_ERROR, "slot name too long");
		path = pool_path(p->root, out, NULL);
		taken = !path || sl_path_exists(path);
		free(path);
		if (!taken)
			return 0;
	}
	return sl_err_set(err, SL_EEXISTS, "no free slot name in the pool");
}

/* Detach, delete the branch, move: under an intent that recover() finishes. */
static int move_out(const struct pool *p, const char *run, const char *src, int delete,
		    int *deleted, struct sl_err *err)
{
	char slot[SLOT_NAME_MAX], *dst = NULL, *branch = worktree__wt_branch(p->repo, run);
	int error;

	if ((error = new_slot_name(p, slot, sizeof(slot), err)) != 0 ||
	    (error = detach_head(p, run, err)) != 0 ||
	    (delete && branch && (error = worktree__delete_branch(p->repo, branch, err)) < 0))
		goto out;
	if (deleted && delete && branch)
		*deleted = error == 1;
	error = 0;
	if (!(dst = pool_path(p->root, slot, NULL))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = write_intent(p->root, slot, ".put", run, err)) != 0)
		goto out;
	sl_fault("pool.put_intent");
	if ((error = move(src, dst, err)) == 0) {
		sl_fault("pool.put_moved");
		if ((error = move_entry(p, run, slot, err)) == 0)
			error = relink(p, dst, slot, err);
	}
	if (error) {
		struct sl_err e = SL_ERR_INIT;
		if (finish_put(p, slot, run, &e) != 0)
			goto out; /* the intent stays for the next recovery */
	}
	drop_intent(p->root, slot, ".put");
out:
	free(branch);
	free(dst);
	return error;
}

/* `link` (a /proc symlink's target) is `dir` or under it. */
static int under(const char *link, const char *dir, size_t n)
{
	return !strncmp(link, dir, n) && (link[n] == '\0' || link[n] == '/');
}

/* Has process `pid` its working directory or an open file under `dir`? */
static int pid_uses(const char *pid, const char *dir, size_t n)
{
	char path[320], link[PATH_MAX];
	struct dirent *d;
	DIR *fds;
	ssize_t len;
	int uses = 0;

	if (sl_fmt_fixed(path, sizeof(path), "/proc/%s/cwd", pid) < 0)
		return 0;
	if ((len = readlink(path, link, sizeof(link) - 1)) > 0) {
		link[len] = '\0';
		if (under(link, dir, n))
			return 1;
	}
	if (sl_fmt_fixed(path, sizeof(path), "/proc/%s/fd", pid) < 0 || !(fds = opendir(path)))
		return 0;
	while (!uses && (d = readdir(fds))) {
		char fd[640];
		if (d->d_name[0] == '.' ||
		    sl_fmt_fixed(fd, sizeof(fd), "/proc/%s/fd/%s", pid, d->d_name) < 0)
			continue;
		if ((len = readlink(fd, link, sizeof(link) - 1)) > 0) {
			link[len] = '\0';
			uses = under(link, dir, n);
		}
	}
	closedir(fds);
	return uses;
}

/*
 * Does a process still work in the worktree `dir` (a builder's process that
 * left its group, a person's shell or editor)? Pooled, the worktree would
 * move with it into the next run, which would see its writes. Linux's /proc
 * tells; where it cannot be read, no.
 */
static int in_use(const char *dir)
{
	char real[PATH_MAX], self[32];
	struct dirent *d;
	DIR *proc;
	size_t n;
	int used = 0;

	if (!realpath(dir, real) || !(proc = opendir("/proc")))
		return 0;
	n = strlen(real);
	snprintf(self, sizeof(self), "%ld", (long)getpid());
	while (!used && (d = readdir(proc)))
		if (d->d_name[0] >= '1' && d->d_name[0] <= '9' && strcmp(d->d_name, self))
			used = pid_uses(d->d_name, real, n);
	closedir(proc);
	return used;
}

static int put(const struct pool *p, const char *run, size_t max, const char *const *excluded,
	       int force, int delete, int *pooled, int *deleted, struct sl_err *err)
{
	char *src = run_wt_path(p->root, run), *lock = entry(p, run, "locked");
	sl_strv slots = NULL;
	int error, spotless = 0;

	if (!src || !lock) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = recover(p, err)) != 0 || (error = scan(p->root, "", &slots, err)) != 0)
		goto out;
	/* full, or not a plain run worktree: worktree_remove() does what it always did */
	if ((slots && sl_strv_len(slots) >= max) || !linked(p, src, run) || sl_path_exists(lock) ||
	    in_use(src))
		goto out;
	if (!force && (error = worktree__refuse_dirty(src, excluded, &spotless, err)) != 0)
		goto out;
	if ((error = mark_clean(p, run, spotless, err)) != 0)
		goto out;
	if ((error = move_out(p, run, src, delete, deleted, err)) == 0)
		*pooled = 1;
out:
	sl_strv_free(slots);
	free(src);
	free(lock);
	return error;
}

int worktree_pool_put(const char *repo_root, const char *run, size_t max,
		      const char *const *excluded, int force, int delete_branch, int *pooled,
		      int *branch_deleted, struct sl_err *err)
{
	struct pool p;
	int error;

	*pooled = 0;
	if (branch_deleted)
		*branch_deleted = 0;
	if (!max || !worktree_name_valid(run))
		return 0;
	if ((error = pool_open(&p, repo_root, err)) != 0)
		return error;
	error = put(&p, run, max, excluded, force, delete_branch, pooled, branch_deleted, err);
	pool_close(&p);
	return error;
}

int worktree_pool_trim(const char *repo_root, size_t keep, size_t *removed, size_t *locked_left,
		       struct sl_err *err)
{
	struct pool p;
	sl_strv slots = NULL;
	size_t i, n;
	int error, locked;

	*removed = *locked_left = 0;
	if ((error = pool_open(&p, repo_root, err)) != 0)
		return error;
	if ((error = recover(&p, err)) != 0 || (error = scan(repo_root, "", &slots, err)) != 0)
		goto out;
	n = slots ? sl_strv_len(slots) : 0;
	/* oldest first: the newest `keep` stay */
	for (i = 0; !error && i < n && n - i > keep; i++) {
		slot_sound(&p, slots[i], &locked);
		if (locked)
			(*locked_left)++;
		else if ((error = remove_slot(&p, slots[i], err)) == 0)
			(*removed)++;
	}
out:
	sl_strv_free(slots);
	pool_close(&p);
	return error;
}

int worktree_pool_list(const char *repo_root, struct worktree_pool_slot **out, size_t *n,
		       struct sl_err *err)
{
	struct pool p;
	sl_strv slots = NULL;
	size_t i, k;
	int error;

	*out = NULL;
	*n = 0;
	if ((error = pool_open(&p, repo_root, err)) != 0)
		return error;
	if ((error = scan(repo_root, "", &slots, err)) != 0 || !slots)
		goto out;
	k = sl_strv_len(slots);
	if (!(*out = calloc(k, sizeof(**out)))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	for (i = 0; i < k; i++) {
		struct worktree_pool_slot *s = &(*out)[(*n)++];
		char *head = entry(&p, slots[i], "HEAD"), *line = head ? worktree__read_line(head) : NULL;
		s->name = strdup(slots[i]);
		s->path = pool_path(repo_root, slots[i], NULL);
		s->sound = slot_sound(&p, slots[i], &s->locked);
		if (line && strlen(line) == GIT_OID_HEXSZ)
			memcpy(s->commit, line, GIT_OID_HEXSZ + 1);
		s->since_ms = strtoll(slots[i] + sizeof(SLOT_PREFIX) - 1, NULL, 10);
		free(head);
		free(line);
	}
out:
	sl_strv_free(slots);
	pool_close(&p);
	return error;
}

void worktree_pool_list_release(struct worktree_pool_slot *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++) {
		free(v[i].name);
		free(v[i].path);
	}
	free(v);
}

void worktree_pool_tidy(const char *repo_root, int pool)
{
	struct sl_err err = SL_ERR_INIT;
	size_t removed = 0, locked = 0;

	if (worktree_pool_recover(repo_root, &err) != 0)
		sl_log(SL_LOG_WARN, "the worktree pool could not be checked: %s", err.msg);
	sl_err_clear(&err);
	if (worktree_pool_trim(repo_root, (size_t)pool, &removed, &locked, &err) != 0)
		sl_log(SL_LOG_WARN, "the worktree pool could not be trimmed: %s", err.msg);
	else if (removed)
		sl_log(SL_LOG_INFO, "removed %zu worktree%s from the pool (worktree.pool: %d)",
		       removed, removed == 1 ? "" : "s", pool);
}
