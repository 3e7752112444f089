/* sluice serve: the review desk in the browser (docs/serve.md). */
#include "cli/cli.h"
#include "runner/runner.h"
#include "serve/serve.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char serve_help[] =
	"usage: sluice serve [-C DIR] [--listen ADDR:PORT] [--read-only] [--token-file PATH]\n"
	"\n"
	"The review desk: a web server for this repository, on 127.0.0.1 and a free\n"
	"port unless --listen says otherwise. It prints the address to open, with a\n"
	"random token (?token=...) that the browser then keeps as the password of\n"
	"this address (HTTP authentication: sent to this port only, never as a\n"
	"cookie to the other servers of 127.0.0.1); without it nothing is served.\n"
	"Pages: the queue (a board by state, with the reasons of --explain and the\n"
	"dependency graph), the runs (filtered by state and work order, 50 a page),\n"
	"a run's page (the goal and acceptance criteria, the gates with a failing\n"
	"gate's output, the verdict per criterion, the diff with line numbers,\n"
	"unified or side by side, the builder's log live, then the buttons), the\n"
	"whole diff (25 files a page; attempt N against N-1), the conflict of a run\n"
	"in merge_conflict (both work orders side by side, the conflicted hunks,\n"
	"what to do next), and the audit. Buttons approve, request changes and\n"
	"reject (the manual reviewer), retry and abandon (which asks first): the\n"
	"same as the sluice commands, recorded as '<user> via sluice serve'. The\n"
	"pages follow the event stream live. It runs until interrupted (Ctrl-C,\n"
	"SIGTERM).\n"
	"\n"
	"  --listen ADDR:PORT  an IPv4 address and port (default 127.0.0.1:0, 0: a\n"
	"                      free port); anything but loopback lets others on the\n"
	"                      network reach it, without TLS\n"
	"  --read-only         no buttons and no action is served\n"
	"  --token-file PATH   the token to require (16-64 hex digits) from PATH, a\n"
	"                      file no one but you can read (chmod 600); or from\n"
	"                      $SLUICE_SERVE_TOKEN; default random. Never on the\n"
	"                      command line, which every local user can read\n"
	"\n"
	"Needs libmicrohttpd (Debian: libmicrohttpd12). See docs/serve.md.\n";

static int parse_listen(const char *s, char *host, size_t n, int *port)
{
	const char *colon = strrchr(s, ':');
	char *end;
	long p;

	if (!colon || (size_t)(colon - s) >= n || colon == s)
		return -1;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	p = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || p < 0 || p > 65535)
		return -1;
	*port = (int)p;
	return 0;
}

/*
 * The token from a file only its owner can read: a line of hex digits (its
 * form is checked by serve_start). Read without following a link.
 */
static int read_token_file(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	ssize_t got = -1;

	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		cli_error("cannot read the token file '%s': %s", cli_esc(path),
			  fd < 0 ? strerror(errno) : "not a regular file");
	} else if (st.st_mode & 077) {
		cli_error("the token file '%s' can be read or written by others (mode %03o): "
			  "chmod 600 it", cli_esc(path), (unsigned)(st.st_mode & 0777));
	} else if ((got = read(fd, buf, n - 1)) < 0) {
		cli_error("cannot read the token file '%s': %s", cli_esc(path), strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	if (got < 0)
		return -1;
	buf[got] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	return 0;
}

/*
 * The token the person chose: --token-file, or SLUICE_SERVE_TOKEN (overwritten
 * and taken out of the environment, so that nothing serve starts inherits
 * it). Never argv:
 * /proc/PID/cmdline is readable by every local user.
 */
static int take_token(const char *file, char *buf, size_t n, const char **token)
{
	const char *env = getenv("SLUICE_SERVE_TOKEN");

	if (file && env)
		return cli_usage("serve", "the token comes from --token-file or from "
				 "SLUICE_SERVE_TOKEN, not both");
	if (file && read_token_file(file, buf, n) != 0)
		return CLI_FAIL;
	if (env) {
		snprintf(buf, n, "%s", env);
		memset((char *)env, 'x', strlen(env)); /* /proc/PID/environ shows this memory */
	}
	unsetenv("SLUICE_SERVE_TOKEN");
	*token = (file || env) ? buf : NULL;
	return CLI_OK;
}

static int wait_for_signal(void)
{
	sigset_t set;
	int sig = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	sigwait(&set, &sig);
	return sig;
}

static int run_serve(struct cli *cli, struct serve_opts *o)
{
	struct sl_ctx ctx = SL_CTX_INIT;
	struct sl_err err = SL_ERR_INIT;
	struct serve *sv = NULL;
	sigset_t set;

	/* blocked before the server's threads start, so that they inherit it */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (runner_ctx_open(&ctx, cli->dir, &err) != 0 || serve_start(&sv, &ctx, o, &err) != 0) {
		runner_ctx_release(&ctx);
		return cli_report(&err);
	}
	printf("sluice serve: the review desk of %s is at\n  %s\n%s(Ctrl-C stops it)\n",
	       ctx.repo.root, serve_url(sv), o->read_only ? "read-only " : "");
	fflush(stdout);
	wait_for_signal();
	serve_stop(sv);
	runner_ctx_release(&ctx);
	return CLI_OK;
}

int cmd_serve(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS,
					      { "listen", required_argument, NULL, 'L' },
					      { "read-only", no_argument, NULL, 'R' },
					      { "token", required_argument, NULL, 'T' },
					      { "token-file", required_argument, NULL, 'F' },
					      { NULL, 0, NULL, 0 } };
	struct serve_opts o = SERVE_OPTS_INIT;
	const char *token_file = NULL;
	char host[64], token[256];
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(serve_help);
		else if (c == 'R')
			o.read_only = 1;
		else if (c == 'T')
			return cli_usage("serve", "--token would show the token to every local user "
					 "(/proc/PID/cmdline): give it in a file only you can "
					 "read (--token-file PATH) or in SLUICE_SERVE_TOKEN");
		else if (c == 'F')
			token_file = optarg;
		else if (c == 'L' && parse_listen(optarg, host, sizeof(host), &o.port) == 0)
			o.host = host;
		else if (c == 'L')
			return cli_usage("serve", "--listen wants ADDR:PORT, such as 127.0.0.1:8080 "
					 "(port 0: a free one), not '%s'", optarg);
		else if (!cli_common_opt(cli, c, optarg))
			return cli_usage("serve", "unknown option");
	}
	if (optind < argc)
		return cli_usage("serve", "unexpected argument '%s'", argv[optind]);
	if ((rc = take_token(token_file, token, sizeof(token), &o.token)) != CLI_OK)
		return rc;
	return run_serve(cli, &o);
}
