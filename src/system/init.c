/*
 * sluice init (docs/design.md, The .system folder): set up .system/ in a repository: the
 * config (every key documented), the database, runs/, the lock file, the
 * exclude line and the inbox. Idempotent: what exists is kept, a missing
 * piece is put back. src/cli/cmd_init.c parses and prints; each thing done
 * is told through the note callback as it is done (runner.h).
 */
#include "system/system.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/fs.h"
#include "core/repo.h"
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct init {
	const struct sl_repo *repo;
	const char *inbox;
	const char *target_opt;
	char *target;
	int changed;
	const struct system_init_opts *o;
	struct sl_err *err;
};

/* Tell the caller what was done (a line without its newline). */
static void note(struct init *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct init *in, const char *fmt, ...)
{
	char *line = NULL;
	va_list ap;
	int n;

	if (!in->o->note)
		return;
	va_start(ap, fmt);
	n = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (n >= 0) {
		in->o->note(line, in->o->data);
		free(line);
	}
}

/* The branch HEAD names, refusing a detached HEAD or a branch without commits. */
static int head_branch(struct init *in)
{
	git_repository *repo = NULL;
	git_reference *head = NULL;
	const char *t;
	int error = 0, rc;

	if ((rc = git_repository_open(&repo, in->repo->root)) < 0) {
		error = sl_err_git(in->err, rc, "cannot open the repository '%s'", in->repo->root);
		goto out;
	}
	if ((rc = git_reference_lookup(&head, repo, "HEAD")) < 0) {
		error = sl_err_git(in->err, rc, "cannot read HEAD of '%s'", in->repo->root);
		goto out;
	}
	if (git_reference_type(head) != GIT_REFERENCE_SYMBOLIC ||
	    strncmp((t = git_reference_symbolic_target(head)), "refs/heads/", 11)) {
		error = sl_err_set(in->err, SL_EINVALID,
		                   "HEAD is detached, so there is no branch to merge into; check "
		                   "out a branch or pass --target BRANCH");
		goto out;
	}
	if (git_repository_head_unborn(repo) == 1) {
		error = sl_err_set(in->err, SL_EINVALID,
		                   "branch '%s' has no commits yet; commit something first, or "
		                   "pass --target BRANCH",
		                   t + 11);
		goto out;
	}
	if (sl_config_target_problem(t + 11)) /* one sluice could not merge into */
		error = sl_err_set(in->err, SL_EINVALID, "the current branch '%.200s' %s; check out "
				   "another or pass --target BRANCH", t + 11,
				   sl_config_target_problem(t + 11));
	else if (!(in->target = strdup(t + 11)))
		error = sl_err_set(in->err, SL_ERROR, "out of memory");
out:
	git_reference_free(head);
	git_repository_free(repo);
	return error;
}

static int choose_target(struct init *in)
{
	char *ref = NULL;
	const char *why;
	int valid = 0, rc;

	if (in->target)
		return 0; /* chosen before anything was created */
	if (!in->target_opt)
		return head_branch(in);
	if ((why = sl_config_target_problem(in->target_opt)) != NULL)
		return sl_err_set(in->err, SL_EINVALID, "--target '%.200s' %s", in->target_opt, why);
	/* not a fixed buffer: a cut name would be another branch */
	if (asprintf(&ref, "refs/heads/%s", in->target_opt) < 0)
		return sl_err_set(in->err, SL_ERROR, "out of memory");
	rc = git_reference_name_is_valid(&valid, ref);
	free(ref);
	if (rc < 0 || !valid)
		return sl_err_set(in->err, SL_EINVALID,
		                  "'%s' is not a valid branch name; pass --target BRANCH",
		                  in->target_opt);
	if (!(in->target = strdup(in->target_opt)))
		return sl_err_set(in->err, SL_ERROR, "out of memory");
	return 0;
}

static int ensure_dir(struct init *in, const char *path, const char *what)
{
	if (sl_is_dir(path))
		return 0;
	if (sl_mkdir_p(path, in->err))
		return -1;
	note(in, "created %s", what);
	in->changed = 1;
	return 0;
}

