/* sluice accept-target COMMIT: record commits on the target as the user's. */
#include "cli/cli_runner.h"
#include "runner/runner.h"
#include "target/target.h"

#include <getopt.h>
#include <stdio.h>

static const char accept_target_help[] =
	"usage: sluice accept-target [-C DIR] COMMIT\n"
	"\n"
	"The target branch moved in a way sluice did not make, and it carries a commit\n"
	"from a run that no review landed (an unreviewed landing: 'sluice tick' and\n"
	"'sluice status' name it, and no run lands meanwhile). If you want that commit\n"
	"on the target, accept it: every commit reachable from COMMIT (which must be on\n"
	"the target) and not from the last tip sluice observed is recorded as yours,\n"
	"and landing goes on. If you do not want it, reset the target to before it\n"
	"instead (git reset, git update-ref); sluice sees that on its next tick.\n"
	"\n"
	"Accepted commits count as the user's for 'sluice audit'. See docs/audit.md.\n";

int cmd_accept_target(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	struct sl_ctx ctx = SL_CTX_INIT;
	struct target_alert a;
	struct sl_err err = SL_ERR_INIT;
	size_t n = 0;
	int c, rc, still;

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(accept_target_help);
		if (!cli_common_opt(cli, c, optarg))
			return cli_usage("accept-target", "unknown option");
	}
	if (argc - optind != 1)
		return cli_usage("accept-target", "name one commit");
	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	if ((still = target_accept(&ctx, argv[optind], &n, &a, &err)) < 0) {
		rc = cli_report(&err);
		goto out;
	}
	if (n)
		printf("accepted %zu commit%s up to %s on '%s' as yours\n", n, n == 1 ? "" : "s",
		       argv[optind], ctx.cfg->target);
	else
		printf("nothing new to accept up to %s on '%s'\n", argv[optind], ctx.cfg->target);
	if (still == 1) {
		cli_error("the target '%s' still carries commit %s from run %s that sluice did not "
			  "land; reset '%s' to before it or accept it too", ctx.cfg->target,
			  a.commit, a.run[0] ? a.run : "(unknown)", ctx.cfg->target);
		rc = CLI_FAIL;
	}
out:
	runner_ctx_release(&ctx);
	return rc;
}
