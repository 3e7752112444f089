/* Retry rules (builder.h). */
#include "builder/builder.h"
#include "core/buf.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/log.h"
#include "store/store.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int listed(const char *const *v, const char *name)
{
	for (; v && *v; v++)
		if (strcmp(*v, name) == 0)
			return 1;
	return 0;
}

static int is_pseudo(const char *name)
{
	return strcmp(name, "builder") == 0 || strcmp(name, "review") == 0 ||
	       strcmp(name, BUILD_NO_CHANGE) == 0 || strcmp(name, BUILD_NO_WRITE) == 0;
}

static void describe_gates(struct sl_buf *b, const char *const *failed)
{
	size_t n = 0, k = 0;

	for (const char *const *f = failed; f && *f; f++)
		n += !is_pseudo(*f);
	if (!n)
		return;
	sl_buf_puts(b, n > 1 ? "gates " : "gate ");
	for (const char *const *f = failed; f && *f; f++)
		if (!is_pseudo(*f))
			sl_buf_addf(b, "%s'%s'", k++ ? ", " : "", *f);
	sl_buf_puts(b, " failed");
}

/* "gate 'test' failed", "gates 'test', 'lint' failed; builder failed (exit 3)", ... */
static void describe_failure(char *out, size_t n, const char *const *failed, int builder_exit)
{
	struct sl_buf b = SL_BUF_INIT;

	if (builder_exit != 0)
		sl_buf_addf(&b, "builder failed (exit %d)", builder_exit);
	else if (listed(failed, BUILD_NO_CHANGE))
		sl_buf_puts(&b, "the builder exited 0 but changed nothing");
	else if (listed(failed, "builder"))
		sl_buf_puts(&b, "builder failed");
	if (listed(failed, BUILD_NO_WRITE))
		sl_buf_addf(&b, "%sthe builder wrote in its read-only worktree", b.len ? "; " : "");
	if (builder_exit != 0 && listed(failed, BUILD_NO_CHANGE))
		sl_buf_puts(&b, " and changed nothing");
	if (b.len)
		sl_buf_puts(&b, "; ");
	describe_gates(&b, failed);
	if (b.len >= 2 && strcmp(b.ptr + b.len - 2, "; ") == 0)
		b.ptr[b.len -= 2] = '\0';
	if (listed(failed, "review"))
		sl_buf_addf(&b, "%sreviewer requested changes", b.len ? "; " : "");
	snprintf(out, n, "%s", b.len ? b.ptr : "attempt failed");
	sl_buf_release(&b);
}

/* Does rule r activate for the attempt `next` after `failed` failed? */
static int activates(const struct sl_retry_rule *r, int next, const char *const *failed,
		     int builder_exit)
{
	switch (r->kind) {
	case SL_RETRY_ATTEMPT:
		return next == r->n;
	case SL_RETRY_NOT_GATE:
		return r->gate && (listed(failed, r->gate) ||
				   (strcmp(r->gate, "builder") == 0 && builder_exit != 0));
	default:
		return 0;
	}
}

static void activate(struct build_retry_state *st, const struct sl_retry_rule *r, int idx)
{
	if (r->builder || r->agent)
		st->builder_rule = idx;
	if (r->session)
		st->session_rule = idx;
	if (r->prompt)
		st->prompt_rule = idx;
	if (r->worktree_reset)
		st->reset_rule = idx;
}

/* The smallest exit: N, or 0 when there is none. */
static int exit_at(const struct sl_config *cfg)
{
	int at = 0;

	for (size_t i = 0; i < cfg->nretry; i++)
		if (cfg->retry[i].kind == SL_RETRY_EXIT && (!at || cfg->retry[i].n < at))
			at = cfg->retry[i].n;
	return at;
}

static int valid_index(const struct sl_config *cfg, int i)
{
	return i >= 0 && (size_t)i < cfg->nretry;
}

