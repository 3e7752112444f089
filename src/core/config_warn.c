/*
 * What `sluice check` warns about in a config it accepts: session: keep
 * where the agent cannot keep a session, and what a job of an engine
 * cannot do (core/config.h, sl_config_warnings()).
 */
#include "core/config.h"
#include "core/buf.h"

#include <stddef.h>

/* ---- warnings: what sluice accepts but changes (session: keep) ---------- */

/* The preset an agent name runs (a preset, or a named builder's), or NULL (a command). */
static const char *agent_preset(const struct sl_config *cfg, const char *agent)
{
	const struct sl_builder *b = sl_config_builder_named(cfg, agent);

	if (b)
		return b->preset;
	return agent && sl_config_preset_known(agent) ? agent : NULL;
}

static int warn_no_resume(const struct sl_config *cfg, struct sl_buf *out, int line,
			  const char *agent)
{
	const char *preset = agent_preset(cfg, agent);

	if (!preset || sl_config_preset_resumes(preset))
		return 0;
	sl_buf_addf(out, "%s:%d:1: warning: 'session: keep' but agent '%s' (preset %s) cannot "
		    "resume a session; its attempts start new ones\n", cfg->path, line, agent,
		    preset);
	return 1;
}

static int warn_rule(const struct sl_config *cfg, const struct sl_retry_rule *r, int keep_line,
		     struct sl_buf *out)
{
	int n = 0;

	if ((r->agent || r->builder) && r->session != SL_SESSION_NEW) {
		sl_buf_addf(out, "%s:%d:1: warning: this retry entry switches the agent without "
			    "'session: new'; a new agent cannot resume another's session, so sluice "
			    "starts a new one there (add 'session: new' to say so)\n", cfg->path,
			    r->line);
		n++;
	}
	if (r->worktree_reset) {
		sl_buf_addf(out, "%s:%d:1: warning: 'worktree: reset' with 'session: keep' (line "
			    "%d): the kept session remembers changes the reset takes away\n",
			    cfg->path, r->line, keep_line);
		n++;
	}
	if (r->agent)
		n += warn_no_resume(cfg, out, r->line, r->agent);
	return n;
}

/* With an engine (executor.kind slurm or kubernetes): what a job cannot do (docs/scale-out.md). */
static int warn_executor(const struct sl_config *cfg, int keep_line, struct sl_buf *out)
{
	int n = 0;

	if (cfg->executor.kind == SL_EXEC_LOCAL)
		return 0;
	if (cfg->worktree.share) {
		sl_buf_addf(out, "%s: warning: worktree.share links the main checkout's paths into "
			    "worktrees, but builders and gates run as jobs on other machines: the "
			    "paths are missing there; make them with worktree.setup\n", cfg->path);
		n++;
	}
	if (keep_line) {
		sl_buf_addf(out, "%s:%d:1: warning: 'session: keep' but builders run as jobs, each "
			    "in a new clone: their attempts start new sessions\n", cfg->path,
			    keep_line);
		n++;
	}
	return n;
}

int sl_config_warnings(const struct sl_config *cfg, struct sl_buf *out)
{
	const char *dflt = cfg->builder.agent ? cfg->builder.agent : cfg->builder.preset;
	int keep_line = 0, n = 0;

	for (size_t i = 0; i < cfg->nretry; i++)
		if (cfg->retry[i].session == SL_SESSION_KEEP && !keep_line)
			keep_line = cfg->retry[i].line;
	n += warn_executor(cfg, keep_line, out);
	if (!keep_line)
		return n;
	if (dflt)
		n += warn_no_resume(cfg, out, keep_line, dflt);
	for (size_t i = 0; i < cfg->nretry; i++)
		n += warn_rule(cfg, &cfg->retry[i], keep_line, out);
	return n;
}
