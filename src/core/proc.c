/*
 * Child processes (proc.h): fork + exec in a new process group, a poll()
 * loop that feeds stdin, drains stdout/stderr into a bounded log and a
 * bounded capture buffer, and enforces the timeout on the whole group.
 *
 * The leader's exit is noticed through a pidfd (Linux 5.3+) or, without one,
 * by polling waitid(WNOWAIT) every 50 ms. The leader is reaped only after the
 * group has been killed, so its pid (the group id) cannot be reused while we
 * still signal the group.
 */
#include "core/proc.h"
#include "core/fs.h"
#include "core/lock.h"
#include "core/time.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define PROC_SLICE_MS 50     /* exit check interval without a pidfd */
#define PROC_DRAIN_MS 500    /* reading after the leader exited */
#define PROC_GRACE_MS 2000   /* default SIGTERM -> SIGKILL */
#define PROC_WATCH_MS 200    /* watch() is asked at most this often */
#define PROC_CHUNK 65536

/* What the child reports through the exec pipe when it cannot exec. */
struct exec_fail {
	int stage; /* 1 chdir, 2 exec */
	int errnum;
};

/* What the child execs, all prepared before fork. */
struct exec_plan {
	const char *prog;          /* resolved path */
	const char *const *argv;
	const char **env;
	const char **sh_argv;      /* /bin/sh prog argv[1..]: for a script without #! */
	const char *cwd;
};

struct proc_io {
	int in_fd, out_fd, err_fd, pid_fd;
	const unsigned char *in_data;
	size_t in_len, in_off;
	int log_fd;
	size_t log_budget;  /* bytes we may still write to the log */
	int log_dropped;
	int watch_fd;          /* inotify on watch_file's folder, or -1 */
	const char *watch_name; /* watch_file's last component */
	int watch_hit;         /* it was written since the last look */
	const struct sl_proc_opts *opts;
	struct sl_proc_result *res;
};

/* ---- environment and PATH (before fork: the child only calls async-signal-safe functions) */

int sl_env_name_matches(const char *entry, const char *name)
{
	size_t n = strcspn(name, "=");

	if (n && name[n - 1] == '*')
		return strncmp(entry, name, n - 1) == 0 && strchr(entry + n - 1, '=') != NULL;
	return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

static int in_list(const char *entry, const char *const *list)
{
	for (; list && *list; list++)
		if (sl_env_name_matches(entry, *list))
			return 1;
	return 0;
}

static size_t strv_len(const char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

/* A NULL-terminated array borrowing the strings of environ and env_add. */
static const char **build_env(const struct sl_proc_opts *o)
{
	const char *const *base = o->clear_env ? NULL : (const char *const *)environ;
	size_t n = 0, cap = strv_len(base) + strv_len(o->env_add) + 1;
	const char **env = calloc(cap, sizeof(*env));

	if (!env)
		return NULL;
	for (; base && *base; base++)
		if (!in_list(*base, o->env_drop) && !in_list(*base, o->env_add))
			env[n++] = *base;
	for (const char *const *a = o->env_add; a && *a; a++)
		if (strchr(*a, '=') && !in_list(*a, o->env_drop))
			env[n++] = *a;
	env[n] = NULL;
	return env;
}

static const char *env_get(const char **env, const char *name)
{
	size_t n = strlen(name);

	for (; *env; env++)
		if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

static int is_executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The program to exec: argv[0] itself when it has a '/', else found in PATH. */
static int resolve_program(char **out, const char *prog, const char **env, struct sl_err *err)
{
	const char *path = env_get(env, "PATH");
	const char *p;

	if (strchr(prog, '/'))
		return (*out = strdup(prog)) ? 0 : sl_err_set(err, SL_ERROR, "out of memory");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p;) {
		size_t len = strcspn(p, ":");
		char cand[PATH_MAX];
		int n = snprintf(cand, sizeof(cand), "%.*s%s%s", (int)len, p, len ? "/" : "", prog);

		if (n > 0 && (size_t)n < sizeof(cand) && is_executable(cand)) {
			if (!(*out = strdup(cand)))
				return sl_err_set(err, SL_ERROR, "out of memory");
			return 0;
		}
		p += len;
		if (*p == ':')
			p++;
	}
	return sl_err_set(err, SL_ENOTFOUND, "cannot run '%s': program not found in PATH; "
			  "check builder.command / PATH", prog);
}

/* {"/bin/sh", prog, argv[1], ...}: borrowed strings, the array is the caller's. */
static const char **sh_argv(const char *prog, const char *const *argv)
{
	size_t n = strv_len(argv);
	const char **v = calloc(n + 2, sizeof(*v));

	if (!v)
		return NULL;
	v[0] = "/bin/sh";
	v[1] = prog;
	for (size_t i = 1; i < n; i++)
		v[i + 1] = argv[i];
	return v;
}

/* ---- the child */

static void child_fail(int fd, int stage)
{
	struct exec_fail f = { stage, errno };
	ssize_t w;

	do
		w = write(fd, &f, sizeof(f));
	while (w < 0 && errno == EINTR);
	_exit(127);
}

static void close_from(int lowfd)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)lowfd, ~0U, 0) == 0)
		return;