void build_retry_overrides(const struct sl_config *cfg, const struct build_retry_state *st,
			    struct build_retry_overrides *out)
{
	memset(out, 0, sizeof(*out));
	if (valid_index(cfg, st->builder_rule)) {
		out->builder = (const char *const *)cfg->retry[st->builder_rule].builder;
		out->agent = cfg->retry[st->builder_rule].agent;
	}
	if (valid_index(cfg, st->session_rule))
		out->session = cfg->retry[st->session_rule].session;
	if (valid_index(cfg, st->prompt_rule))
		out->prompt = cfg->retry[st->prompt_rule].prompt;
	if (valid_index(cfg, st->reset_rule))
		out->worktree_reset = cfg->retry[st->reset_rule].worktree_reset;
}

static void describe_overrides(char *out, size_t n, const struct sl_config *cfg,
			       const struct build_retry_state *st)
{
	size_t len = 0;
	const int rules[4] = { st->builder_rule, st->prompt_rule, st->reset_rule,
			       st->session_rule };
	const char *names[4] = { "builder", "prompt", "worktree reset", "session" };
	char what[96];

	out[0] = '\0';
	for (int k = 0; k < 4; k++) {
		const struct sl_retry_rule *r = valid_index(cfg, rules[k]) ? &cfg->retry[rules[k]]
									   : NULL;
		if (!r || len >= n)
			continue;
		if (k == 0 && r->agent)
			snprintf(what, sizeof(what), "agent %.64s", r->agent);
		else if (k == 3)
			snprintf(what, sizeof(what), "session %s",
				 r->session == SL_SESSION_KEEP ? "keep" : "new");
		else
			snprintf(what, sizeof(what), "%s", names[k]);
		len += (size_t)snprintf(out + len, n - len, "%s%s from retry rule %d",
					len ? ", " : " with ", what, rules[k] + 1);
	}
}

int build_retry_decide(const struct sl_config *cfg, const struct build_retry_state *prev,
			int attempt_failed, const char *const *failed, int builder_exit,
			struct build_retry_decision *d, struct sl_err *err)
{
	return build_retry_decide_validated(cfg, prev, attempt_failed, failed, builder_exit, NULL,
					    d, err);
}

/* Does validator rule i hold after attempt_failed (0 for the other kinds)? Its verdict goes to d. */
static int validator_holds(const struct sl_config *cfg, size_t i, int attempt_failed,
			   const struct build_validate_ctx *vc, int *held,
			   struct build_retry_decision *d, struct sl_err *err)
{
	char said[1024];
	size_t len = strlen(d->verdicts);
	int error;

	*held = 0;
	if (cfg->retry[i].kind != SL_RETRY_VALIDATE || !vc)
		return 0;
	if ((error = build_validate_rule(cfg, (int)i, attempt_failed, vc, held, said, sizeof(said),
					 err)) != 0)
		return error;
	if (len < sizeof(d->verdicts))
		snprintf(d->verdicts + len, sizeof(d->verdicts) - len, "%s%s", len ? "\n" : "", said);
	return 0;
}

int build_retry_decide_validated(const struct sl_config *cfg, const struct build_retry_state *prev,
				 int attempt_failed, const char *const *failed, int builder_exit,
				 const struct build_validate_ctx *vc,
				 struct build_retry_decision *d, struct sl_err *err)
{
	struct build_retry_state start = *prev; /* prev may point into d */
	char what[256], how[384]; /* how: four "X from retry rule N" at most */
	int at = exit_at(cfg), from = start.from > 0 && start.from < attempt_failed ? start.from : 0;

	memset(d, 0, sizeof(*d));
	d->state = start;
	d->next_attempt = attempt_failed + 1;
	describe_failure(what, sizeof(what), failed, builder_exit);
	/* after a person's retry the rules count from there: attempt_failed is the round's */
	attempt_failed -= from;
	if (!cfg->nretry) {
		snprintf(d->reason, sizeof(d->reason), "%s on attempt %d; no retry rules", what,
			 attempt_failed);
		goto out;
	}
	if (!at) {
		snprintf(d->reason, sizeof(d->reason),
			 "%s on attempt %d; the retry rules have no 'exit' entry, so no retry",
			 what, attempt_failed);
		goto out;
	}
	if (attempt_failed >= at) {
		snprintf(d->reason, sizeof(d->reason), "%s on attempt %d; retry exit at %d%s", what,
			 attempt_failed + from, at, from ? " (counted since a person's retry)" : "");
		goto out;
	}
	for (size_t i = 0; i < cfg->nretry; i++) {
		int held, error = validator_holds(cfg, i, attempt_failed + from, vc, &held, d, err);
		if (error)
			return error;
		if (held || activates(&cfg->retry[i], d->next_attempt - from, failed, builder_exit))
			activate(&d->state, &cfg->retry[i], (int)i);
	}
	d->retry = 1;
	describe_overrides(how, sizeof(how), cfg, &d->state);
	if (from)
		snprintf(d->reason, sizeof(d->reason), "%s on attempt %d; retrying as attempt %d (%d "
			 "of %d since a person's retry)%s", what, attempt_failed + from,
			 d->next_attempt, d->next_attempt - from, at, how);
	else
		snprintf(d->reason, sizeof(d->reason), "%s on attempt %d; retrying as attempt %d of "
			 "%d%s", what, attempt_failed, d->next_attempt, at, how);
out:
	build_retry_overrides(cfg, &d->state, &d->overrides);
	return 0;
}

