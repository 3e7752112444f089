/* mode command: the request on a local program's stdin, the verdict on its stdout. */
#include "reviewer/reviewer.h"
#include "reviewer/reviewer_int.h"
#include "core/proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_ran(const struct sl_config *cfg, const struct sl_proc_result *res,
                     const struct sl_buf *errout, struct reviewer_log *log, struct sl_err *err)
{
	char how[96], snip[160] = "";
	const char *token = NULL;
	char *red;

	if (!res->timed_out && !res->signaled && res->exit_code == 0 && !res->out_truncated)
		return 0;
	if (res->out_truncated)
		return sl_err_set(
		        err, SL_EINVALID,
		        "reviewer command '%s' wrote more than reviewer.max_reply; fix the command",
		        cfg->reviewer.command[0]);
	sl_proc_describe(how, sizeof(how), res);
	reviewer__token(&token, cfg, NULL);
	if ((red = reviewer__redact_str(sl_buf_cstr(errout), token)))
		reviewer__snippet(snip, sizeof(snip), red, strlen(red));
	free(red);
	snprintf(log->last, sizeof(log->last), "reviewer command %s", how);
	return sl_err_set(err, res->timed_out ? SL_ETRANSIENT : SL_EINVALID,
	                  "reviewer command '%s' failed (%s)%s%s", cfg->reviewer.command[0], how,
	                  *snip ? ": " : "", snip);
}

int reviewer__command(const struct sl_config *cfg, const char *body, struct sl_buf *reply,
                      struct reviewer_log *log, struct sl_err *err)
{
	struct sl_proc_opts opts = SL_PROC_OPTS_INIT;
	struct sl_proc_result res = {0};
	struct sl_buf errout;
	int error;

	if (!cfg->reviewer.command || !cfg->reviewer.command[0])
		return sl_err_set(err, SL_EINVALID,
		                  "reviewer.mode is command but reviewer.command is empty; set the "
		                  "program to run");
	sl_buf_init(&errout, 4096);
	opts.argv = (const char *const *)cfg->reviewer.command;
	opts.stdin_data = body;
	opts.stdin_len = strlen(body);
	opts.out = reply;
	opts.errout = &errout;
	opts.timeout_ms = cfg->reviewer.timeout_ms > 0 ? cfg->reviewer.timeout_ms : 120000;
	log->tries = 1;
	error = sl_proc_run(&opts, &res, err);
	log->elapsed_ms = res.duration_ms;
	if (!error)
		error = check_ran(cfg, &res, &errout, log, err);
	sl_buf_release(&errout);
	return error;
}