#endif
	for (int fd = lowfd; fd < 65536; fd++)
		close(fd);
}

/*
 * Move fd above 0..2 so that dup2() onto 0..2 cannot clobber it (3 is only
 * taken by the report after 0..2 are done). Any number >= 3 does: asking
 * for more failed under a low RLIMIT_NOFILE.
 */
static int lift(int fd)
{
	return fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

static void child_setup_signals(void)
{
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
}

static void child_run(const struct exec_plan *x, int fds[3], int report)
{
	int lifted[3], rep;

	setpgid(0, 0);
	child_setup_signals();
	if ((rep = lift(report)) < 0)
		rep = report; /* still open: the failure that follows is reported, not lost */
	for (int i = 0; i < 3; i++)
		if ((lifted[i] = lift(fds[i])) < 0)
			child_fail(rep, 2);
	for (int i = 0; i < 3; i++)
		if (dup2(lifted[i], i) < 0)
			child_fail(rep, 2);
	if (dup2(rep, 3) < 0)
		child_fail(rep, 2);
	close_from(4);
	if (fcntl(3, F_SETFD, FD_CLOEXEC) < 0)
		child_fail(3, 2);
	if (x->cwd && chdir(x->cwd) < 0)
		child_fail(3, 1);
	execve(x->prog, (char *const *)x->argv, (char *const *)x->env);
	if (errno == ENOEXEC) /* like execvp: a script without #! is run by sh */
		execve("/bin/sh", (char *const *)x->sh_argv, (char *const *)x->env);
	child_fail(3, 2);
}

/* ---- output sinks */

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void to_log(struct proc_io *io, const char *p, size_t n)
{
	size_t take = n;

	if (io->log_fd < 0)
		return;
	if (io->opts->log_max) {
		if (take > io->log_budget)
			take = io->log_budget;
		io->log_budget -= take;
		if (take < n)
			io->log_dropped = 1;
	}
	if (take)
		(void)write_all(io->log_fd, p, take);
}

static void to_buf(struct sl_buf *b, int *truncated, const char *p, size_t n)
{
	size_t max, room;

	if (!b)
		return;
	max = b->max ? b->max : SL_BUF_DEFAULT_MAX;
	room = max > b->len ? max - b->len : 0;
	if (n > room) {
		if (truncated)
			*truncated = 1;
		n = room;
	}
	if (n)
		(void)sl_buf_add(b, p, n);
}

static void consume(struct proc_io *io, int is_err, const char *p, size_t n)
{
	to_log(io, p, n);
	if (!is_err) {
		io->res->out_bytes += n;
		if (io->opts->out_fd > 0 && !io->res->out_fd_failed &&
		    write_all(io->opts->out_fd, p, n) < 0)
			io->res->out_fd_failed = errno ? errno : EIO;
		to_buf(io->opts->out, &io->res->out_truncated, p, n);
	} else if (io->log_fd < 0)
		to_buf(io->opts->errout, NULL, p, n);
}

/* Read what is there; closes *fd at EOF or error. */
static void read_fd(struct proc_io *io, int *fd, int is_err)
{
	char chunk[PROC_CHUNK];
	ssize_t r = read(*fd, chunk, sizeof(chunk));

	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (r <= 0) {
		close(*fd);
		*fd = -1;
		return;
	}
	consume(io, is_err, chunk, (size_t)r);
}

static void write_stdin(struct proc_io *io)
{
	ssize_t w = write(io->in_fd, io->in_data + io->in_off, io->in_len - io->in_off);

	if (w < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (w > 0)
		io->in_off += (size_t)w;
	if (w <= 0 || io->in_off == io->in_len) {
		close(io->in_fd);
		io->in_fd = -1;
	}
}

/* ---- waiting */

static int leader_exited(struct proc_io *io, short pid_revents)
{
	siginfo_t si;

	if (io->pid_fd >= 0)
		return (pid_revents & (POLLIN | POLLHUP | POLLERR)) != 0;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)io->res->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
		return errno != EINTR; /* ECHILD: nothing to wait for */
	return si.si_pid != 0;
}

struct clock {
	int64_t deadline, kill_at, drain_until;
	int64_t stop_at;    /* watch() said stop: end the child then, if it still runs */
	int64_t watch_next; /* watch() is not asked again before this */
	int term_sent, kill_sent, exited;
};

static int64_t min_wait(int64_t cur, int64_t until, int64_t now)
{
	int64_t w = until > now ? until - now : 0;

	return cur < 0 || w < cur ? w : cur;
}

static int64_t next_wait(const struct proc_io *io, const struct clock *c, int64_t now)
{
	int64_t w = -1;

	if (c->exited)
		return min_wait(w, c->drain_until, now);
	if (c->deadline && !c->term_sent)
		w = min_wait(w, c->deadline, now);
	if (c->term_sent && !c->kill_sent)
		w = min_wait(w, c->kill_at, now);
	if (c->stop_at && !c->term_sent)
		w = min_wait(w, c->stop_at, now);
	if (io->watch_hit && !c->stop_at && !c->term_sent) /* else enforce_watch() waits */
		w = min_wait(w, c->watch_next, now);
	if (io->pid_fd < 0)
		w = min_wait(w, now + PROC_SLICE_MS, now);
	return w;
}

/* Begin to end the child's group: SIGTERM now, SIGKILL after the grace. */
static void terminate(struct proc_io *io, struct clock *c, int64_t now)
{
	int64_t grace = io->opts->kill_grace_ms > 0 ? io->opts->kill_grace_ms : PROC_GRACE_MS;

	kill(-io->res->pid, SIGTERM);
	c->term_sent = 1;
	c->kill_at = now + grace;
}

static void enforce_timeout(struct proc_io *io, struct clock *c, int64_t now)
{
	if (c->exited)
		return;
	if (c->deadline && !c->term_sent && now >= c->deadline) {
		terminate(io, c, now);
		io->res->timed_out = 1;
	}
	if (c->stop_at && !c->term_sent && now >= c->stop_at) {
		terminate(io, c, now);
		io->res->stopped = 1;
	}
	if (c->term_sent && !c->kill_sent && now >= c->kill_at) {
		kill(-io->res->pid, SIGKILL);
		c->kill_sent = 1;
	}
}

/*
 * Read the inotify events: was watch_file written or renamed into place?
 * One read a wakeup: a child that writes without end cannot keep us here
 * (poll reports the rest next time).
 */
static void read_watch(struct proc_io *io)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t r;

	if ((r = read(io->watch_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + r;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			if (ev->len && !strcmp(ev->name, io->watch_name))
				io->watch_hit = 1;
			if (ev->mask & IN_Q_OVERFLOW)
				io->watch_hit = 1; /* lost events: look anyway */
			p += sizeof(*ev) + ev->len;
		}
	}
}

/*
 * Ask watch() about the file just written (at most every PROC_WATCH_MS).
 * When it says stop, the child has the grace to end on its own (a report
 * written as its last act is not a reason to end it), then it is ended.
 */
static void enforce_watch(struct proc_io *io, struct clock *c, int64_t now)
{
	int64_t grace = io->opts->kill_grace_ms > 0 ? io->opts->kill_grace_ms : PROC_GRACE_MS;

	if (!io->watch_hit || c->exited || c->term_sent || c->stop_at || now < c->watch_next)
		return;
	io->watch_hit = 0;
	c->watch_next = now + PROC_WATCH_MS;
	io->res->stop_why[0] = '\0';
	if (io->opts->watch(io->opts->watch_arg, io->res->stop_why, sizeof(io->res->stop_why)))
		c->stop_at = now + grace;
}

static void add_pfd(struct pollfd *p, nfds_t *n, int fd, short ev)
{
	p[*n].fd = fd;
	p[*n].events = ev;
	p[*n].revents = 0;
	(*n)++;
}

static void dispatch(struct proc_io *io, struct pollfd *p, nfds_t n, short *pid_revents)
{
	const short done = POLLIN | POLLHUP | POLLERR | POLLNVAL;

	for (nfds_t i = 0; i < n; i++) {
		if (!p[i].revents)
			continue;
		if (p[i].fd == io->pid_fd)
			*pid_revents = p[i].revents;
		else if (p[i].fd == io->in_fd)
			write_stdin(io);
		else if (p[i].fd == io->out_fd && (p[i].revents & done))
			read_fd(io, &io->out_fd, 0);
		else if (p[i].fd == io->err_fd && (p[i].revents & done))
			read_fd(io, &io->err_fd, 1);
		else if (p[i].fd == io->watch_fd)
			read_watch(io);
	}
}

static void io_loop(struct proc_io *io, struct clock *c)
{
	for (;;) {
		struct pollfd p[5];
		nfds_t n = 0;
		short pid_revents = 0;
		int64_t now = sl_mono_ms(), wait;

		enforce_timeout(io, c, now);
		wait = next_wait(io, c, now);
		if (io->in_fd >= 0)
			add_pfd(p, &n, io->in_fd, POLLOUT);
		if (io->out_fd >= 0)
			add_pfd(p, &n, io->out_fd, POLLIN);
		if (io->err_fd >= 0)
			add_pfd(p, &n, io->err_fd, POLLIN);
		if (io->pid_fd >= 0 && !c->exited)
			add_pfd(p, &n, io->pid_fd, POLLIN);
		if (io->watch_fd >= 0 && !c->exited && !c->term_sent)
			add_pfd(p, &n, io->watch_fd, POLLIN);
		if (poll(p, n, wait > INT_MAX ? INT_MAX : (int)wait) < 0 && errno != EINTR)
			break;
		dispatch(io, p, n, &pid_revents);
		now = sl_mono_ms();
		enforce_watch(io, c, now);
		if (!c->exited && leader_exited(io, pid_revents)) {
			c->exited = 1;
			c->drain_until = now + PROC_DRAIN_MS;
		}
		if (c->exited && ((io->out_fd < 0 && io->err_fd < 0) || now >= c->drain_until))
			break;
	}
}

static void reap(struct proc_io *io)
{
	int status = 0;
	pid_t pid = (pid_t)io->res->pid;

	/* Whatever the leader left behind in its group goes with it. */
	kill(-pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status)) {
		io->res->exit_code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		io->res->signaled = WTERMSIG(status);
		io->res->exit_code = 128 + WTERMSIG(status);
	}
}

