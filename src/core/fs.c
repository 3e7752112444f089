#include "core/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sl_mkdir_p(const char *path, struct sl_err *err)
{
	char *tmp = strdup(path), *p;
	int error = 0;

	if (!tmp)
		return sl_err_set(err, SL_ERROR, "out of memory");
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

int sl_read_file(struct sl_buf *out, const char *path, size_t max, struct sl_err *err)
{
	char chunk[65536];
	struct stat st;
	ssize_t n;
	int fd, error = 0;

	/* O_NONBLOCK: a FIFO planted where a file should be must not hang us */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return sl_err_sys(err, errno, "cannot open '%s'", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		error = sl_err_set(err, SL_EINVALID, "'%s' is not a regular file", path);
		goto out;
	}
	if (max && (size_t)st.st_size > max) {
		error = sl_err_set(err, SL_ETOOBIG, "'%s' is %lld bytes, over the limit of %zu",
				   path, (long long)st.st_size, max);
		goto out;
	}
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			error = sl_err_sys(err, errno, "cannot read '%s'", path);
			goto out;
		}
		if (max && out->len + (size_t)n > max) {
			error = sl_err_set(err, SL_ETOOBIG, "'%s' is over the limit of %zu bytes",
					   path, max);
			goto out;
		}
		if ((error = sl_buf_add(out, chunk, (size_t)n)) != 0) {
			sl_err_set(err, error, "'%s' does not fit in memory", path);
			goto out;
		}
	}
out:
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

int sl_write_file(const char *path, const void *data, size_t len, struct sl_err *err)
{
	struct stat st;
	int fd, error = 0;

	/* replace a symlink (or FIFO) at path rather than write through it */
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);

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
	int fd = -1, dfd = -1, error = 0;

	if (asprintf(&tmp, "%s.tmp.%ld", path, (long)getpid()) < 0) {
		tmp = NULL;
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	/* a fresh file: never through whatever was planted at the temporary name */
	if ((unlink(tmp) < 0 && errno != ENOENT) ||
	    (fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666)) < 0) {
		error = sl_err_sys(err, errno, "cannot write '%s'", tmp);
		goto out;
	}
	if (write_all(fd, data, len) < 0 || fsync(fd) < 0) {
		error = sl_err_sys(err, errno, "cannot write '%s'", tmp);
		goto out;
	}
	close(fd);
	fd = -1;
	if (rename(tmp, path) < 0) {
		error = sl_err_sys(err, errno, "cannot rename '%s' to '%s'", tmp, path);
		goto out;
	}
	if ((dcopy = strdup(path)) && (dfd = open(dirname(dcopy), O_RDONLY | O_DIRECTORY)) >= 0)
		fsync(dfd);
out:
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	if (error && tmp)
		unlink(tmp);
	free(tmp);
	free(dcopy);
	return error;
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

int sl_rm_rf(const char *path, struct sl_err *err)
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
		error = sl_rm_rf(child, err);
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
