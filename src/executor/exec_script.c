/*
 * The job script (executor.h): one POSIX sh script for every engine, the whole
 * job. It needs sh, git and coreutils on the worker (and the agent's CLI),
 * never sluice. What it does, in a fresh folder under $TMPDIR:
 *
 *   t.git  a bare repository of its own: fetches <refs>/base (or head) and
 *          <refs>/input from executor.remote; the result and the log are
 *          committed here, out of the builder's reach in the worktree's .git;
 *   wt     a clone of t.git at the base, on the run's branch: the builder's
 *          (or the gates') worktree, with worktree.copy's files (from the
 *          input) and worktree.setup run first;
 *   in     the input: prompt.md, work_order.md, copy/;
 *   out    what goes back: builder.log or gates/<name>.{log,exit,ms}, exit,
 *          timed_out, summary.md.
 *
 * Then one atomic push of <refs>/result (the worktree's files as a commit
 * on the base: sluice takes its tree, never its history) and <refs>/out.
 * Exit codes of the script itself: 70 no folder or repository, 71 cannot
 * fetch, 73 cannot commit, 74 cannot push; else 0 (the builder's own exit
 * is in out/exit).
 */
#include "executor/executor_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* s as one word for a POSIX shell: '...' with ' as '\''. */
static void q(struct sl_buf *b, const char *s)
{
	sl_buf_puts(b, "'");
	for (; *s; s++)
		if (*s == '\'')
			sl_buf_puts(b, "'\\''");
		else
			sl_buf_add(b, s, 1);
	sl_buf_puts(b, "'");
}

static void q_argv(struct sl_buf *b, const char *const *argv)
{
	for (size_t i = 0; argv && argv[i]; i++) {
		sl_buf_puts(b, i ? " " : "");
		q(b, argv[i]);
	}
}

/* A path of worktree.copy or .share as a line of info/exclude: anchored, its specials escaped. */
static void exclude_line(struct sl_buf *b, const char *path)
{
	sl_buf_puts(b, "/");
	for (const char *p = path; *p; p++) {
		if (strchr("*?[\\!# ", *p))
			sl_buf_puts(b, "\\");
		sl_buf_add(b, p, 1);
	}
}

static const char script_head[] =
	"set -u\n"
	"umask 022\n"
	"say() { printf 'sluice job: %s\\n' \"$*\" >&2; }\n"
	"g() { \"$git\" -c core.hooksPath=/dev/null -c core.fsmonitor=false -c gc.auto=0 \\\n"
	"\t-c maintenance.auto=false -c commit.gpgSign=false -c user.name=sluice \\\n"
	"\t-c user.email=sluice@localhost \"$@\"; }\n"
	"dir=${workdir:-${TMPDIR:-/tmp}}\n"
	"top=$(mktemp -d \"$dir/sluice-job.XXXXXX\") || { say \"cannot make a folder in $dir\"; exit 70; }\n"
	"trap 'cd / && rm -rf \"$top\"' EXIT\n"
	"trap 'exit 143' TERM\n"
	"trap 'exit 130' INT\n"
	"t=\"$top/t.git\"\n"
	"mkdir \"$top/in\" \"$top/run\" \"$top/out\" && g init -q --bare \"$t\" ||\n"
	"\t{ say 'cannot make its repository'; exit 70; }\n"
	"tg() { g --git-dir=\"$t\" \"$@\"; }\n";

/* Fetch the inputs into t.git; check out the base (or head) into wt and the input into in. */
static void script_fetch(struct sl_buf *b, const struct exec_script *o)
{
	const char *from = strcmp(o->purpose, "build") ? "head" : "base";

	sl_buf_addf(b, "tg fetch -q --no-tags \"$remote\" \"+$refs/%s:refs/sluice/base\" "
		    "\"+$refs/input:refs/sluice/input\"%s ||\n"
		    "\t{ say \"cannot fetch $refs/* from $remote\"; exit 71; }\n", from,
		    o->merge_theirs ? " \"+$refs/theirs:refs/sluice/theirs\"" : "");
	sl_buf_puts(b, "g clone -q --shared --no-checkout \"$t\" \"$top/wt\" && cd \"$top/wt\" &&\n"
		    "\tg checkout -q -B \"$branch\" \"$(tg rev-parse refs/sluice/base)\" &&\n"
		    "\tGIT_INDEX_FILE=\"$top/in.index\" tg --work-tree=\"$top/in\" checkout -q "
		    "refs/sluice/input -- . ||\n"
		    "\t{ say 'cannot check out what it fetched'; exit 71; }\n"
		    "rm -f \"$top/in.index\"\n"
		    "if [ -d \"$top/in/copy\" ]; then cp -R -P -p \"$top/in/copy/.\" \"$top/wt/\"; fi\n");
	sl_buf_puts(b, "cat >>\"$t/info/exclude\" <<'SLUICE_EXCLUDE'\n");
	for (char **p = o->cfg->worktree.share; p && *p; p++) {
		exclude_line(b, *p);
		sl_buf_puts(b, "\n");
	}
	for (char **p = o->cfg->worktree.copy; p && *p; p++) {
		exclude_line(b, *p);
		sl_buf_puts(b, "\n");
	}
	sl_buf_puts(b, "SLUICE_EXCLUDE\n");
	if (o->merge_theirs)
		sl_buf_puts(b, "g merge -q --no-ff --no-commit \"$(tg rev-parse refs/sluice/theirs)\" "
			    ">\"$top/run/merge.log\" 2>&1 || :\n");
}

