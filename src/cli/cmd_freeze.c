/* sluice freeze [--until TIME] [--allow-urgent] -m REASON, sluice unfreeze: the target lands nothing. */
#include "cli/cli_runner.h"
#include "runner/runner.h"
#include "store/store.h"
#include "train/train.h"
#include "core/config.h"
#include "core/ctx.h"
#include "core/time.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char freeze_help[] =
	"usage: sluice freeze [-C DIR] [--until TIME] [--allow-urgent] [--json] -m REASON\n"
	"\n"
	"Freeze the target branch: the merge train keeps building and testing approved\n"
	"runs, and lands none of them until 'sluice unfreeze' (or TIME). The reason shows\n"
	"in 'sluice status', 'sluice queue' and the desk: \"wait: frozen (REASON)\".\n"
	"A landing already under way finishes.\n"
	"\n"
	"  -m, --message REASON  why (required)\n"
	"  --until TIME          the freeze ends by itself at TIME, an ISO 8601 time with\n"
	"                        its zone: 2026-11-28T18:00Z, 2026-11-28T18:00:00+01:00;\n"
	"                        a time without a zone, a date alone or a duration is\n"
	"                        refused. A TIME already past freezes nothing and ends\n"
	"                        no freeze in place (it says whether one holds).\n"
	"  --allow-urgent        work orders with 'priority: urgent' land through it\n"
	"  --json                {target, frozen, reason, until, allow_urgent}\n"
	"\n"
	"Freezing again replaces the freeze. Windows that freeze by themselves (weekends,\n"
	"release days) are 'merge.freeze' in the config: see docs/config.md.\n";

/* Print j (one JSON document) and drop it: cli_print_json() keeps the caller's reference. */
static int cli_print_owned(json_t *j)
{
	int rc = cli_print_json(j);

	json_decref(j);
	return rc;
}

/*
 * --until TIME already past freezes nothing, and says whether the target
 * stays frozen by a freeze in place or a window (a past TIME ends neither).
 */
static int past(struct cli *cli, struct sl_ctx *ctx, const char *until)
{
	struct train_freeze f;

	train_frozen(ctx, sl_now_ms(), &f);
	if (cli->json)
		return cli_print_owned(json_pack("{s:s, s:b, s:o}", "target", ctx->cfg->target,
						 "frozen", f.frozen, "holding", train_freeze_json(&f)));
	printf("'%s' is past: nothing frozen\n", until);
	if (f.frozen)
		printf("'%s' stays frozen (%s): %s\n", ctx->cfg->target, f.reason,
		       f.by_person ? "'sluice unfreeze' ends the freeze in place"
				   : "a window of merge.freeze in the config holds");
	return CLI_OK;
}

static int do_freeze(struct cli *cli, const char *reason, const char *until, int urgent)
{
	struct sl_ctx ctx = SL_CTX_INIT;
	struct sl_err err = SL_ERR_INIT;
	int64_t until_ms = 0;
	char when[64];
	int rc;

	if (until && sl_time_parse_iso(&until_ms, until, &err) != 0)
		return cli_usage("freeze", "%s", err.msg);
	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	if (until && until_ms <= sl_now_ms()) {
		rc = past(cli, &ctx, until);
		goto out;
	}
	if (store_freeze_set(ctx.st, ctx.target_ref, reason, until_ms, urgent, &err) != 0) {
		rc = cli_report(&err);
		goto out;
	}
	sl_time_iso(when, sizeof(when), until_ms);
	if (cli->json) {
		rc = cli_print_owned(json_pack("{s:s, s:b, s:s, s:s?, s:b}", "target", ctx.cfg->target,
					      "frozen", 1, "reason", reason, "until",
					      until ? when : NULL, "allow_urgent", urgent));
		goto out;
	}
	printf("froze '%s'%s%s%s: %s\n", ctx.cfg->target, until ? " until " : "",
	       until ? when : "", urgent ? " (urgent work lands)" : "", reason);
out:
	runner_ctx_release(&ctx);
	return rc;
}

static const char unfreeze_help[] =
	"usage: sluice unfreeze [-C DIR] [--json]\n"
	"\n"
	"End the freeze 'sluice freeze' made: the next tick lands the green cars. The\n"
	"windows of 'merge.freeze' in the config are not ended by it (sluice status says\n"
	"whether one holds). With --json: {target, unfrozen, windows}. See 'sluice\n"
	"freeze --help'.\n";

int cmd_freeze(struct cli *cli, int argc, char **argv)
{
	enum { O_UNTIL = CLI_OPT_JSON + 1, O_URGENT }; /* not CLI_OPT_JSON's number */
	static const struct option opts[] = { CLI_COMMON_LONGOPTS,
					      { "message", required_argument, NULL, 'm' },
					      { "until", required_argument, NULL, O_UNTIL },
					      { "allow-urgent", no_argument, NULL, O_URGENT },
					      { NULL, 0, NULL, 0 } };
	const char *reason = NULL, *until = NULL;
	int c, urgent = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "m:", opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(freeze_help);
		if (c == 'm')
			reason = optarg;
		else if (c == O_UNTIL)
			until = optarg;
		else if (c == O_URGENT)
			urgent = 1;
		else if (!cli_common_opt(cli, c, optarg))
			return cli_usage("freeze", "unknown option");
	}
	if (argc > optind)
		return cli_usage("freeze", "too many arguments; quote the reason: -m \"release 2.0\"");
	if (!reason || !reason[0])
		return cli_usage("freeze", "say why with -m REASON (it shows in status and the queue)");
	if (strlen(reason) > 200 || strpbrk(reason, "\n\r"))
		return cli_usage("freeze", "the reason must be one line of at most 200 bytes");
	return do_freeze(cli, reason, until, urgent);
}

int cmd_unfreeze(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	struct sl_ctx ctx = SL_CTX_INIT;
	struct sl_err err = SL_ERR_INIT;
	int c, rc, had = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, opts, NULL)) != -1) {
		if (c == 'h')
			return cli_help(unfreeze_help);
		if (!cli_common_opt(cli, c, optarg))
			return cli_usage("unfreeze", "unknown option");
	}
	if (argc > optind)
		return cli_usage("unfreeze", "takes no arguments");
	if ((rc = cli_ctx_open(cli, &ctx)) != CLI_OK)
		return rc;
	if (store_freeze_clear(ctx.st, ctx.target_ref, &had, &err) != 0)
		rc = cli_report(&err);
	else if (cli->json)
		rc = cli_print_owned(json_pack("{s:s, s:b, s:b}", "target", ctx.cfg->target,
					      "unfrozen", had, "windows", ctx.cfg->merge.nfreeze > 0));
	else if (had)
		printf("unfroze '%s'\n", ctx.cfg->target);
	else
		printf("'%s' was not frozen by 'sluice freeze'\n", ctx.cfg->target);
	if (!rc && !cli->json && ctx.cfg->merge.nfreeze)
		printf("hint: merge.freeze in the config may still freeze it (see 'sluice status')\n");
	runner_ctx_release(&ctx);
	return rc;
}
