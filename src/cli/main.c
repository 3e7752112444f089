/* sluice: a review-gated merge service for AI coding agents. */
#include "cli/cli.h"
#include "core/log.h"
#include "core/similar.h"

#include <git2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct command {
	const char *name;
	cli_cmd_fn fn;
	const char *summary;
	int json; /* it honours --json (one JSON document on stdout); else --json is refused */
};

static const struct command commands[] = {
	{ "init", cmd_init, "set up .system/ in this repository", 0 },
	{ "check", cmd_check, "validate config and work orders, run nothing", 1 },
	{ "tick", cmd_tick, "one cron pass: reconcile, ingest, build, review, merge", 1 },
	{ "run", cmd_run, "run one work order now, in the foreground", 1 },
	{ "queue", cmd_queue, "work orders, their states and why each waits", 1 },
	{ "runs", cmd_runs, "runs, newest first", 1 },
	{ "show", cmd_show, "one run's dossier: timeline, artifacts, verdicts, conflict", 1 },
	{ "diff", cmd_diff, "a run's reviewed diff (or an attempt's), through the pager", 0 },
	{ "status", cmd_status, "a one-screen summary: queue, runs in flight, what needs a person", 1 },
	{ "log", cmd_log, "the event stream (append-only)", 1 },
	{ "notify", cmd_notify, "the notifications outbox; --replay SEQ sends one again", 1 },
	{ "approve", cmd_approve, "approve a run awaiting review (the manual reviewer)", 0 },
	{ "reject", cmd_reject, "reject a run awaiting review (the manual reviewer)", 0 },
	{ "request-changes", cmd_request_changes, "send a run awaiting review back to its builder", 0 },
	{ "retry", cmd_retry, "try a run again after a person fixed it", 0 },
	{ "abandon", cmd_abandon, "give a run up; its work order becomes failed", 0 },
	{ "audit", cmd_audit, "verify the artifacts of merged runs against git", 1 },
	{ "accept-target", cmd_accept_target, "record commits on the target as yours (after an alarm)", 0 },
	{ "freeze", cmd_freeze, "land nothing on the target (until unfreeze or a time); keep testing", 1 },
	{ "unfreeze", cmd_unfreeze, "end a freeze made by 'sluice freeze'", 1 },
	{ "watch", cmd_watch, "run the watch gates on the target's tip; bisect a red one to the landing that broke it", 1 },
	{ "cost", cmd_cost, "what the agents' attempts used: tokens and dollars, by work order, day, agent or model", 1 },
	{ "gc", cmd_gc, "remove old finished runs", 1 },
	{ "merge-preview", cmd_merge_preview, "would this merge be clean? conflicted paths", 1 },
	{ "report", cmd_report, "a page of the queue and runs; the dependency graph", 0 },
	{ "worktree", cmd_worktree, "create, clean up and inspect agent worktrees", 1 },
	{ "serve", cmd_serve, "the review desk in the browser: queue, runs, decisions, live", 0 },
	{ NULL, NULL, NULL, 0 },
};

int cmd_test_diff(struct cli *cli, int argc, char **argv);

/*
 * Hidden, not listed by --help: the internal command advance-run (a tick's
 * worker; sluice(1), INTERNAL COMMANDS), and test-* commands for tests and
 * benchmarks, not part of the contract.
 */
static const struct command hidden[] = {
	{ "advance-run", cmd_advance_run, NULL, 0 },
	{ "test-diff", cmd_test_diff, NULL, 0 },
	{ NULL, NULL, NULL, 0 },
};

static void usage(FILE *out)
{
	const struct command *c;

	fprintf(out, "usage: sluice [-C DIR] [-v] <command> [<args>]\n"
		     "       sluice <command> --help\n\n"
		     "A review-gated merge service for AI coding agents: work orders dropped in\n"
		     "a directory are built in their own worktree, gated, reviewed and merged.\n\n"
		     "commands:\n");
	for (c = commands; c->name; c++)
		fprintf(out, "  %-14s %s\n", c->name, c->summary);
	fprintf(out, "\nexit status: 0 success, 1 failure or finding, 2 usage error.\n"
		     "See sluice(1) and README.md for the work-order format and configuration.\n");
}

/* The value of a global option parser that did not end the program. */
#define GO_ON (-1)

/*
 * The global options before the command: -C DIR, -v, --help, --version.
 * *i: the index of the first argument that is no option. Returns GO_ON, or
 * the exit status when sluice is done (help, version, a usage error).
 */