/* `timeout` when the worker has it; its exit 124 means timed out. */
static void script_timeout(struct sl_buf *b, int64_t timeout_ms, int64_t grace_ms)
{
	long long secs = timeout_ms > 0 ? (long long)((timeout_ms + 999) / 1000) : 0;
	long long grace = grace_ms > 0 ? (long long)((grace_ms + 999) / 1000) : 2;

	sl_buf_addf(b, "to=; if [ %lld -gt 0 ] && command -v timeout >/dev/null 2>&1; then "
		    "to=\"timeout -k %llds %llds\"; fi\n", secs, grace, secs);
}

/* worktree.setup, in wt, its output into the log named by the shell variable `log`. */
static void script_setup(struct sl_buf *b, const struct exec_script *o)
{
	if (!o->cfg->worktree.setup) /* in every job: each is a new clone */
		return;
	script_timeout(b, o->cfg->worktree.setup_timeout_ms, o->grace_ms);
	sl_buf_puts(b, "$to ");
	q_argv(b, (const char *const *)o->cfg->worktree.setup);
	sl_buf_puts(b, " </dev/null >>\"$log\" 2>&1 || { printf 'worktree.setup failed (exit %s)"
		    "\\n' \"$?\" >>\"$log\"; setup_failed=1; }\n");
}

/* The log into out/, cut at log_max. */
static void script_bound(struct sl_buf *b, const char *from, const char *to, size_t max)
{
	sl_buf_addf(b, "if [ \"$(wc -c <\"%s\")\" -gt %zu ]; then head -c %zu \"%s\" >\"%s\"; "
		    "printf '\\n[sluice: log truncated at %zu bytes]\\n' >>\"%s\"; else "
		    "cp \"%s\" \"%s\"; fi\n", from, max, max, from, to, max, to, from, to);
}

/* Commit the worktree's files (result) and out/ in t.git, push both at once. */
static const char script_tail[] =
	"cd \"$top\" || exit 73\n"
	"export GIT_INDEX_FILE=\"$top/t.index\"\n"
	"tg --work-tree=\"$top/wt\" add -A . 2>\"$top/out/result.err\" &&\n"
	"\ttree=$(tg write-tree) && result=$(echo 'sluice job: result' |\n"
	"\ttg commit-tree \"$tree\" -p refs/sluice/base) || { say 'cannot commit the worktree'; "
	"exit 73; }\n"
	"export GIT_INDEX_FILE=\"$top/o.index\"\n"
	"tg --work-tree=\"$top/out\" add -A . && otree=$(tg write-tree) &&\n"
	"\tout=$(echo 'sluice job: out' | tg commit-tree \"$otree\") ||\n"
	"\t{ say 'cannot commit its log'; exit 73; }\n"
	"unset GIT_INDEX_FILE\n"
	"tg push -q --atomic --force \"$remote\" \"$result:$refs/result\" \"$out:$refs/out\" ||\n"
	"\t{ say \"cannot push to $remote\"; exit 74; }\n"
	"# Slurm's output file is needed only when the job could not report (sbatch --output)\n"
	"if [ -n \"${SLURM_JOB_ID:-}\" ]; then rm -f \"$slurm_out_dir/sluice-$SLURM_JOB_ID.out\"; fi\n"
	"exit 0\n";

static void script_build(struct sl_buf *b, const struct exec_script *o)
{
	sl_buf_puts(b, "log=\"$top/run/builder.log\"\n: >\"$log\"\nsetup_failed=\n");
	script_setup(b, o);
	for (size_t i = 0; o->env && o->env[i]; i++) {
		sl_buf_puts(b, "export ");
		q(b, o->env[i]);
		sl_buf_puts(b, "\n");
	}
	sl_buf_puts(b, "export SLUICE_PROMPT_FILE=\"$top/in/prompt.md\" SLUICE_RUN_DIR=\"$top/run\" "
		    "SLUICE_SUMMARY_FILE=\"$top/run/summary.md\" SLUICE_WORKTREE=\"$top/wt\"\n");
	script_timeout(b, o->timeout_ms, o->grace_ms);
	sl_buf_puts(b, "if [ -z \"$setup_failed\" ]; then\n\t$to ");
	q_argv(b, o->argv);
	sl_buf_puts(b, " </dev/null >>\"$log\" 2>&1\n\tcode=$?\nelse code=72; fi\n"
		    "echo \"$code\" >\"$top/out/exit\"\n"
		    "if [ -n \"$to\" ] && [ \"$code\" = 124 ]; then echo 1 >\"$top/out/timed_out\"; fi\n"
		    "if [ -f \"$top/run/summary.md\" ] && [ ! -L \"$top/run/summary.md\" ]; then\n"
		    "\thead -c 1048576 \"$top/run/summary.md\" >\"$top/out/summary.md\"; fi\n");
	script_bound(b, "$log", "$top/out/builder.log", o->log_max);
	sl_buf_puts(b, "unset SLUICE_PROMPT_FILE SLUICE_RUN_DIR SLUICE_SUMMARY_FILE SLUICE_WORKTREE\n");
}