/* ---- setup */

static int open_log(struct proc_io *io, struct sl_err *err)
{
	const struct sl_proc_opts *o = io->opts;
	int rc;

	if (!o->log_path)
		return 0;
	/* no link on the way: a builder may have replaced its run folder */
	if ((rc = sl_open_file(o->log_path, O_WRONLY | O_APPEND | O_CREAT, 0644, &io->log_fd,
			       err)) < 0)
		return rc;
	/* The bound is per child: what this run appends, not the file's size. */
	io->log_budget = o->log_max;
	return 0;
}

/* inotify on watch_file's folder: before the child starts, so no write is missed. */
static int open_watch(struct proc_io *io, struct sl_err *err)
{
	const char *f = io->opts->watch_file, *slash;
	char *dir;
	int wd;

	if (!f || !io->opts->watch)
		return 0;
	slash = strrchr(f, '/');
	io->watch_name = slash ? slash + 1 : f;
	if (!(dir = slash ? strndup(f, (size_t)(slash - f) + (slash == f)) : strdup(".")))
		return sl_err_set(err, SL_ERROR, "out of memory");
	if ((io->watch_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK)) < 0) {
		free(dir);
		return sl_err_sys(err, errno, "cannot watch '%s'", f);
	}
	wd = inotify_add_watch(io->watch_fd, dir,
			       IN_CLOSE_WRITE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW);
	if (wd < 0) {
		int e = errno;

		free(dir);
		return sl_err_sys(err, e, "cannot watch '%s'", f);
	}
	free(dir);
	return 0;
}

