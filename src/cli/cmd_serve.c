/* sluice serve: the review desk in the browser (docs/serve.md). */
#include "cli/cli.h"
#include "runner/runner.h"
#include "serve/serve.h"

#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char serve_help[] =
	"usage: sluice serve [-C DIR] [--listen ADDR:PORT] [--read-only] [--token HEX]\n"
	"\n"
	"The review desk: a web server for this repository, on 127.0.0.1 and a free\n"
	"port unless --listen says otherwise. It prints the address to open, with a\n"
	"random token (?token=...) that the browser then keeps as a cookie; without\n"
	"the token nothing is served. Pages: the queue (with the reasons of\n"
	"--explain and the dependency graph), the runs (filtered by state and work\n"
	"order, 50 a page), a run's dossier, its diff (files collapsed, 25 a page),\n"
	"the conflict of a run in merge_conflict (both work orders side by side, the\n"
	"conflicted hunks, what to do next), and the audit. Buttons approve and\n"
	"reject (the manual reviewer), retry and abandon: the same as the sluice\n"
	"commands, recorded as '<user> via sluice serve'. The pages follow the event\n"
	"stream live. It runs until interrupted (Ctrl-C, SIGTERM).\n"
	"\n"
	"  --listen ADDR:PORT  an IPv4 address and port (default 127.0.0.1:0, 0: a\n"
	"                      free port); anything but loopback lets others on the\n"
	"                      network reach it, without TLS\n"
	"  --read-only         no buttons and no action is served\n"
	"  --token HEX         the token to require (16-64 hex digits; default random)\n"
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
					      { NULL, 0, NULL, 0 } };
	struct serve_opts o = SERVE_OPTS_INIT;
	char host[64];
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(serve_help);
		else if (c == 'R')
			o.read_only = 1;
		else if (c == 'T')
			o.token = optarg;
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
	return run_serve(cli, &o);
}
