/*
 * Recovery of a checked-out target after a crash in the middle of a merge:
 * the journal (merge_commit_opts.journal) says which trees the checkout was
 * moving between; what a dead process left half written is put in line
 * with the ref, what a person wrote is left alone.
 */
#include "merge/merge_int.h"
#include "core/fs.h"
#include "core/lock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

/* The blob at `path` in `tree` (NULL when the path is absent or not a regular file). */
static git_blob *blob_at(git_repository *r, const git_oid *tree_id, const char *path)
{
	git_tree *tree = NULL;
	git_tree_entry *e = NULL;
	git_blob *b = NULL;

	if (git_tree_lookup(&tree, r, tree_id) == 0 && git_tree_entry_bypath(&e, tree, path) == 0 &&
	    git_tree_entry_type(e) == GIT_OBJECT_BLOB &&
	    git_tree_entry_filemode(e) != GIT_FILEMODE_LINK)
		git_blob_lookup(&b, r, git_tree_entry_id(e));
	git_tree_entry_free(e);
	git_tree_free(tree);
	return b;
}

/* 1 when a parent folder of `path` in the work tree `root` is a symbolic link. */
static int link_above(const char *root, const char *path)
{
	char buf[PATH_MAX];
	const char *p;
	struct stat st;

	for (p = strchr(path, '/'); p; p = strchr(p + 1, '/')) {
		if (snprintf(buf, sizeof(buf), "%s%.*s", root, (int)(p - path), path) >= (int)sizeof(buf))
			return 1;
		if (lstat(buf, &st) < 0)
			return 0;
		if (!S_ISDIR(st.st_mode))
			return S_ISLNK(st.st_mode);
	}
	return 0;
}

/*
 * 1 when the work tree's file at `path` is something the merge's checkout
 * made: missing where the merge rewrote or removed it, or the new content
 * whole or cut off (a prefix of it). The old content is in line already
 * (0); anything else is a person's (0).
 */
static int written_by_merge(git_repository *w, const git_oid *old_tree, const git_oid *new_tree,
			    const char *path)
{
	git_blob *old = blob_at(w, old_tree, path), *new = blob_at(w, new_tree, path);
	struct sl_buf data = SL_BUF_INIT;
	struct sl_err ignored = SL_ERR_INIT;
	char *full = sl_path_join(git_repository_workdir(w), path);
	struct stat st;
	int ours = 0;

	if (!full || link_above(git_repository_workdir(w), path))
		goto out; /* nothing is written through a link: the user's */
	if (lstat(full, &st) < 0) {
		ours = old != NULL; /* gone: the merge removed (or was rewriting) it */
		goto out;
	}
	if (!S_ISREG(st.st_mode) || sl_read_file(&data, full, 0, &ignored) != 0)
		goto out;
	if (old && data.len == git_blob_rawsize(old) &&
	    !memcmp(sl_buf_cstr(&data), git_blob_rawcontent(old), data.len))
		goto out; /* untouched */
	ours = new && data.len <= git_blob_rawsize(new) &&
	       !memcmp(sl_buf_cstr(&data), git_blob_rawcontent(new), data.len);
out:
	sl_buf_release(&data);
	free(full);
	git_blob_free(old);
	git_blob_free(new);
	return ours;
}

static int read_journal(const char *path, char *owner, size_t n, git_oid *old_tree,
			git_oid *new_tree)
{
	char o[64] = "", a[64] = "", b[64] = "";
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%63s %63s %63s", o, a, b) == 3 && !git_oid_fromstr(old_tree, a) &&
	     !git_oid_fromstr(new_tree, b);
	fclose(f);
	snprintf(owner, n, "%s", o);
	return ok ? 0 : -1;
}

/* Force the `ours` paths to what `tree` holds (files and index). */
static int restore(git_repository *w, const git_oid *tree_id, struct merge_paths *ours)
{
	git_checkout_options co;
	git_tree *tree = NULL;
	int error;

	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_REMOVE_UNTRACKED |
			       GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH;
	co.paths.strings = ours->v;
	co.paths.count = ours->n;
	if ((error = git_tree_lookup(&tree, w, tree_id)) == 0)
		error = git_checkout_tree(w, (const git_object *)tree, &co);
	git_tree_free(tree);
	return error;
}

/* Append one line to the journal, synced, never through a link planted at its name. */
static int journal_append(const char *journal, const char *line, size_t n, struct sl_err *err)
{
	int jfd = open(journal, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW), ok;

	if (jfd < 0)
		return sl_err_sys(err, errno, "cannot open the merge journal '%s'", journal);
	ok = write(jfd, line, n) == (ssize_t)n && fsync(jfd) == 0;
	close(jfd);
	return ok ? 0 : sl_err_sys(err, errno, "cannot write the merge journal '%s'", journal);
}