static void script_gate(struct sl_buf *b, const struct exec_script *o, const struct sl_gate *gt)
{
	int ro = sl_gate_read_only(o->cfg, gt->name);

	sl_buf_addf(b, "# gate %s\nn=%s\nlog=\"$top/run/gates/$n.log\"\n: >\"$log\"\n", gt->name,
		    gt->name);
	if (ro)
		sl_buf_puts(b, "before=$(g status --porcelain --untracked-files=all | md5sum)\n");
	script_timeout(b, gt->timeout_ms, o->grace_ms);
	sl_buf_puts(b, "s=$(date +%s%N | cut -c1-13)\nif [ -z \"$setup_failed\" ]; then "
		    "SLUICE_GATE=\"$n\" SLUICE_RUN_DIR=\"$top/run\" $to ");
	q_argv(b, (const char *const *)gt->argv);
	sl_buf_puts(b, " </dev/null >>\"$log\" 2>&1; code=$?; else code=72; fi\n"
		    "echo $(( $(date +%s%N | cut -c1-13) - s )) >\"$top/out/gates/$n.ms\"\n"
		    "echo \"$code\" >\"$top/out/gates/$n.exit\"\n"
		    "if [ -n \"$to\" ] && [ \"$code\" = 124 ]; then echo 1 >\"$top/out/gates/$n.timed_out\"; fi\n");
	if (ro)
		sl_buf_puts(b, "[ \"$before\" = \"$(g status --porcelain --untracked-files=all | md5sum)\" ]"
			    " || g status --porcelain --untracked-files=all | head -c 2000 "
			    ">\"$top/out/gates/$n.wrote\"\n");
	script_bound(b, "$log", "$top/out/gates/$n.log", o->log_max);
}

static void script_gates(struct sl_buf *b, const struct exec_script *o)
{
	sl_buf_puts(b, "mkdir \"$top/run/gates\" \"$top/out/gates\" || exit 70\n"
		    "log=\"$top/out/setup.log\"\n: >\"$log\"\nsetup_failed=\n");
	script_setup(b, o);
	for (const char *const *h = exec_hooks_env(o->cfg); *h; h++) {
		sl_buf_puts(b, "export ");
		q(b, *h);
		sl_buf_puts(b, "\n");
	}
	for (size_t i = 0; i < o->cfg->ngates; i++)
		script_gate(b, o, &o->cfg->gates[i]);
}

int exec_script_write(const struct exec_script *o, struct sl_buf *b, struct sl_err *err)
{
	sl_buf_addf(b, "#!/bin/sh\n# sluice job: %s of run %s, attempt %d (docs/scale-out.md)\n",
		    o->purpose, o->run_id, o->attempt);
	sl_buf_puts(b, "remote=");
	q(b, o->cfg->executor.remote);
	sl_buf_puts(b, "\nrefs=");
	q(b, o->refs);
	sl_buf_puts(b, "\nbranch=");
	q(b, o->branch);
	sl_buf_puts(b, "\ngit=");
	q(b, o->cfg->executor.git ? o->cfg->executor.git : "git");
	sl_buf_puts(b, "\nworkdir=");
	q(b, o->cfg->executor.workdir ? o->cfg->executor.workdir : "");
	sl_buf_puts(b, "\nslurm_out_dir=");
	q(b, o->cfg->executor.workdir ? o->cfg->executor.workdir : "/tmp");
	sl_buf_puts(b, "\n");
	sl_buf_puts(b, script_head);
	script_fetch(b, o);
	if (!strcmp(o->purpose, "build"))
		script_build(b, o);
	else
		script_gates(b, o);
	sl_buf_puts(b, script_tail);
	/* it starts and ends as written, or an add failed (no memory): never submit a cut script */
	if (b->len < sizeof(script_tail) - 1 ||
	    strcmp(b->ptr + b->len - (sizeof(script_tail) - 1), script_tail) ||
	    strncmp(b->ptr, "#!/bin/sh\n", 10))
		return sl_err_set(err, SL_ERROR, "out of memory writing the job script");
	return 0;
}
