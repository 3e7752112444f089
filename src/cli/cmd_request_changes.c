/* sluice request-changes */
#include "cli/cli_runner.h"

static const char help[] =
"usage: sluice request-changes [-C DIR] RUN -m TEXT [--head SHA]\n"
	"\n"
	"The manual reviewer: send a run that is awaiting_review back to its builder.\n"
	"The run builds again, with TEXT as the reviewer's comments in the next\n"
	"prompt, exactly as after a reviewer's request_changes verdict and under the\n"
	"same retry rules (docs/builders.md: the pseudo-gate 'review'); then its gates\n"
	"and the review again. The work order stays running; nothing is notified.\n"
	"Refused, nothing done, when the retry rules allow no other attempt: then\n"
	"approve, reject, or add a retry rule. The comment is kept in review.json\n"
	"and attempts/N/review.json.\n"
	"\n"
	"  -m, --message TEXT   what to change (required)\n"
	"  --head SHA           only if the run's head commit is still SHA, the full id\n"
	"                       you read ('sluice show RUN'); else refused, nothing done\n";

static int act_changes(struct sl_ctx *ctx, const char *run, const char *message,
		       int delete_branch, const struct runner_seen *seen, struct sl_err *err)
{
	(void)delete_branch;
	return runner_request_changes_seen(ctx, run, message, seen, err);
}

int cmd_request_changes(struct cli *cli, int argc, char **argv)
{
	static const struct cli_run_action a = {
		"request-changes", help, 1, act_changes,
		"%s: asked for changes; the next 'sluice tick' builds it again\n"
	};

	return cli_run_command(cli, argc, argv, &a);
}