static void log_finish(struct proc_io *io)
{
	char line[96];
	int n;

	if (io->log_fd < 0)
		return;
	if (io->log_dropped) {
		io->res->log_truncated = 1;
		n = snprintf(line, sizeof(line), "\n[sluice: log truncated at %zu bytes]\n",
			     io->opts->log_max);
		(void)write_all(io->log_fd, line, (size_t)n);
	}
	close(io->log_fd);
	io->log_fd = -1;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The watch, or, when it cannot be set up (inotify's limits reached, say), why not. */
static void watch_or_say(struct proc_io *io)
{
	struct sl_err werr = SL_ERR_INIT;

	if (open_watch(io, &werr) < 0) {
		snprintf(io->res->watch_failed, sizeof(io->res->watch_failed), "%s", werr.msg);
		close_fd(&io->watch_fd);
	}
}

/* pipes[0..2] are the child's ends of stdin/stdout/stderr; the parent's ends go into io. */
static int make_pipes(struct proc_io *io, int child[3], int *report, struct sl_err *err)
{
	int in[2] = { -1, -1 }, out[2], er[2], rep[2];

	if (io->in_data) {
		if (pipe2(in, O_CLOEXEC) < 0)
			return sl_err_sys(err, errno, "cannot create a pipe");
	} else if ((in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
		return sl_err_sys(err, errno, "cannot open '/dev/null'");
	}
	child[0] = in[0];
	io->in_fd = in[1];
	if (pipe2(out, O_CLOEXEC) < 0)
		return sl_err_sys(err, errno, "cannot create a pipe");
	child[1] = out[1];
	io->out_fd = out[0];
	if (pipe2(er, O_CLOEXEC) < 0)
		return sl_err_sys(err, errno, "cannot create a pipe");
	child[2] = er[1];
	io->err_fd = er[0];
	if (pipe2(rep, O_CLOEXEC) < 0)
		return sl_err_sys(err, errno, "cannot create a pipe");
	*report = rep[1];
	io->pid_fd = rep[0]; /* parked here until the exec report is read */
	return 0;
}

static void set_nonblock(int fd)
{
	if (fd >= 0)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* Read the child's exec report: 0 when it exec'd (EOF), else an error. */
static int exec_report(struct proc_io *io, int fd, struct sl_err *err)
{
	struct exec_fail f;
	ssize_t r;

	do
		r = read(fd, &f, sizeof(f));
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)sizeof(f))
		return 0;
	if (f.stage == 1)
		return sl_err_sys(err, f.errnum, "cannot change to directory '%s'", io->opts->cwd);
	return sl_err_sys(err, f.errnum, "cannot run '%s'", io->opts->argv[0]);
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd >= 0)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
#else
	return -1;
#endif
}

/* Keep the child's identity in `path` (best effort: it only helps a later cleanup). */
static void write_owner(const char *path, pid_t pid)
{
	char owner[64];
	struct sl_err ignored = SL_ERR_INIT;

	sl_owner_of((long)pid, owner, sizeof(owner));
	sl_write_file(path, owner, strlen(owner), &ignored);
}

static int spawn(struct proc_io *io, const struct exec_plan *x, struct sl_err *err)
{
	int child[3] = { -1, -1, -1 }, report = -1, rep_read, error;
	pid_t pid;

	if ((error = make_pipes(io, child, &report, err)) < 0)
		goto out;
	rep_read = io->pid_fd;
	io->pid_fd = -1;
	pid = fork();
	if (pid < 0) {
		error = sl_err_sys(err, errno, "cannot fork to run '%s'", io->opts->argv[0]);
		close(rep_read);
		goto out;
	}
	if (pid == 0)
		child_run(x, child, report);
	setpgid(pid, pid); /* also done by the child; whoever is first wins */
	io->res->pid = (int)pid;
	close_fd(&report);
	for (int i = 0; i < 3; i++)
		close_fd(&child[i]);
	error = exec_report(io, rep_read, err);
	close(rep_read);
	if (!error)
		io->pid_fd = open_pidfd(pid);
	if (!error && io->opts->owner_file)
		write_owner(io->opts->owner_file, pid);
out:
	close_fd(&report);
	for (int i = 0; i < 3; i++)
		close_fd(&child[i]);
	return error;
}

static void run_loop(struct proc_io *io, int64_t start)
{
	struct clock c = { 0 };
	sigset_t pipe_set, old, pending;
	int had_pipe;

	/* A child that closes stdin must not kill us with SIGPIPE. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigpending(&pending);
	had_pipe = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	if (io->opts->timeout_ms > 0)
		c.deadline = start + io->opts->timeout_ms;
	set_nonblock(io->in_fd);
	set_nonblock(io->out_fd);
	set_nonblock(io->err_fd);
	io_loop(io, &c);
	close_fd(&io->in_fd);
	close_fd(&io->out_fd);
	close_fd(&io->err_fd);
	sigpending(&pending);
	if (!had_pipe && sigismember(&pending, SIGPIPE)) {
		struct timespec zero = { 0, 0 };

		sigtimedwait(&pipe_set, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int sl_proc_run(const struct sl_proc_opts *opts, struct sl_proc_result *res, struct sl_err *err)
{
	struct proc_io io = { .in_fd = -1, .out_fd = -1, .err_fd = -1, .pid_fd = -1, .log_fd = -1,
			      .watch_fd = -1 };
	struct exec_plan x = { NULL, opts->argv, NULL, NULL, opts->cwd };
	const char **env = NULL;
	char *prog = NULL;
	int64_t start = sl_mono_ms();
	int error;

	memset(res, 0, sizeof(*res));
	res->pid = -1;
	io.opts = opts;
	io.res = res;
	io.in_data = opts->stdin_data;
	io.in_len = opts->stdin_len;
	if (!opts->argv || !opts->argv[0]) {
		error = sl_err_set(err, SL_EINVALID, "no program to run; set a command");
		goto out;
	}
	if (!(env = build_env(opts))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	if ((error = resolve_program(&prog, opts->argv[0], env, err)) < 0)
		goto out;
	if (!(x.sh_argv = sh_argv(prog, opts->argv))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	x.prog = prog;
	x.env = env;
	if ((error = open_log(&io, err)) < 0)
		goto out;
	watch_or_say(&io);
	if (io.in_data && !io.in_len)
		io.in_data = NULL;
	if ((error = spawn(&io, &x, err)) < 0) {
		if (res->pid > 0)
			reap(&io);
		goto out;
	}
	run_loop(&io, start);
	reap(&io);
	log_finish(&io);
	if (opts->owner_file) {
		struct sl_err ignored = SL_ERR_INIT;
		sl_unlink(opts->owner_file, &ignored); /* never through a link */
	}
out:
	res->duration_ms = sl_mono_ms() - start;
	close_fd(&io.in_fd);
	close_fd(&io.out_fd);
	close_fd(&io.err_fd);
	close_fd(&io.pid_fd);
	close_fd(&io.watch_fd);
	if (io.log_fd >= 0)
		close(io.log_fd);
	free(x.sh_argv);
	free(prog);
	free(env);
	return error;
}

