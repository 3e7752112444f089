/* sluice diff RUN: a run's reviewed diff through the pager, as git shows one. */
#include "cli/cli_runner.h"
#include "worktree/worktree.h"
#include "core/buf.h"

#include <errno.h>
#include <getopt.h>
#include <git2.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define DIFF_MAX ((size_t)1 << 30)
#define STAT_BAR_MAX 50

static const char diff_help[] =
	"usage: sluice diff [-C DIR] [--stat] [--attempt N] [--no-pager] RUN\n"
	"\n"
	"Print a run's reviewed diff: its base to its head, from git, what diff.patch\n"
	"in the run folder holds and the reviewer was shown. RUN is its id, a unique\n"
	"prefix, its branch or its branch's suffix, or a work order (its latest run).\n"
	"On a terminal the output goes through the pager as git's does: GIT_PAGER,\n"
	"else core.pager of your own git config (never the repository's, which\n"
	"builders can write), else PAGER, else less (LESS=FRX when LESS is unset);\n"
	"none when the pager is \"\" or cat, or stdout is not a terminal.\n"
	"\n"
	"  --stat       the files changed with their lines added and removed\n"
	"  --attempt N  the diff of attempt N: the run's base to that attempt's head\n"
	"  --no-pager   never start the pager\n";

/*
 * The pager as git chooses it, but core.pager only from the person's own
 * config (global, XDG, system): the repository's .git/config is shared with
 * every builder, which could name a program there for a person's terminal.
 * NULL: none (the caller's string: free()).
 */
static char *pager_command(void)
{
	const char *env = getenv("GIT_PAGER");
	git_config *all = NULL, *cfg = NULL;
	git_buf b = GIT_BUF_INIT;
	char *out;

	if (env)
		out = strdup(env);
	else if (git_config_open_default(&all) == 0 && git_config_snapshot(&cfg, all) == 0 &&
		 git_config_get_string_buf(&b, cfg, "core.pager") == 0)
		out = strdup(b.ptr);
	else
		out = strdup((env = getenv("PAGER")) ? env : "less");
	git_buf_dispose(&b);
	git_config_free(cfg);
	git_config_free(all);
	if (out && (!*out || !strcmp(out, "cat"))) {
		free(out);
		out = NULL;
	}
	return out;
}

/* Send stdout to `cmd` run by sh (as git runs its pager); the pager's pid, or -1. */
static pid_t pager_start(const char *cmd)
{
	int fd[2];
	pid_t pid;

	fflush(stdout);
	if (pipe(fd) != 0)
		return -1;
	if ((pid = fork()) < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fd[0], STDIN_FILENO);
		close(fd[0]);
		close(fd[1]);
		setenv("LESS", "FRX", 0);
		setenv("LV", "-c", 0);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	signal(SIGPIPE, SIG_IGN); /* the person may quit the pager before the end */
	dup2(fd[1], STDOUT_FILENO);
	close(fd[0]);
	close(fd[1]);
	return pid;
}

