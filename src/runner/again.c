/* sluice run --again WO: a failed or abandoned work order runs again, unedited. */
#include "store/store.h"
#include "runner/runner_int.h"
#include "queue/queue.h"
#include "core/fs.h"
#include "core/id.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Why a work order in state it->state cannot run again (SL_EINVALID), or 0 for failed. */
static int may_run_again(const struct queue_item *it, struct sl_err *err)
{
	const char *why = it->reason && *it->reason ? it->reason : it->state;

	if (wo_state_is(it->state, WO_FAILED))
		return it->content_hash ? 0 : sl_err_set(err, SL_EINVALID, "work order '%s' has "
							 "no revision to run", it->id);
	if (wo_state_is(it->state, WO_RUNNING))
		return sl_err_set(err, SL_EINVALID, "work order '%s' is running (%s); let it finish, "
				  "or abandon its run first", it->id, why);
	if (wo_state_is(it->state, WO_DONE))
		return sl_err_set(err, SL_EINVALID, "work order '%s' is done (%s); nothing to run "
				  "again: edit it, or write a new work order, for new work", it->id,
				  why);
	if (wo_state_is(it->state, WO_READY))
		return sl_err_set(err, SL_EINVALID, "work order '%s' has not failed, it is ready: "
				  "'sluice run %s' runs it", it->id, it->id);
	return sl_err_set(err, SL_EINVALID, "work order '%s' is %s (%s); only a failed or "
			  "abandoned work order runs again", it->id, it->state, why);
}

static int claim_again(struct sl_ctx *ctx, const struct queue_item *it, char *run_id,
		       struct sl_err *err)
{
	struct store_run run;
	char branch[256], reason[320];

	memset(&run, 0, sizeof(run));
	if (sl_id_new(run_id) != 0)
		return sl_err_set(err, SL_ERROR, "cannot make a run id (getrandom failed)");
	if (sl_fmt_fixed(branch, sizeof(branch), "run/%s-%s", it->id, sl_id_short(run_id)))
		return sl_err_set(err, SL_EINVALID, "work order id '%s' is too long for a branch name",
				  it->id);
	snprintf(reason, sizeof(reason), "claimed by sluice run --again (%s): the same revision "
		 "once more", sl_ctx_who(ctx));
	run.id = run_id;
	run.work_order_id = it->id;
	run.wo_content_hash = it->content_hash;
	run.target = ctx->target_ref;
	run.branch_name = branch;
	run.reason = reason;
	return store_run_claim(ctx->st, &run, err);
}

int runner_run_again(struct sl_ctx *ctx, const char *wo_id, char *run_id, size_t n,
		     struct sl_err *err)
{
	struct queue_plan plan = QUEUE_PLAN_INIT;
	struct queue_plan_opts po = QUEUE_PLAN_OPTS_INIT;
	struct sl_lock lock = SL_LOCK_INIT;
	const struct queue_item *it = NULL;
	char id[SL_ID_LEN + 1];
	size_t i;
	int error;

	/* under the repository lock, as a tick's claims: no two runs of it at once */
	if ((error = runner__lock_repo(ctx, &lock, err)) != 0 ||
	    (error = runner__ingest(ctx, err)) != 0)
		goto out;
	po.allow_overlap = ctx->cfg->queue.allow_overlap;
	if ((error = queue_plan(&plan, ctx->st, &po, err)) != 0)
		goto out;
	for (i = 0; i < plan.n && !it; i++)
		if (!strcmp(plan.items[i].id, wo_id))
			it = &plan.items[i];
	if (!it)
		error = sl_err_set(err, SL_ENOTFOUND,
				   "no work order '%s' in the inbox; see 'sluice queue'", wo_id);
	/* ready for the claim (which makes it running); the next plan would say failed again */
	else if ((error = may_run_again(it, err)) == 0 &&
		 (error = store_wo_set_state(ctx->st, it->id, WO_READY, "to run again", err)) == 0 &&
		 (error = claim_again(ctx, it, id, err)) == 0)
		snprintf(run_id, n, "%s", id);
out:
	queue_plan_release(&plan);
	sl_lock_release(&lock);
	return error;
}