static int ensure_lock(struct init *in)
{
	int fd;

	if (sl_path_exists(in->repo->lock_path))
		return 0;
	if ((fd = open(in->repo->lock_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
		return sl_err_sys(in->err, errno, "cannot create '%s'", in->repo->lock_path);
	close(fd);
	note(in, "created .system/lock");
	in->changed = 1;
	return 0;
}

static int ensure_config(struct init *in)
{
	char *text;
	int error;

	if (sl_path_exists(in->repo->config_path)) {
		if (in->target_opt || strcmp(in->inbox, "work_orders"))
			note(in, "kept .system/config.yaml as it is; edit it to change the target "
			     "or the inbox");
		return 0;
	}
	if ((error = choose_target(in)) != 0)
		return error;
	if (!(text = sl_config_template(in->target, in->inbox)))
		return sl_err_set(in->err, SL_ERROR, "out of memory");
	error = sl_write_file_atomic(in->repo->config_path, text, strlen(text), in->err);
	free(text);
	if (!error) {
		note(in, "created .system/config.yaml (target '%s', inbox '%s')", in->target,
		     in->inbox);
		in->changed = 1;
	}
	return error;
}

static int ensure_db(struct init *in)
{
	struct store *st = NULL;
	int existed = sl_path_exists(in->repo->db_path), error;

	if ((error = store_open(&st, in->repo->db_path, in->err)) != 0)
		return error;
	store_free(st);
	if (!existed) {
		note(in, "created .system/sluice.db");
		in->changed = 1;
	}
	return 0;
}

/* Add "/.system/" to .git/info/exclude unless a line says so already. */
static int ensure_exclude(struct init *in)
{
	struct sl_buf data = SL_BUF_INIT;
	char *info = sl_path_join(in->repo->gitdir, "info"), *path = NULL;
	const char *p;
	int error = 0;

	if (!info || !(path = sl_path_join(info, "exclude"))) {
		error = sl_err_set(in->err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = sl_mkdir_p(info, in->err)) != 0)
		goto out;
	if (sl_path_exists(path) && (error = sl_read_file(&data, path, 0, in->err)) != 0)
		goto out;
	for (p = sl_buf_cstr(&data); *p; p += strcspn(p, "\n"), p += *p == '\n') {
		size_t n = strcspn(p, "\n");
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\r'))
			n--;
		if (n == 9 && !strncmp(p, "/.system/", 9))
			goto out;
	}
	if ((data.len && data.ptr[data.len - 1] != '\n' && sl_buf_puts(&data, "\n")) ||
	    sl_buf_puts(&data, "# sluice's state (sluice init)\n/.system/\n")) {
		error = sl_err_set(in->err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = sl_write_file_atomic(path, data.ptr, data.len, in->err)) != 0)
		goto out;
	note(in, "added /.system/ to .git/info/exclude");
	in->changed = 1;
out:
	sl_buf_release(&data);
	free(info);
	free(path);
	return error;
}

static int init_all(struct init *in)
{
	char *inbox_dir = NULL;
	int error = 0;

	if (!sl_path_is_safe_relative(in->inbox))
		return sl_err_set(
		        in->err, SL_EINVALID,
		        "--inbox '%s' must be a directory inside the repository, relative "
		        "to its root, without '..'",
		        in->inbox);
	/* a target that can never work is refused before anything is created */
	if (!sl_path_exists(in->repo->config_path) && choose_target(in))
		return -1;
	if (store_path_check(in->repo->db_path, in->err)) /* so is a path too long for SQLite */
		return -1;
	if (ensure_dir(in, in->repo->sysdir, ".system/") || ensure_config(in) ||
	    ensure_dir(in, in->repo->runs_dir, ".system/runs/") || ensure_lock(in) ||
	    ensure_db(in) || ensure_exclude(in))
		return -1;
	if (!in->target) { /* initialized before: the inbox is the config's */
		struct sl_config *cfg = NULL;
		struct sl_err ignored = SL_ERR_INIT;
		if (sl_config_load(&cfg, in->repo->config_path, &ignored) != 0)
			return 0;
		inbox_dir = sl_path_join(in->repo->root, cfg->queue.inbox);
		if (inbox_dir && !sl_path_exists(inbox_dir))
			error = ensure_dir(in, inbox_dir, cfg->queue.inbox);
		sl_config_free(cfg);
		free(inbox_dir);
		return error;
	}
	if (!(inbox_dir = sl_path_join(in->repo->root, in->inbox)))
		return sl_err_set(in->err, SL_ERROR, "out of memory");
	if (!sl_path_exists(inbox_dir))
		error = ensure_dir(in, inbox_dir, in->inbox);
	free(inbox_dir);
	return error;
}

int system_init(const struct sl_repo *repo, const struct system_init_opts *o,
		struct system_init_result *res, struct sl_err *err)
{
	struct init in;
	int error;

	memset(&in, 0, sizeof(in));
	in.repo = repo;
	in.inbox = o->inbox ? o->inbox : "work_orders";
	in.target_opt = o->target;
	in.o = o;
	in.err = err;
	if ((error = init_all(&in)) != 0 && err->code < 0)
		error = err->code; /* the steps say -1; the message has the reason's code */
	res->changed = in.changed;
	res->target = in.target;
	return error;
}

void system_init_result_release(struct system_init_result *res)
{
	free(res->target);
	res->target = NULL;
}
