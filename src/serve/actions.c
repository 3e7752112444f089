/* sluice serve: a person's decisions, through the runner's functions the CLI calls. */
#include "serve/serve_int.h"
#include "runner/runner.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COMMENT_MAX 2048

/* What the form says its page showed of the run (serve__action_form). */
struct form_seen {
	char head[72];
	char attempt[16];
	char state[40];
	struct runner_seen seen;
};

/* "" (no head yet), or a full commit id: 40 or 64 lower-case hex digits. */
static int head_ok(const char *h)
{
	size_t n = strlen(h);

	return strspn(h, "0123456789abcdef") == n && (n == 0 || n == 40 || n == 64);
}

/*
 * Every action form carries the head, attempt and state it was rendered
 * for; a form without them (or with a value no page writes) is refused,
 * never taken as "whatever the run is now". 0, or 400 and why.
 */
static int read_seen(struct req *r, struct form_seen *f, const char **why)
{
	enum run_state st;
	char *end;
	long a;

	*why = "this form does not say which head, attempt and state of the run it was made "
	       "for (a page of an older sluice serve?); nothing was done: reload the page";
	if (!serve__form(r, "head", f->head, sizeof(f->head)) ||
	    !serve__form(r, "attempt", f->attempt, sizeof(f->attempt)) ||
	    !serve__form(r, "state", f->state, sizeof(f->state)))
		return 400;
	a = strtol(f->attempt, &end, 10);
	*why = "this form's head, attempt or state is not one a page of this desk writes; "
	       "nothing was done: reload the page";
	if (!head_ok(f->head) || !*f->attempt || *end || a < 0 || a > 1000000 ||
	    strspn(f->attempt, "0123456789") != strlen(f->attempt) ||
	    run_state_parse(f->state, &st) != 0)
		return 400;
	f->seen.head = f->head;
	f->seen.attempt = (int)a;
	f->seen.state = f->state;
	f->seen.where = "this page showed; nothing was done: reload to see it";
	return 0;
}

/* Call the runner's command for `action`. */
static int act(struct req *r, const char *run, const char *action, const char *c,
	       const struct form_seen *f, struct sl_err *err)
{
	const struct runner_seen *seen = &f->seen;
	struct sl_ctx *ctx = r->sv->ctx;
	char next[64];

	if (!strcmp(action, "approve"))
		return runner_approve_seen(ctx, run, c, seen, err);
	if (!strcmp(action, "reject") && !c)
		return sl_err_set(err, SL_EINVALID, "a rejection needs a comment: say what is wrong");
	if (!strcmp(action, "reject"))
		return runner_reject_seen(ctx, run, c, seen, err);
	if (!strcmp(action, "retry"))
		return runner_retry_seen(ctx, run, next, sizeof(next), seen, err);
	if (!strcmp(action, "abandon"))
		return runner_abandon_seen(ctx, run, 0, seen, err);
	if (!strcmp(action, "request-changes") && !c)
		return sl_err_set(err, SL_EINVALID, "a request for changes needs a comment: say "
				  "what to change");
	if (!strcmp(action, "request-changes"))
		return runner_request_changes_seen(ctx, run, c, seen, err);
	return sl_err_set(err, SL_ENOTFOUND, "no action '%s'", action);
}

void serve__action(struct req *r, const char *run, const char *action)
{
	static const char *const known[] = { "approve", "reject", "retry", "abandon",
					     "request-changes", NULL };
	struct sl_err err = SL_ERR_INIT;
	struct form_seen f = { .seen = RUNNER_SEEN_INIT };
	char comment[COMMENT_MAX];
	const char *c = serve__form(r, "comment", comment, sizeof(comment)), *why;
	const char *const *k;
	int rc;

	for (k = known; *k && strcmp(*k, action); k++)
		;
	if (!*k) {
		serve__error(r, 404, "no action '%s': approve, request-changes, reject, retry or "
			     "abandon", action);
		return;
	}
	if (read_seen(r, &f, &why) != 0) {
		r->status = 400;
		serve__run_page(r, run, why);
		return;
	}
	if (c && !*c)
		c = NULL;
	rc = act(r, run, action, c, &f, &err);
	if (rc == SL_ENOTFOUND || rc == SL_EAMBIGUOUS) {
		serve__error(r, 404, "%s", err.msg);
	} else if (r->status == 501) {
		serve__error(r, 501, "%s", err.msg);
	} else if (rc) {
		/* refused: a bad form (400), or what the run is now does not allow it (409) */
		r->status = (!strcmp(action, "reject") || !strcmp(action, "request-changes")) && !c
			? 400 : 409;
		serve__run_page(r, run, err.msg);
	} else {
		serve__redirect(r, "/runs/%s?done=%s", run, action);
	}
}

void serve__abandon_page(struct req *r, const char *run)
{
	struct artifact_page p = { &r->out, 0 };
	struct sl_err err = SL_ERR_INIT;
	json_t *d = NULL, *rj;
	int rc = artifact_dossier(r->sv->ctx, run, &d, &err);

	if (rc) {
		serve__error(r, rc == SL_ENOTFOUND || rc == SL_EAMBIGUOUS ? 404 : 500, "%s", err.msg);
		return;
	}
	rj = json_object_get(d, "run");
	serve__page_begin(r, &p, "abandon");
	artifact_put(&p, "<h2>Abandon run <code>");
	artifact_put_esc(&p, json_string_value(json_object_get(rj, "id")));
	artifact_put(&p, "</code>?</h2>\n<p>It is ");
	artifact_badge(&p, json_string_value(json_object_get(rj, "state")));
	artifact_putf(&p, " on attempt %lld. Abandoned, it is never built or merged again; its "
			  "branch and artifacts stay.</p>\n<div class=\"actions\">",
		      (long long)json_integer_value(json_object_get(rj, "attempt")));
	serve__action_form(r, &p, rj, "abandon", "Abandon it", 0);
	artifact_put(&p, "<a class=\"cancel\" href=\"/runs/");
	artifact_put_esc(&p, json_string_value(json_object_get(rj, "id")));
	artifact_put(&p, "\">No, back to the run</a></div>\n");
	serve__page_end(r, &p);
	json_decref(d);
}