int merge__journal_lock(const char *journal, const char *path, int fd, struct sl_err *err)
{
	char line[PATH_MAX + 128];
	struct stat st;
	int n;

	if (!journal)
		return 0;
	if (fstat(fd, &st) < 0)
		return sl_err_sys(err, errno, "cannot stat '%s'", path);
	n = snprintf(line, sizeof(line), "lock %llu %llu %lld %ld %s\n",
		     (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
		     (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec, path);
	if (n < 0 || (size_t)n >= sizeof(line) || strchr(path, '\n'))
		return sl_err_set(err, SL_EINVALID, "cannot record the lock '%s' in the journal", path);
	return journal_append(journal, line, (size_t)n, err);
}

int merge__journal_write_mark(const char *journal, struct sl_err *err)
{
	return journal ? journal_append(journal, "write\n", 6, err) : 0;
}

/* 1 when the journal's merge came to write files in the checkout (a "write" line). */
static int journal_wrote(const char *journal)
{
	char line[PATH_MAX + 128];
	FILE *f = fopen(journal, "r");
	int yes = 0;

	if (!f)
		return 1; /* unreadable: assume the worst, as before */
	while (!yes && fgets(line, sizeof(line), f))
		yes = !strcmp(line, "write\n");
	fclose(f);
	return yes;
}

int merge_journal_release_locks(const char *journal, int *left)
{
	char line[PATH_MAX + 128], path[PATH_MAX], side[PATH_MAX + 8];
	unsigned long long dev, ino;
	int k;
	long long sec;
	long nsec;
	struct stat st;
	FILE *f = fopen(journal, "r");

	*left = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "lock ", 5) ||
		    sscanf(line + 5, "%llu %llu %lld %ld %4095[^\n]", &dev, &ino, &sec, &nsec, path) != 5 ||
		    strlen(path) < 11 || strcmp(path + strlen(path) - 11, "/index.lock"))
			continue; /* only ever an index.lock */
		/* the lock, and the side file it is made from (checkout.c): only the recorded file */
		for (k = 0; k < 2; k++) {
			if (k && (size_t)snprintf(side, sizeof(side), "%s.sluice", path) >= sizeof(side))
				break;
			if (lstat(k ? side : path, &st) < 0 || !S_ISREG(st.st_mode) ||
			    (unsigned long long)st.st_dev != dev || (unsigned long long)st.st_ino != ino ||
			    (long long)st.st_mtim.tv_sec != sec || (long)st.st_mtim.tv_nsec != nsec)
				continue; /* gone, or another file: not the dead merge's */
			if (unlink(k ? side : path) < 0)
				(*left)++;
		}
	}
	fclose(f);
	return 0;
}

int merge_journal_dead(const char *journal)
{
	git_oid a, b;
	char owner[64];

	return read_journal(journal, owner, sizeof(owner), &a, &b) == 0 && !sl_owner_alive(owner);
}

/*
 * Put the files of the checkout `w` that the dead merge from old_tree to
 * new_tree wrote back as the target's tree `tip_tree` has them (restore()),
 * unless git holds its index lock. *recovered: 1 when there were any.
 */
static int tidy_checkout(git_repository *w, const git_oid *old_tree, const git_oid *new_tree,
			 const git_oid *tip_tree, int *recovered, struct sl_err *err)
{
	struct merge_paths changed = MERGE_PATHS_INIT, ours = MERGE_PATHS_INIT;
	char *lock = NULL;
	size_t i;
	int rc, error = 0;

	if ((rc = merge__changed_paths(w, old_tree, new_tree, &ours, &changed)) < 0) {
		error = sl_err_git(err, rc, "cannot list the paths of the interrupted merge");
		goto out;
	}
	for (i = 0; i < changed.n; i++)
		if (written_by_merge(w, old_tree, new_tree, changed.v[i]) &&
		    (error = merge_paths_add(&ours, changed.v[i])) != 0)
			goto out;
	if (ours.n && (lock = sl_path_join(git_repository_path(w), "index.lock")) &&
	    sl_path_exists(lock)) {
		error = sl_err_set(err, SL_ETRANSIENT, "an interrupted merge left files in '%s' to put "
				   "back in line, and its index is locked (%s: is git running there?); "
				   "recovered on a later tick", git_repository_workdir(w), lock);
		goto out;
	}
	if (ours.n && (rc = restore(w, tip_tree, &ours)) < 0) {
		error = sl_err_git(err, rc, "cannot put '%s' back in order after an interrupted "
				   "merge; run 'git status' there",
				   git_repository_workdir(w));
		goto out;
	}
	*recovered = ours.n > 0;
out:
	free(lock);
	merge_paths_release(&changed);
	merge_paths_release(&ours);
	return error;
}

int merge_recover_checkout(const char *repo_path, const char *target, const char *journal,
			   int *recovered, struct sl_err *err)
{
	git_repository *repo = NULL, *w = NULL;
	git_commit *tip = NULL;
	git_oid old_tree, new_tree, tip_id;
	char owner[64], refname[512];
	int rc, error = 0;

	*recovered = 0;
	if (read_journal(journal, owner, sizeof(owner), &old_tree, &new_tree) < 0) {
		unlink(journal); /* absent, or cut off before it was whole: nothing was touched */
		return 0;
	}
	if (sl_owner_alive(owner))
		return 0; /* that merge is still going on */
	if (snprintf(refname, sizeof(refname), "%s%s", strncmp(target, "refs/", 5) ? "refs/heads/" : "",
		     target) >= (int)sizeof(refname))
		return sl_err_set(err, SL_EINVALID, "the target name is too long to recover an "
				  "interrupted merge of it"); /* a cut name is another branch */
	if ((rc = git_repository_open(&repo, repo_path)) < 0 ||
	    (rc = git_reference_name_to_id(&tip_id, repo, refname)) < 0 ||
	    (rc = git_commit_lookup(&tip, repo, &tip_id)) < 0) {
		error = sl_err_git(err, rc, "cannot read '%s' to recover an interrupted merge",
				   refname);
		goto out;
	}
	if ((error = merge__find_checkout(&w, repo, refname, err)) != 0)
		goto out; /* busy (a rebase, a missing work tree): recovered later */
	/* not checked out anywhere, or no file written: nothing to put in order */
	if (w && journal_wrote(journal) &&
	    (error = tidy_checkout(w, &old_tree, &new_tree, git_commit_tree_id(tip), recovered,
				   err)) != 0)
		goto out;
	unlink(journal);
out:
	git_commit_free(tip);
	git_repository_free(w);
	git_repository_free(repo);
	return error;
}
