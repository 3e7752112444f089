#ifndef SL_CLI_H
#define SL_CLI_H
/*
 * The command line: main.c dispatches to one cmd_<name>() per subcommand,
 * each in src/cli/cmd_<name>.c. Only src/cli/ prints or exits.
 *
 * Exit codes: 0 success, 1 a failure or a finding, 2 a usage error.
 */
#include <stdio.h>
#include "core/err.h"

#define CLI_OK 0
#define CLI_FAIL 1
#define CLI_USAGE 2

struct cli {
	const char *dir;   /* -C DIR, or NULL for the current directory */
	int json;          /* --json where the command supports it */
	int verbose;       /* -v: more log lines */
	const char *prog;  /* "sluice" */
	const char *cmd;   /* the command's name, for messages ("tick") */
	int json_ok;       /* the command has --json output: else --json is a usage error */
};

typedef int (*cli_cmd_fn)(struct cli *cli, int argc, char **argv);

/*
 * Every command's handler: argv[0] is the command name. Each one handles
 * its own --help (printed to stdout, exit 0) and -C DIR / --json.
 */
int cmd_init(struct cli *cli, int argc, char **argv);
int cmd_check(struct cli *cli, int argc, char **argv);
int cmd_queue(struct cli *cli, int argc, char **argv);
int cmd_tick(struct cli *cli, int argc, char **argv);
int cmd_run(struct cli *cli, int argc, char **argv);
int cmd_runs(struct cli *cli, int argc, char **argv);
int cmd_show(struct cli *cli, int argc, char **argv);
int cmd_diff(struct cli *cli, int argc, char **argv);
int cmd_status(struct cli *cli, int argc, char **argv);
int cmd_log(struct cli *cli, int argc, char **argv);
int cmd_notify(struct cli *cli, int argc, char **argv);
int cmd_approve(struct cli *cli, int argc, char **argv);
int cmd_reject(struct cli *cli, int argc, char **argv);
int cmd_request_changes(struct cli *cli, int argc, char **argv);
int cmd_retry(struct cli *cli, int argc, char **argv);
int cmd_abandon(struct cli *cli, int argc, char **argv);
int cmd_audit(struct cli *cli, int argc, char **argv);
int cmd_accept_target(struct cli *cli, int argc, char **argv);
int cmd_freeze(struct cli *cli, int argc, char **argv);
int cmd_unfreeze(struct cli *cli, int argc, char **argv);
int cmd_watch(struct cli *cli, int argc, char **argv);
int cmd_cost(struct cli *cli, int argc, char **argv);
int cmd_gc(struct cli *cli, int argc, char **argv);
int cmd_merge_preview(struct cli *cli, int argc, char **argv);
int cmd_report(struct cli *cli, int argc, char **argv);
int cmd_worktree(struct cli *cli, int argc, char **argv);
int cmd_serve(struct cli *cli, int argc, char **argv);

/* Internal, not listed: a tick's worker process (cmd_advance_run.c). */
int cmd_advance_run(struct cli *cli, int argc, char **argv);

/* Print "sluice: <msg>" (and the hint, if any) to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Text from outside (titles, reasons, reviewer comments, paths) made safe to
 * print on a terminal: control characters, line breaks, C1 codes, line
 * separators and bidirectional overrides as \n, \x1b, \u202e; bytes that are
 * not UTF-8 as \xff. cli_esc_lines() keeps line breaks and tabs (multi-line
 * text such as conflict markers). The result is borrowed and stays valid for
 * the next 15 calls; NULL prints as "".
 */
const char *cli_esc(const char *s);
const char *cli_esc_lines(const char *s, int keep_lines);

/*
 * For a command that starts git (which runs filters a builder may have
 * planted) without opening a runner context: take the reviewer token named
 * by the config of the repository at `dir` (NULL: the current directory)
 * out of the environment, as runner_ctx_open() does. Quiet when there is no
 * repository or config.
 */
void cli_take_token(const char *dir);

/* Print an sl_err to stderr as "sluice: <msg>"; returns CLI_FAIL (or CLI_USAGE for SL_EINVALID args). */
int cli_report(const struct sl_err *err);


/* A usage error: "sluice <cmd>: <msg>" + "see 'sluice <cmd> --help'"; returns CLI_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Common option handling for a command. Call in the getopt_long loop's
 * default case: handles -C DIR (also accepted before the command), --json,
 * -v. Returns 1 if it consumed the option, 0 if not: then the command
 * answers with cli_usage(name, "unknown option"). --json of a command
 * without JSON output (cli->json_ok 0, main.c's table) is not consumed:
 * "'sluice X' has no --json output", exit 2.
 * Commands use the long options CLI_COMMON_LONGOPTS in their table.
 */
#define CLI_OPT_JSON 1000
#define CLI_OPT_HELP 'h'
#define CLI_COMMON_LONGOPTS                                                                        \
	{ "help", no_argument, NULL, 'h' }, { "json", no_argument, NULL, CLI_OPT_JSON },           \
		{ "verbose", no_argument, NULL, 'v' }
#define CLI_COMMON_SHORTOPTS "hC:v"
int cli_common_opt(struct cli *cli, int opt, const char *arg);

/* Print a command's help text (stdout) and return CLI_OK. */
int cli_help(const char *text);

/* Resolve the repository directory: -C DIR or ".", made absolute. Caller frees. */
char *cli_repo_dir(const struct cli *cli);

/* Whether stdout/stderr is a terminal. */
int cli_isatty_out(void);

#endif
