#include "core/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *guarded_rel(const char *path);
static int open_dir_guarded(const char *path, size_t len, int create, int *fd,
			    struct sl_err *err);

int sl_mkdir_p(const char *path, struct sl_err *err)
{
	char *tmp = strdup(path), *p;
	int error = 0;

	if (!tmp)
		return sl_err_set(err, SL_ERROR, "out of memory");
	if (guarded_rel(path)) { /* no link anywhere below the guarded dir */
		int fd = -1;
		free(tmp);
		if ((error = open_dir_guarded(path, strlen(path), 1, &fd, err)) == 0)
			close(fd);
		return error;
	}
	for (p = tmp + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(tmp, 0777) < 0 && errno != EEXIST) {
			error = sl_err_sys(err, errno, "cannot create directory '%s'", tmp);
			break;
		}
		*p = c;
		if (!c)
			break;
	}
	if (!error && !sl_is_dir(path))
		error = sl_err_set(err, SL_EEXISTS, "'%s' exists and is not a directory", path);
	free(tmp);
	return error;
}

int sl_read_fd(struct sl_buf *out, int fd, const char *path, size_t max, struct sl_err *err)
{
	char chunk[65536];
	struct stat st;
	ssize_t n;
	int error;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return sl_err_set(err, SL_EINVALID, "'%s' is not a regular file", path);
	if (max && (size_t)st.st_size > max)
		return sl_err_set(err, SL_ETOOBIG, "'%s' is %lld bytes, over the limit of %zu",
				  path, (long long)st.st_size, max);
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return sl_err_sys(err, errno, "cannot read '%s'", path);
		}
		if (max && out->len + (size_t)n > max)
			return sl_err_set(err, SL_ETOOBIG, "'%s' is over the limit of %zu bytes",
					  path, max);
		if ((error = sl_buf_add(out, chunk, (size_t)n)) != 0)
			return sl_err_set(err, error, "'%s' does not fit in memory", path);
	}
	return 0;
}