static void pager_finish(pid_t pid)
{
	int status;

	if (pid < 0)
		return;
	fflush(stdout);
	close(STDOUT_FILENO); /* the pager sees the end of its input */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

/* One file of --stat: " path | N +++--", the bar scaled to STAT_BAR_MAX. */
static void stat_line(json_t *f, int name_w, int num_w, long most)
{
	long ins = (long)json_integer_value(json_object_get(f, "insertions"));
	long del = (long)json_integer_value(json_object_get(f, "deletions"));
	const char *path = cli_esc(json_string_value(json_object_get(f, "path")));
	long scale = most > STAT_BAR_MAX ? most : 0, i;

	if (json_is_true(json_object_get(f, "binary"))) {
		printf(" %-*s | Bin\n", name_w, path);
		return;
	}
	if (scale) {
		ins = ins ? (ins * STAT_BAR_MAX + scale - 1) / scale : 0;
		del = del ? (del * STAT_BAR_MAX + scale - 1) / scale : 0;
	}
	printf(" %-*s | %*ld ", name_w, path, num_w,
	       (long)(json_integer_value(json_object_get(f, "insertions")) +
		      json_integer_value(json_object_get(f, "deletions"))));
	for (i = 0; i < ins; i++)
		putchar('+');
	for (i = 0; i < del; i++)
		putchar('-');
	putchar('\n');
}

static void print_stat(json_t *st)
{
	json_t *files = json_object_get(st, "files"), *f;
	long most = 0, ins = (long)json_integer_value(json_object_get(st, "insertions"));
	long del = (long)json_integer_value(json_object_get(st, "deletions"));
	size_t i, n = json_array_size(files);
	int name_w = 0, num_w;
	char num[32];

	json_array_foreach(files, i, f) {
		long t = (long)(json_integer_value(json_object_get(f, "insertions")) +
				json_integer_value(json_object_get(f, "deletions")));
		int w = (int)strlen(cli_esc(json_string_value(json_object_get(f, "path"))));

		most = t > most ? t : most;
		name_w = w > name_w ? w : name_w;
	}
	num_w = snprintf(num, sizeof(num), "%ld", most);
	json_array_foreach(files, i, f)
		stat_line(f, name_w, num_w, most);
	printf(" %zu file%s changed", n, n == 1 ? "" : "s");
	if (ins || !del)
		printf(", %ld insertion%s(+)", ins, ins == 1 ? "" : "s");
	if (del || !ins)
		printf(", %ld deletion%s(-)", del, del == 1 ? "" : "s");
	putchar('\n');
}

struct diff_opts {
	int stat, attempt, no_pager;
};

/* The diff (or --stat) of base..head into `out`. */
static int render(struct sl_ctx *ctx, const char *base, const char *head,
		  const struct diff_opts *o, struct sl_buf *out, struct sl_err *err)
{
	json_t *st = NULL;
	size_t total = 0;
	int error;

	if (!o->stat)
		return worktree_diff_patch_mem(ctx->repo.root, base, head, out, &total, err);
	if ((error = worktree_diff_stat(ctx->repo.root, base, head, &st, err)) == 0)
		print_stat(st);
	json_decref(st);
	return error;
}

/* The run's base and the head shown: its own, or attempt N's. */
static int show_run(struct sl_ctx *ctx, const char *name, const struct diff_opts *o)
{
	struct store_run r;
	struct sl_err err = SL_ERR_INIT;
	struct sl_buf patch;
	char head[128];
	char *pager = NULL;
	pid_t pid = -1;
	int rc = CLI_OK;

	sl_buf_init(&patch, DIFF_MAX);
	if (store_run_get(ctx->st, name, &r, &err) != 0)
		return cli_report(&err);
	snprintf(head, sizeof(head), "%s", r.head_commit ? r.head_commit : "");
	if (o->attempt > 0 &&
	    store_attempt_head(ctx->st, r.id, o->attempt, head, sizeof(head), &err) != 0) {
		rc = cli_report(&err);
		goto out;
	}
	if (!r.base_commit || !head[0]) {
		cli_error("run '%s' has no commits to compare yet (it is %s)", r.id,
			  run_state_name(r.state));
		rc = CLI_FAIL;
		goto out;
	}
	if (!o->no_pager && cli_isatty_out() && (pager = pager_command()))
		pid = pager_start(pager);
	if (render(ctx, r.base_commit, head, o, &patch, &err) != 0)
		rc = cli_report(&err);
	else if (patch.len)
		fwrite(patch.ptr, 1, patch.len, stdout);
	pager_finish(pid);
out:
	free(pager);
	sl_buf_release(&patch);
	store_run_release(&r);
	return rc;
}

int cmd_diff(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS,
					      { "stat", no_argument, NULL, 's' },
					      { "attempt", required_argument, NULL, 'a' },
					      { "no-pager", no_argument, NULL, 'P' },
					      { NULL, 0, NULL, 0 } };
	struct diff_opts o = { 0, 0, 0 };
	struct sl_ctx ctx = SL_CTX_INIT;
	char *end;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(diff_help);
		else if (c == 's')
			o.stat = 1;
		else if (c == 'P')
			o.no_pager = 1;
		else if (c == 'a' && ((o.attempt = (int)strtol(optarg, &end, 10)) < 1 || *end))
			return cli_usage("diff", "--attempt wants an attempt number, 1 or more, "
				 "not '%s'", optarg);
		else if (c != 'a' && !cli_common_opt(cli, c, optarg))
			return cli_usage("diff", "unknown option");
	}
	if (optind != argc - 1)
		return cli_usage("diff", "name one run (its id, a unique prefix, its branch's "
				 "suffix or its work order)");
	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	rc = show_run(&ctx, argv[optind], &o);
	runner_ctx_release(&ctx);
	return rc;
}
