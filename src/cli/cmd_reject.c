/* sluice reject */
#include "cli/cli_runner.h"

#include <getopt.h>
#include <string.h>

static const char help[] =
"usage: sluice reject [-C DIR] RUN -m TEXT\n"
	"\n"
	"The manual reviewer: reject a run that is awaiting_review. The run ends\n"
	"rejected and its work order failed; the reason is kept in review.json.\n"
	"\n"
	"  -m, --message TEXT   why (required)\n";

int cmd_reject(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS,
					      { "message", required_argument, NULL, 'm' },
					      { "delete-branch", no_argument, NULL, 'D' },
					      { NULL, 0, NULL, 0 } };
	struct runner_ctx ctx = RUNNER_CTX_INIT;
	struct sl_err err = SL_ERR_INIT;
	const char *message = NULL;
	int c, rc, delete_branch = 0;
	char next[64] = "";

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "m:", opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(help);
		else if (c == 'm')
			message = optarg;
		else if (c == 'D')
			delete_branch = 1;
		else if (!cli_common_opt(cli, c, optarg))
			return cli_usage("reject", "unknown option");
	}
	if (optind != argc - 1)
		return cli_usage("reject", "name one run (its id or a unique prefix)");
	if (!message || !*message)
		return cli_usage("reject", "a rejection needs a reason: -m TEXT");
	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	if (runner_reject(&ctx, argv[optind], message, &err) != 0)
		rc = cli_report(&err);
	else
		printf("rejected %s\n", argv[optind]);
	runner_ctx_release(&ctx);
	(void)next;
	(void)message;
	(void)delete_branch;
	return rc;
}
