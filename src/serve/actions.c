/* sluice serve: a person's decisions, through the runner's functions the CLI calls. */
#include "serve/serve_int.h"
#include "runner/runner.h"

#include <stdio.h>
#include <string.h>

#define COMMENT_MAX 2048

void serve__action(struct req *r, const char *run, const char *action)
{
	struct sl_ctx *ctx = r->sv->ctx;
	struct sl_err err = SL_ERR_INIT;
	char comment[COMMENT_MAX], next[64];
	const char *c = serve__form(r, "comment", comment, sizeof(comment));
	int rc, no_comment = 0;

	if (c && !*c)
		c = NULL;
	if (!strcmp(action, "approve"))
		rc = runner_approve(ctx, run, c, &err);
	else if ((no_comment = !strcmp(action, "reject") && !c))
		rc = sl_err_set(&err, SL_EINVALID, "a rejection needs a comment: say what is wrong");
	else if (!strcmp(action, "reject"))
		rc = runner_reject(ctx, run, c, &err);
	else if (!strcmp(action, "retry"))
		rc = runner_retry(ctx, run, next, sizeof(next), &err);
	else if (!strcmp(action, "abandon"))
		rc = runner_abandon(ctx, run, 0, &err);
	else {
		serve__error(r, 404, "no action '%s': approve, reject, retry or abandon", action);
		return;
	}
	if (rc == SL_ENOTFOUND || rc == SL_EAMBIGUOUS) {
		serve__error(r, 404, "%s", err.msg);
	} else if (rc) {
		/* the runner refuses what the run's state does not allow: a conflict with it */
		r->status = no_comment ? 400 : 409;
		serve__run_page(r, run, err.msg);
	} else {
		serve__redirect(r, "/runs/%s?done=%s", run, action);
	}
}
