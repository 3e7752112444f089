/* The runner's use of the queue module: ingest, what may start, work-order outcomes. */
#include "store/store.h"
#include "runner/runner_int.h"
#include "queue/queue.h"

#include <stdlib.h>
#include <string.h>

int runner__ingest(struct sl_ctx *ctx, struct sl_err *err)
{
	return queue_ingest(ctx->st, ctx->repo.root, ctx->cfg->queue.inbox, NULL, err);
}

int runner__ready(struct sl_ctx *ctx, const char *only_wo, struct runner_ready **out,
		  size_t *n, struct sl_err *err)
{
	struct queue_plan plan = QUEUE_PLAN_INIT;
	struct queue_plan_opts po = QUEUE_PLAN_OPTS_INIT;
	struct runner_ready *v = NULL;
	size_t i, len = 0;
	int error, found = 0;

	*out = NULL;
	*n = 0;
	po.allow_overlap = ctx->cfg->queue.allow_overlap;
	po.jobs = 0; /* the tick counts its own free slots: waiting runs build nothing */
	if ((error = queue_plan(&plan, ctx->st, &po, err)) != 0)
		return error;
	if (!(v = calloc(plan.n + 1, sizeof(*v)))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	for (i = 0; i < plan.n; i++) {
		const struct queue_item *it = &plan.items[i];
		if (only_wo && strcmp(it->id, only_wo))
			continue;
		found = 1;
		if (only_wo && !it->may_start) {
			error = sl_err_set(err, SL_ECONFLICT, "work order '%s' cannot start now: %s",
					   it->id, it->explain ? it->explain : it->state);
			goto out;
		}
		if (!it->may_start || !it->content_hash)
			continue;
		v[len].id = strdup(it->id);
		snprintf(v[len].hash, sizeof(v[len].hash), "%s", it->content_hash);
		/* "ready: new revision of a done work order (...)": the run's first reason */
		if (it->reason && strcmp(it->reason, it->state))
			v[len].why = strdup(it->reason);
		len++;
	}
	if (only_wo && !found)
		error = sl_err_set(err, SL_ENOTFOUND,
				   "no work order '%s' in the inbox; see 'sluice queue'", only_wo);
out:
	queue_plan_release(&plan);
	if (error) {
		runner__ready_free(v, len);
		return error;
	}
	*out = v;
	*n = len;
	return 0;
}

void runner__ready_free(struct runner_ready *r, size_t n)
{
	size_t i;

	for (i = 0; r && i < n; i++) {
		free(r[i].id);
		free(r[i].why);
	}
	free(r);
}

int runner__count_waiting(struct sl_ctx *ctx)
{
	struct sl_err err = SL_ERR_INIT;
	int n = store_runs_count(ctx->st, run_states_where(run_state_waits), &err);

	return n > 0 ? n : 0;
}