void sl_proc_describe(char *out, size_t n, const struct sl_proc_result *res)
{
	const char *sig = res->signaled ? sigabbrev_np(res->signaled) : NULL;
	char dur[32];

	if (res->timed_out) {
		sl_duration_format(dur, sizeof(dur), res->duration_ms);
		snprintf(out, n, "timed out after %s", dur);
	} else if (res->stopped) {
		snprintf(out, n, "stopped: %s", res->stop_why);
	} else if (res->signaled) {
		snprintf(out, n, "killed by SIG%s", sig ? sig : "?");
	} else {
		snprintf(out, n, "exit %d", res->exit_code);
	}
}

/* ---- secrets */

#define SECRET_MAX 60000 /* below a pipe's capacity: the writer never blocks */

/* [*start, *end): this process's original environment block, as the kernel shows it. */
static int env_block(char **start, char **end)
{
	char buf[4096], *p, *tok;
	unsigned long long v[2] = { 0, 0 };
	ssize_t n;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC), field;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (!(p = strrchr(buf, ')')))
		return -1;
	/* after "(comm)" comes field 3; env_start and env_end are fields 50 and 51 */
	for (field = 3, tok = p + 1 + strspn(p + 1, " \n"); *tok && field <= 51;
	     field++, tok += strspn(tok, " \n")) {
		if (field >= 50)
			v[field - 50] = strtoull(tok, NULL, 10);
		tok += strcspn(tok, " \n");
	}
	if (!v[0] || v[1] <= v[0] || v[1] - v[0] > ((unsigned long long)64 << 20))
		return -1;
	*start = (char *)(uintptr_t)v[0];
	*end = (char *)(uintptr_t)v[1];
	return 0;
}

