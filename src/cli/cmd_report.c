/* sluice report: the queue and runs as one HTML page; the dependency graph in DOT. */
#include "cli/cli_runner.h"
#include "artifact/artifact.h"
#include "core/fs.h"

#include <getopt.h>
#include <string.h>

static const char report_help[] =
	"usage: sluice report [-C DIR] [--html FILE] [--dot FILE]\n"
	"\n"
	"Write one self-contained HTML page (inline CSS and SVG, no scripts, no external\n"
	"assets) with the queue (work orders, state, reason), the runs by state, each\n"
	"run's timeline and the time spent per stage, and the work-order dependency\n"
	"graph drawn in layers by dependency depth, each merge gate's flake rate\n"
	"(of the trees it ran on, those it both passed and failed), and what agents\n"
	"cost: per merged and per failed work order, on rejected runs and on conflicts\n"
	"(docs/budgets.md), and the watch: the watch gates' newest runs with the\n"
	"bisections' steps, and the landings reverted with their fix-ups\n"
	"(docs/watch.md). --dot writes the same graph in\n"
	"Graphviz DOT (render with: dot -Tsvg FILE > graph.svg). FILE '-' is stdout;\n"
	"with neither option the page goes to stdout.\n"
	"\n"
	"  --html FILE  the HTML page\n"
	"  --dot FILE   the dependency graph in DOT\n";

static int emit(const char *file, const struct sl_buf *b, struct sl_err *err)
{
	if (!strcmp(file, "-")) {
		fwrite(sl_buf_cstr(b), 1, b->len, stdout);
		return 0;
	}
	return sl_write_file_atomic(file, sl_buf_cstr(b), b->len, err);
}

static int report(struct cli *cli, const char *html, const char *dot)
{
	struct sl_ctx ctx = SL_CTX_INIT;
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	int rc;

	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	if (html && (artifact_report_html(&ctx, &b, &err) != 0 || emit(html, &b, &err) != 0))
		goto fail;
	sl_buf_reset(&b);
	if (dot && (artifact_report_dot(&ctx, &b, &err) != 0 || emit(dot, &b, &err) != 0))
		goto fail;
	if (html && strcmp(html, "-"))
		fprintf(stderr, "wrote %s\n", html);
	if (dot && strcmp(dot, "-"))
		fprintf(stderr, "wrote %s\n", dot);
	goto out;
fail:
	rc = cli_report(&err);
out:
	sl_buf_release(&b);
	runner_ctx_release(&ctx);
	return rc;
}

int cmd_report(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS,
					      { "html", required_argument, NULL, 'H' },
					      { "dot", required_argument, NULL, 'D' },
					      { NULL, 0, NULL, 0 } };
	const char *html = NULL, *dot = NULL;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(report_help);
		else if (c == 'H')
			html = optarg;
		else if (c == 'D')
			dot = optarg;
		else if (!cli_common_opt(cli, c, optarg))
			return cli_usage("report", "unknown option");
	}
	if (optind < argc)
		return cli_usage("report", "unexpected argument '%s'", argv[optind]);
	if (!html && !dot)
		html = "-";
	return report(cli, html, dot);
}