static int global_options(struct cli *cli, int argc, char **argv, int *i)
{
	while (*i < argc && argv[*i][0] == '-') {
		const char *a = argv[*i];

		if (!strcmp(a, "-C") && (*i + 1 >= argc || !argv[*i + 1][0])) {
			fprintf(stderr, "sluice: -C needs a directory: sluice -C DIR <command>\n");
			return CLI_USAGE;
		} else if (!strcmp(a, "-C")) {
			cli->dir = argv[*i + 1];
			*i += 2;
		} else if (!strncmp(a, "-C", 2) && a[2]) {
			cli->dir = a + 2;
			(*i)++;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			cli->verbose++;
			(*i)++;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return CLI_OK;
		} else if (!strcmp(a, "--version")) {
			printf("sluice %s\n", SLUICE_VERSION);
			return CLI_OK;
		} else {
			fprintf(stderr, "sluice: unknown option '%s'\n", a);
			usage(stderr);
			return CLI_USAGE;
		}
	}
	return GO_ON;
}

/* The command called name, listed or hidden; NULL when there is none. */
static const struct command *find_command(const char *name)
{
	const struct command *c;

	for (c = commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	for (c = hidden; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* An unknown command: said so, with the listed command closest to it, if one is. */
static int not_a_command(const char *name)
{
	char known[1024] = "", like[64];
	size_t len = 0;

	for (const struct command *c = commands; c->name && len < sizeof(known); c++)
		len += (size_t)snprintf(known + len, sizeof(known) - len, "%s,", c->name);
	if (sl_similar(name, known, like, sizeof(like)))
		fprintf(stderr, "sluice: '%s' is not a sluice command; did you mean '%s'? "
			"See 'sluice --help'\n", name, like);
	else
		fprintf(stderr, "sluice: '%s' is not a sluice command; see 'sluice --help'\n", name);
	return CLI_USAGE;
}

/* `sluice help [COMMAND]`: the command's --help (listed or internal), or the usage. */
static int help(struct cli *cli, char *name)
{
	const struct command *c;

	if (!name) {
		usage(stdout);
		return CLI_OK;
	}
	if (!(c = find_command(name))) {
		fprintf(stderr, "sluice: '%s' is not a sluice command; see 'sluice --help'\n", name);
		return CLI_USAGE;
	}
	char *hargv[] = { name, (char *)"--help", NULL };
	return c->fn(cli, 2, hargv);
}

/* Run command c with its arguments (argv[0] its name), libgit2 set up around it. */
static int run_command(struct cli *cli, const struct command *c, int argc, char **argv)
{
	static char progname[64];
	/* repositories of sparse-checkout users have extensions.worktreeConfig */
	const char *ext[] = { "worktreeconfig" };
	int rc;

	git_libgit2_init();
	git_libgit2_opts(GIT_OPT_SET_EXTENSIONS, ext, (size_t)1);
	if (cli->verbose)
		sl_log_level = cli->verbose > 1 ? SL_LOG_DEBUG : SL_LOG_INFO;
	/* getopt names the command in its messages: "sluice tick: unrecognized option" */
	snprintf(progname, sizeof(progname), "sluice %s", c->name);
	argv[0] = progname;
	cli->cmd = c->name;
	cli->json_ok = c->json;
	rc = c->fn(cli, argc, argv);
	git_libgit2_shutdown();
	return rc;
}

int main(int argc, char **argv)
{
	struct cli cli = { NULL, 0, 0, "sluice", NULL, 0 };
	const struct command *c;
	int i = 1, rc;

	signal(SIGPIPE, SIG_IGN);
	/*
	 * Ignored SIGCHLD survives exec (a daemon or cron wrapper may hand it
	 * down): the kernel would reap our children itself, and no exit status
	 * of a builder, gate, git or worker could be read (a failed gate passed).
	 */
	signal(SIGCHLD, SIG_DFL);
	if ((rc = global_options(&cli, argc, argv, &i)) != GO_ON)
		return rc;
	if (i >= argc) {
		usage(stderr);
		return CLI_USAGE;
	}
	if (!strcmp(argv[i], "help"))
		return help(&cli, i + 1 < argc ? argv[i + 1] : NULL);
	if ((c = find_command(argv[i])) == NULL)
		return not_a_command(argv[i]);
	return run_command(&cli, c, argc - i, argv + i);
}