/* Zero the value of every "name=" entry in [s, e). */
static void scrub_range(char *s, char *e, const char *name)
{
	size_t n = strlen(name), len;

	for (char *p = s; p < e; p += len + 1) {
		len = strnlen(p, (size_t)(e - p));
		if (len > n && !memcmp(p, name, n) && p[n] == '=')
			explicit_bzero(p + n + 1, len - n - 1);
	}
}

char *sl_env_take(const char *name)
{
	const char *v = getenv(name);
	char *copy = v ? strdup(v) : NULL, *start, *end;

	if (env_block(&start, &end) == 0) {
		scrub_range(start, end, name);
	} else {
		/* no /proc: the entries environ still points to (the block's, at start) */
		for (char **e = environ; e && *e; e++)
			if (sl_env_name_matches(*e, name))
				explicit_bzero(*e + strlen(name) + 1, strlen(*e + strlen(name) + 1));
	}
	unsetenv(name);
	return copy;
}

void sl_proc_protect(void)
{
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

void sl_secret_free(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s));
	free(s);
}

int sl_secret_pipe(const char *data, size_t len, int *fd, struct sl_err *err)
{
	int p[2];

	*fd = -1;
	if (len > SECRET_MAX)
		return sl_err_set(err, SL_EINVALID, "the secret is too long to hand over (%zu bytes)",
				  len);
	if (pipe2(p, O_CLOEXEC) < 0)
		return sl_err_sys(err, errno, "cannot create a pipe");
	if (write_all(p[1], data, len) < 0) {
		close(p[0]);
		close(p[1]);
		return sl_err_sys(err, errno, "cannot write to a pipe");
	}
	close(p[1]);
	*fd = p[0];
	return 0;
}

