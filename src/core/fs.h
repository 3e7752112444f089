#ifndef SL_CORE_FS_H
#define SL_CORE_FS_H
/* Files and paths. */
#include <stddef.h>
#include "core/buf.h"
#include "core/err.h"

/*
 * Guard `dir` (the repository's .system, set once by sl_repo_find; NULL
 * clears): from then on sl_mkdir_p, sl_write_file, sl_write_file_atomic and
 * sl_open_file reach a path below it only through real folders, opened one
 * by one with O_DIRECTORY|O_NOFOLLOW and written with openat/renameat
 * relative to them. A symbolic link anywhere below the guarded dir's
 * parent (.system itself, a run folder, attempts/N) is refused with
 * SL_EINVALID: a builder that replaced its run folder by a link redirects
 * nothing. A link at the last component is replaced (atomic writes) or
 * refused, never written through. -1 on out-of-memory.
 */
int sl_fs_guard(const char *dir);

/*
 * open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode) under the guard's rules;
 * *fd is the caller's, close().
 */
int sl_open_file(const char *path, int flags, int mode, int *fd, struct sl_err *err);

/*
 * unlink(path) and rename(from, to) (`to` in the folder of `from`) under the
 * guard's rules: below the guarded dir, through real folders only (a link
 * on the way is SL_EINVALID and nothing goes). unlink: 0 when absent.
 */
int sl_unlink(const char *path, struct sl_err *err);
int sl_rename(const char *from, const char *to, struct sl_err *err);

/* mkdir -p with mode 0777 & ~umask; 0 if it exists already as a directory. */
int sl_mkdir_p(const char *path, struct sl_err *err);

/*
 * Read a whole file into `out` (appending). A file larger than `max` bytes
 * (0: no limit but the buffer's) gives SL_ETOOBIG and reads nothing.
 */
int sl_read_file(struct sl_buf *out, const char *path, size_t max, struct sl_err *err);

/*
 * As sl_read_file, from `fd` (already open; not closed here): a file that is
 * not a regular file is SL_EINVALID; `path` names it in messages.
 */
int sl_read_fd(struct sl_buf *out, int fd, const char *path, size_t max, struct sl_err *err);

/*
 * Write a file atomically: a temporary file beside it, fsync, rename, fsync
 * of the directory. Readers see the old file or the new one, never half.
 */
int sl_write_file_atomic(const char *path, const void *data, size_t len, struct sl_err *err);

/* Write (create or truncate) a file plainly. */
int sl_write_file(const char *path, const void *data, size_t len, struct sl_err *err);

/* 1 if path exists (lstat), 0 if not. */
int sl_path_exists(const char *path);

/* 1 if path is a directory (stat). */
int sl_is_dir(const char *path);

/* Remove a tree (like rm -rf, without following symlinks); 0 if already gone. */
int sl_rm_rf(const char *path, struct sl_err *err);

/*
 * Join a and b with one '/' into a new string (the caller's, free()).
 * Returns NULL on out-of-memory.
 */
char *sl_path_join(const char *a, const char *b);

/*
 * A path (or a ref name) made by printf into a new string (the caller's,
 * free()): never cut. Returns NULL on out-of-memory.
 */
char *sl_path_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * snprintf into a fixed buffer (a struct field, a 41-byte oid) that must not
 * be cut: 0 when it fits, SL_ETOOBIG when it would not (buf is then "").
 */
int sl_fmt_fixed(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * A copy of p without one trailing '/' ("/" stays "/"): a new string (the
 * caller's, free()), or NULL on out-of-memory.
 */
char *sl_path_strip_slash(const char *p);

/*
 * 1 when a relative path stays inside its root: not absolute, no ".."
 * component, no empty or NUL component tricks. Used for every path that
 * comes from a work order or a config.
 */
int sl_path_is_safe_relative(const char *path);

/*
 * 1 when repository path `path` ("web/a/b.c") matches glob `pat`: `*` and
 * `?` match within one folder name, a double star any run of folders
 * ("web/" and a double star: all of web/); everything else matches itself.
 */
int sl_path_glob(const char *pat, const char *path);

/*
 * Append len bytes to a log (created 0644, under the guard's rules): best
 * effort, for logs whose outcome is recorded elsewhere (the builder's, a
 * job's engine log).
 */
void sl_append_file(const char *path, const void *data, size_t len);

/*
 * The last `max` bytes of a file, a new string (the caller's, free()): ""
 * when it cannot be read, never through a link; NULL on out-of-memory.
 */
char *sl_tail_file(const char *path, size_t max);

#endif