/* The copy for people in the run folder: written, never read back. */
static void write_copy(const char *run_dir, const struct build_retry_state *rs)
{
	struct sl_err err = SL_ERR_INIT;
	json_t *o = json_pack("{s:i, s:i, s:i, s:i, s:s}", "builder_rule", rs->builder_rule,
			      "prompt_rule", rs->prompt_rule, "reset_rule", rs->reset_rule,
			      "session_rule", rs->session_rule, "note",
			      "a copy for people; sluice keeps this state in its database");
	char *path = sl_path_join(run_dir, "retry.json");

	if (o && path && sl_json_write(path, o, &err) != 0)
		sl_log(SL_LOG_WARN, "cannot write '%s' (a copy for people): %s", path, err.msg);
	json_decref(o);
	free(path);
}

int build_retry_save(struct store *st, const char *run_id, const char *run_dir,
		      const struct build_retry_state *rs, struct sl_err *err)
{
	struct store_retry_state s = { rs->builder_rule, rs->prompt_rule, rs->reset_rule,
					rs->session_rule, rs->from };
	int error;

	if ((error = store_retry_set(st, run_id, &s, err)) != 0)
		return error;
	if (run_dir)
		write_copy(run_dir, rs);
	return 0;
}

int build_retry_load(struct store *st, const char *run_id, struct build_retry_state *rs,
		      struct sl_err *err)
{
	struct store_retry_state s;
	int error;

	rs->builder_rule = rs->prompt_rule = rs->reset_rule = rs->session_rule = -1;
	rs->from = 0;
	if ((error = store_retry_get(st, run_id, &s, err)) != 0)
		return error;
	rs->builder_rule = s.builder_rule;
	rs->prompt_rule = s.prompt_rule;
	rs->reset_rule = s.reset_rule;
	rs->session_rule = s.session_rule;
	rs->from = s.rules_from;
	return 0;
}

int build_retry_restart(struct store *st, const char *run_id, const char *run_dir, int last,
			struct sl_err *err)
{
	struct build_retry_state rs = BUILD_RETRY_STATE_INIT;

	rs.from = last > 0 ? last : 0;
	return build_retry_save(st, run_id, run_dir, &rs, err);
}

int build_retry_forget(struct store *st, const char *run_id, const char *run_dir,
			struct sl_err *err)
{
	char *path = run_dir ? sl_path_join(run_dir, "retry.json") : NULL;
	struct sl_err ignored = SL_ERR_INIT;

	if (path)
		sl_unlink(path, &ignored); /* never through a link */
	free(path);
	return store_retry_clear(st, run_id, err);
}

/*
 * "gate 'test' failed on attempt 1; gate 'test' failed on attempt 1; no
 * retry rules" was a run's reason before the runner took only these words.
 */
const char *build_retry_decision_words(const struct build_retry_decision *d, int attempt)
{
	char mark[48];
	const char *p;

	snprintf(mark, sizeof(mark), " on attempt %d; ", attempt);
	p = strstr(d->reason, mark);
	return p ? p + strlen(mark) : d->reason;
}

int build_retry_validates(const struct sl_config *cfg)
{
	for (size_t i = 0; i < cfg->nretry; i++)
		if (cfg->retry[i].kind == SL_RETRY_VALIDATE)
			return 1;
	return 0;
}