int sl_secret_read(int fd, char **out, struct sl_err *err)
{
	char *buf = malloc(SECRET_MAX + 1);
	struct stat st;
	size_t len = 0;
	ssize_t r;
	int error = 0;

	*out = NULL;
	if (!buf) {
		close(fd);
		return sl_err_set(err, SL_ERROR, "out of memory");
	}
	/* only a pipe: a terminal would wait for a person, a file is no hand-over */
	if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode)) {
		error = fcntl(fd, F_GETFD) < 0
				? sl_err_sys(err, errno, "cannot read the secret handed over on fd %d", fd)
				: sl_err_set(err, SL_EINVALID, "fd %d is not a pipe: a secret is "
					     "handed over through one", fd);
		close(fd);
		free(buf);
		return error;
	}
	while (len < SECRET_MAX && (r = read(fd, buf + len, SECRET_MAX - len)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			error = sl_err_sys(err, errno, "cannot read the secret handed over on fd %d",
					   fd);
			break;
		}
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	if (error) {
		explicit_bzero(buf, len);
		free(buf);
		return error;
	}
	*out = buf;
	return 0;
}

/* ---- children that run beside the caller (proc.h: sl_proc_spawn, sl_proc_wait_any) */

#define SPAWN_SLICE_MS 10 /* how often sl_proc_wait_any() looks without pidfds */

/* In the child: keep pass_fd across exec, exec, or report errno and _exit(127). */
static void spawned_child(const struct sl_proc_spawn_opts *o, int report)
{
	if (o->pass_fd >= 0 && fcntl(o->pass_fd, F_SETFD, 0) < 0)
		child_fail(report, 2);
	execv(o->prog, (char *const *)o->argv);
	child_fail(report, 2);
}