int sl_read_file(struct sl_buf *out, const char *path, size_t max, struct sl_err *err)
{
	int fd, error;

	/* O_NONBLOCK: a FIFO planted where a file should be must not hang us */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return sl_err_sys(err, errno, "cannot open '%s'", path);
	error = sl_read_fd(out, fd, path, max, err);
	close(fd);
	return error;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* "<root>/.system" of the repository in use: nothing below it is reached through a link. */
static char *guard_dir;

int sl_fs_guard(const char *dir)
{
	char *copy = dir ? strdup(dir) : NULL;

	if (dir && !copy)
		return -1;
	free(guard_dir);
	guard_dir = copy;
	return 0;
}

/* The part of path below the guarded dir's parent (".system/..."), or NULL when not under it. */
static const char *guarded_rel(const char *path)
{
	size_t n, p;

	if (!guard_dir)
		return NULL;
	n = strlen(guard_dir);
	if (strncmp(path, guard_dir, n) || (path[n] != '/' && path[n] != '\0'))
		return NULL;
	for (p = n; p > 0 && guard_dir[p - 1] != '/'; p--)
		;
	return p ? path + p : NULL;
}

static int link_refused(struct sl_err *err, const char *path, size_t upto)
{
	return sl_err_set(err, SL_EINVALID,
			  "'%.*s' is a symbolic link or not a folder; sluice writes nothing "
			  "through a link (did a builder or gate replace it?)",
			  (int)upto, path);
}

/*
 * Open the folder `len` bytes of path name (it is under the guarded dir)
 * walking from the guarded dir's parent with O_NOFOLLOW at every step;
 * missing folders are made when `create`. *fd is the caller's, close().
 */
static int open_dir_guarded(const char *path, size_t len, int create, int *fd,
			    struct sl_err *err)
{
	const char *rel = guarded_rel(path), *p, *end = path + len;
	char comp[NAME_MAX + 1];
	int dfd, next;

	*fd = -1;
	{
		/* the parent of the guarded dir is the user's: opened as it is */
		size_t plen = (size_t)(rel - path);
		char *parent = strndup(path, plen ? plen : 1);
		if (!parent)
			return sl_err_set(err, SL_ERROR, "out of memory");
		dfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		free(parent);
		if (dfd < 0)
			return sl_err_sys(err, errno, "cannot open '%.*s'", (int)plen, path);
	}
	for (p = rel; p < end;) {
		size_t n = strcspn(p, "/");
		if (p + n > end)
			n = (size_t)(end - p);
		if (n == 0 || (n == 1 && p[0] == '.')) {
			p += n + 1;
			continue;
		}
		if (n > NAME_MAX || (n == 2 && p[0] == '.' && p[1] == '.')) {
			close(dfd);
			return sl_err_set(err, SL_EINVALID, "'%.*s' is not a path sluice writes",
					  (int)len, path);
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		next = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && create) {
			if (mkdirat(dfd, comp, 0777) < 0 && errno != EEXIST) {
				close(dfd);
				return sl_err_sys(err, errno, "cannot create directory '%.*s'",
						  (int)(p + n - path), path);
			}
			next = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (next < 0) {
			int e = errno;
			close(dfd);
			if (e == ELOOP || e == ENOTDIR)
				return link_refused(err, path, (size_t)(p + n - path));
			return sl_err_sys(err, e, "cannot open '%.*s'", (int)(p + n - path), path);
		}
		close(dfd);
		dfd = next;
		p += n + 1;
	}
	*fd = dfd;
	return 0;
}

/*
 * For a path under the guarded dir: the folder holding it, opened with no
 * link on the way (*dfd), and its last component (*base). 0 when not
 * guarded (*dfd = -1), 1 when guarded, < 0 on error.
 */
static int guarded_parent(const char *path, int create, int *dfd, const char **base,
			  struct sl_err *err)
{
	const char *slash;
	int error;

	*dfd = -1;
	if (!guarded_rel(path) || !(slash = strrchr(path, '/')) || !slash[1])
		return 0;
	*base = slash + 1;
	if ((error = open_dir_guarded(path, (size_t)(slash - path), create, dfd, err)) < 0)
		return error;
	return 1;
}

int sl_open_file(const char *path, int flags, int mode, int *fd, struct sl_err *err)
{
	const char *base = NULL;
	int dfd, g;

	*fd = -1;
	flags |= O_NOFOLLOW | O_CLOEXEC;
	if ((g = guarded_parent(path, 0, &dfd, &base, err)) < 0)
		return g;
	*fd = g ? openat(dfd, base, flags, mode) : open(path, flags, mode);
	if (*fd < 0) {
		int e = errno;
		if (dfd >= 0)
			close(dfd);
		if (e == ELOOP || (e == ENOTDIR && (flags & O_DIRECTORY)))
			return link_refused(err, path, strlen(path));
		return sl_err_sys(err, e, "cannot open '%s'", path);
	}
	if (dfd >= 0)
		close(dfd);
	return 0;
}

int sl_write_file(const char *path, const void *data, size_t len, struct sl_err *err)
{
	struct stat st;
	const char *base = NULL;
	int fd, dfd, g, error = 0;

	if ((g = guarded_parent(path, 0, &dfd, &base, err)) < 0)
		return g;
	/* replace a symlink (or FIFO) at path rather than write through it */
	if ((g ? fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) : lstat(path, &st)) == 0 &&
	    !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		g ? unlinkat(dfd, base, 0) : unlink(path);
	fd = g ? openat(dfd, base, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
			0666)
	       : open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
	if (dfd >= 0)
		close(dfd);
	if (fd < 0)
		return sl_err_sys(err, errno, "cannot write '%s'", path);
	if (write_all(fd, data, len) < 0)
		error = sl_err_sys(err, errno, "cannot write '%s'", path);
	if (close(fd) < 0 && !error)
		error = sl_err_sys(err, errno, "cannot write '%s'", path);
	return error;
}

int sl_write_file_atomic(const char *path, const void *data, size_t len, struct sl_err *err)
{
	char *tmp = NULL, *dcopy = NULL;
	const char *base = NULL, *tname = NULL;
	int fd = -1, dfd = -1, g, error = 0;

	if ((g = guarded_parent(path, 0, &dfd, &base, err)) < 0)
		return g;
	if (asprintf(&tmp, "%s.tmp.%ld", path, (long)getpid()) < 0) {
		tmp = NULL;
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	tname = g ? strrchr(tmp, '/') + 1 : tmp;
	/* a fresh file: never through whatever was planted at the temporary name */
	if (((g ? unlinkat(dfd, tname, 0) : unlink(tmp)) < 0 && errno != ENOENT) ||
	    (fd = g ? openat(dfd, tname, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666)
		    : open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666)) < 0) {
		error = sl_err_sys(err, errno, "cannot write '%s'", tmp);
		goto out;
	}
	if (write_all(fd, data, len) < 0 || fsync(fd) < 0) {
		error = sl_err_sys(err, errno, "cannot write '%s'", tmp);
		goto out;
	}
	close(fd);
	fd = -1;
	/* renameat replaces a link planted at the name; it never writes through it */
	if ((g ? renameat(dfd, tname, dfd, base) : rename(tmp, path)) < 0) {
		error = sl_err_sys(err, errno, "cannot rename '%s' to '%s'", tmp, path);
		goto out;
	}
	if (g)
		fsync(dfd);
	else if ((dcopy = strdup(path)) &&
		 (dfd = open(dirname(dcopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
		fsync(dfd);
out:
	if (fd >= 0)
		close(fd);
	if (error && tmp && tname)
		g ? unlinkat(dfd, tname, 0) : unlink(tmp);
	if (dfd >= 0)
		close(dfd);
	free(tmp);
	free(dcopy);
	return error;
}

int sl_unlink(const char *path, struct sl_err *err)
{
	const char *base = NULL;
	int dfd, g, rc, e;

	if ((g = guarded_parent(path, 0, &dfd, &base, err)) < 0)
		return g;
	rc = g ? unlinkat(dfd, base, 0) : unlink(path);
	e = errno;
	if (dfd >= 0)
		close(dfd);
	if (rc < 0 && e != ENOENT)
		return sl_err_sys(err, e, "cannot remove '%s'", path);
	return 0;
}

int sl_rename(const char *from, const char *to, struct sl_err *err)
{
	const char *base = NULL, *fs = strrchr(from, '/'), *ts = strrchr(to, '/');
	int dfd, g, rc, e;

	if ((g = guarded_parent(to, 0, &dfd, &base, err)) < 0)
		return g;
	if (g && (!fs || fs - from != ts - to || strncmp(from, to, (size_t)(fs - from)))) {
		close(dfd);
		return sl_err_set(err, SL_EINVALID, "'%s' and '%s' are not in one folder", from, to);
	}
	rc = g ? renameat(dfd, fs + 1, dfd, base) : rename(from, to);
	e = errno;
	if (dfd >= 0)
		close(dfd);
	return rc < 0 ? sl_err_sys(err, e, "cannot rename '%s' to '%s'", from, to) : 0;
}

int sl_path_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

int sl_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int rm_tree(const char *path, struct sl_err *err);

int sl_rm_rf(const char *path, struct sl_err *err)
{
	struct sl_err e = SL_ERR_INIT;
	const char *base = NULL;
	int dfd, g;

	/* below the guard, the folder holding path is reached with no link on the way */
	if ((g = guarded_parent(path, 0, &dfd, &base, &e)) < 0)
		return g == SL_ENOTFOUND ? 0 : sl_err_set(err, g, "%s", e.msg);
	if (dfd >= 0)
		close(dfd);
	return rm_tree(path, err);
}

static int rm_tree(const char *path, struct sl_err *err)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	int error = 0;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : sl_err_sys(err, errno, "cannot remove '%s'", path);
	if (!S_ISDIR(st.st_mode)) {
		if (unlink(path) < 0 && errno != ENOENT)
			return sl_err_sys(err, errno, "cannot remove '%s'", path);
		return 0;
	}
	chmod(path, st.st_mode | S_IWUSR | S_IXUSR | S_IRUSR);
	if (!(d = opendir(path)))
		return sl_err_sys(err, errno, "cannot read directory '%s'", path);
	while (!error && (de = readdir(d)) != NULL) {
		char *child;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!(child = sl_path_join(path, de->d_name))) {
			error = sl_err_set(err, SL_ERROR, "out of memory");
			break;
		}
		error = rm_tree(child, err);
		free(child);
	}
	closedir(d);
	if (!error && rmdir(path) < 0 && errno != ENOENT)
		error = sl_err_sys(err, errno, "cannot remove directory '%s'", path);
	return error;
}

char *sl_path_join(const char *a, const char *b)
{
	char *out;
	size_t la = strlen(a);

	while (la > 1 && a[la - 1] == '/')
		la--;
	while (*b == '/')
		b++;
	if (asprintf(&out, "%.*s/%s", (int)la, a, b) < 0)
		return NULL;
	return out;
}

char *sl_path_fmt(const char *fmt, ...)
{
	char *out;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&out, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : out;
}

int sl_fmt_fixed(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= n) {
		if (n)
			buf[0] = '\0';
		return SL_ETOOBIG;
	}
	return 0;
}

char *sl_path_strip_slash(const char *p)
{
	char *s = strdup(p);
	size_t n;

	if (s && (n = strlen(s)) > 1 && s[n - 1] == '/')
		s[n - 1] = '\0';
	return s;
}

int sl_path_is_safe_relative(const char *path)
{
	const char *p = path, *seg;

	if (!path || !*path || *path == '/')
		return 0;
	while (*p) {
		size_t n;
		seg = p;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - seg);
		if (n == 2 && seg[0] == '.' && seg[1] == '.')
			return 0;
		if (*p == '/')
			p++;
	}
	return 1;
}

void sl_append_file(const char *path, const void *data, size_t len)
{
	struct sl_err e = SL_ERR_INIT;
	int fd = -1;

	if (sl_open_file(path, O_WRONLY | O_APPEND | O_CREAT, 0644, &fd, &e) < 0)
		return;
	if (write(fd, data, len) < 0) {
		/* best effort: the outcome is recorded elsewhere */
	}
	close(fd);
}

char *sl_tail_file(const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	char *buf = NULL;
	size_t want, got = 0;

	if (fd < 0 || fstat(fd, &st) < 0)
		goto out;
	want = (size_t)st.st_size > max ? max : (size_t)st.st_size;
	if (!(buf = malloc(want + 1)))
		goto out;
	while (got < want) {
		ssize_t r = pread(fd, buf + got, want - got, st.st_size - (off_t)want + (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	buf[got] = '\0';
out:
	if (fd >= 0)
		close(fd);
	return buf ? buf : strdup("");
}

int sl_path_glob(const char *pat, const char *path)
{
	const char *start;

	for (; *pat; pat++, path++) {
		if (pat[0] == '*' && pat[1] == '*') { /* any run of characters, '/' too */
			while (*pat == '*')
				pat++;
			for (start = path;; path++) {
				/* "a/ (double star) /b" holds a/b too: its "/" may stand for nothing */
				if (sl_path_glob(pat, path) ||
				    (path == start && *pat == '/' && sl_path_glob(pat + 1, path)))
					return 1;
				if (!*path)
					return 0;
			}
		}
		if (*pat == '*') { /* any run within one name */
			for (;; path++) {
				if (sl_path_glob(pat + 1, path))
					return 1;
				if (!*path || *path == '/')
					return 0;
			}
		}
		if (!*path || (*pat == '?' ? *path == '/' : *pat != *path))
			return 0;
	}
	return !*path;
}