int sl_proc_spawn(const struct sl_proc_spawn_opts *o, int *pid, struct sl_err *err)
{
	struct exec_fail f;
	int rep[2];
	ssize_t r;
	pid_t p;

	*pid = -1;
	if (!o->prog || !o->argv || !o->argv[0])
		return sl_err_set(err, SL_EINVALID, "no program to start");
	if (pipe2(rep, O_CLOEXEC) < 0)
		return sl_err_sys(err, errno, "cannot start '%s'", o->prog);
	fflush(NULL); /* nothing buffered is written twice, or after the child's output */
	p = fork();
	if (p == 0)
		spawned_child(o, rep[1]);
	close(rep[1]);
	if (p < 0) {
		close(rep[0]);
		return sl_err_sys(err, errno, "cannot fork to start '%s'", o->prog);
	}
	/* end of file: the exec succeeded (the pipe was close-on-exec) */
	do
		r = read(rep[0], &f, sizeof(f));
	while (r < 0 && errno == EINTR);
	close(rep[0]);
	if (r == (ssize_t)sizeof(f)) {
		while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
			;
		return sl_err_sys(err, f.errnum, "cannot run '%s'", o->prog);
	}
	*pid = (int)p;
	return 0;
}

static void decode_status(int status, struct sl_proc_result *res)
{
	if (WIFEXITED(status)) {
		res->exit_code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		res->signaled = WTERMSIG(status);
		res->exit_code = 128 + WTERMSIG(status);
	}
}

/* 1 and *which when one of pids ended (reaped), 0 when none did, or an error. */
static int reap_any(const int *pids, size_t n, size_t *which, struct sl_proc_result *res,
		    struct sl_err *err)
{
	int status = 0;
	pid_t r;

	for (size_t i = 0; i < n; i++) {
		if (pids[i] < 0)
			continue;
		do
			r = waitpid((pid_t)pids[i], &status, WNOHANG);
		while (r < 0 && errno == EINTR);
		if (r < 0)
			return sl_err_sys(err, errno, "cannot wait for process %d", pids[i]);
		if (r == 0)
			continue;
		*which = i;
		res->pid = pids[i];
		decode_status(status, res);
		return 1;
	}
	return 0;
}

/*
 * Sleep until one of pids (entries < 0 skipped) ends or ms passed: poll(2)
 * on a pidfd of each, so a tick starts its next worker the moment one ends;
 * one that cannot be had (a kernel before 5.3) makes it a slice at most.
 */
static void wait_for_exit(const int *pids, size_t n, int64_t ms)
{
	struct pollfd fds[64];
	nfds_t nfds = 0;
	int short_slice = n > sizeof(fds) / sizeof(*fds);

	for (size_t i = 0; i < n && !short_slice; i++) {
		if (pids[i] < 0)
			continue;
		if ((fds[nfds].fd = open_pidfd((pid_t)pids[i])) < 0)
			short_slice = 1;
		else
			fds[nfds++].events = POLLIN;
	}
	if (short_slice && ms > SPAWN_SLICE_MS)
		ms = SPAWN_SLICE_MS;
	if (poll(fds, nfds, ms > INT_MAX ? INT_MAX : (int)ms) < 0 && errno != EINTR)
		sl_sleep_ms(ms < SPAWN_SLICE_MS ? ms : SPAWN_SLICE_MS);
	while (nfds > 0)
		close(fds[--nfds].fd);
}

int sl_proc_wait_any(const int *pids, size_t n, int64_t timeout_ms, size_t *which,
		     struct sl_proc_result *res, struct sl_err *err)
{
	int64_t until = sl_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0), now;
	size_t i;
	int rc;

	memset(res, 0, sizeof(*res));
	res->pid = -1;
	for (i = 0; i < n && pids[i] < 0; i++)
		;
	if (i == n)
		return 0;
	while ((rc = reap_any(pids, n, which, res, err)) == 0 && (now = sl_mono_ms()) < until)
		wait_for_exit(pids, n, until - now);
	return rc;
}

int sl_proc_self(char *out, size_t n, struct sl_err *err)
{
	ssize_t len;

	if ((len = readlink("/proc/self/exe", out, n)) < 0)
		return sl_err_sys(err, errno, "cannot find the sluice binary to start workers");
	if ((size_t)len >= n) /* a cut name would start another program */
		return sl_err_set(err, SL_EINVALID, "the path of the sluice binary is over %zu "
				  "bytes; install it under a shorter path", n - 1);
	out[len] = '\0';
	/* replaced by an upgrade while we run: exec the very file we are */
	if (len > 10 && !strcmp(out + len - 10, " (deleted)"))
		snprintf(out, n, "/proc/self/exe");
	return 0;
}
