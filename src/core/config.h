#ifndef SL_CORE_CONFIG_H
#define SL_CORE_CONFIG_H
/*
 * .system/config.yaml (docs/config.md, Configuration: .system/config.yaml, schema/config.schema.json).
 * All keys are optional but the builder (needed only to build, not to
 * load). sl_config_load() reports the first problem with the file, line and
 * column; sl_config_check() finds every problem (for `sluice check`).
 * Unset values get the defaults listed beside each field.
 */
#include <stddef.h>
#include <stdint.h>
#include "core/err.h"

/* A NULL-terminated array of strings, the caller's: sl_strv_free(). */
typedef char **sl_strv;
void sl_strv_free(sl_strv v);
size_t sl_strv_len(const sl_strv v);
/* Append a copy of s; -1 on out of memory (v unchanged). */
int sl_strv_push(sl_strv *v, const char *s);
/* A deep copy of v (NULL gives an empty array); NULL on out of memory. */
sl_strv sl_strv_copy(const char *const *v);

enum sl_retry_kind {
	SL_RETRY_ATTEMPT,  /* attempt: N  - applies from attempt N on (sticky) */
	SL_RETRY_NOT_GATE, /* not: gate.NAME - applies when that gate failed */
	SL_RETRY_EXIT,     /* exit: N - stop retrying at attempt N (fatal) */
	SL_RETRY_VALIDATE  /* validate: [argv] - applies when the validator says true */
};

struct sl_retry_rule {
	enum sl_retry_kind kind;
	int n;               /* attempt / exit */
	char *gate;          /* not: gate.<gate> */
	sl_strv builder;     /* override: builder argv, or NULL */
	char *prompt;        /* override: prompt template (replaces retry context), or NULL */
	int worktree_reset;  /* override: worktree: reset */
	int line;            /* where it is in config.yaml, for messages */
	sl_strv validate;    /* validate: the validator's argv (SL_RETRY_VALIDATE), or NULL */
	sl_strv with;        /* with: "<key>=<template>" entries in file order, or NULL */
	int64_t validate_timeout_ms; /* timeout: of the validator, default 2m */
	char *agent;         /* override: a name of `builders:` or a preset, or NULL */
	int session;         /* override: SL_SESSION_NEW, SL_SESSION_KEEP, or 0 (none) */
};

/* session: new | keep (a retry override: resume the agent CLI's own session). */
enum { SL_SESSION_NEW = 1, SL_SESSION_KEEP = 2 };

/* `builder:`, or an entry of the `builders:` map (its name set). */
struct sl_builder {
	char *name;             /* builders: the entry's name ([A-Za-z0-9_.-]+); NULL for builder: */
	sl_strv command;        /* argv; NULL if only a preset is given */
	char *preset;           /* claude-code | codex | aider | gemini, or NULL */
	int64_t timeout_ms;     /* default 30m (a named builder: 0, builder.timeout's) */
	sl_strv env;            /* extra "K=V" entries (a named builder's come after builder.env's) */
	size_t log_max;         /* default 10 MiB (builder: only) */
	char *agent;            /* builder.agent: the named builder or preset that builds by
	                           default, or NULL (builder: only) */
	int line;               /* where a named builder is in config.yaml, for messages */
};

/*
 * budget.prices (docs/budgets.md): what a model's million tokens cost, in
 * US dollars; 0 where not given. An attempt that reported tokens but no
 * cost gets one from these, marked an estimate.
 */
struct sl_price {
	char *model;
	double input, output, cache_read, cache_write;
};

struct sl_gate {
	char *name;          /* [A-Za-z0-9_-]+, unique */
	sl_strv argv;        /* run in the worktree */
	int64_t timeout_ms;  /* default 10 minutes */
};

/*
 * Where a builder works (work order field `worktree:`, default
 * worktree.mode): read-write (its worktree; what it changes is merged),
 * read-only (its worktree; it must change nothing: the no_write guard; the
 * run ends in a report) or none (an empty folder of the run's; a report).
 */
enum sl_worktree_mode { SL_WORKTREE_READ_WRITE = 0, SL_WORKTREE_READ_ONLY, SL_WORKTREE_NONE };
#define SL_WORKTREE_MODES "read-write, read-only or none"
/* The mode named `name`: 0, or -1 when it is none of them. */
int sl_worktree_mode_parse(const char *name, enum sl_worktree_mode *out);
const char *sl_worktree_mode_name(enum sl_worktree_mode m);
struct sl_config;
/* 1 when gate `name` has `worktree: read-only`: it must change no file. */
int sl_gate_read_only(const struct sl_config *cfg, const char *name);

/*
 * Where builders and gate jobs run (docs/scale-out.md, What stays on the sluice host, what goes to a job, build/exec.h,
 * docs/scale-out.md): here, as today (local), or as jobs on an engine.
 */
enum sl_executor_kind { SL_EXEC_LOCAL = 0, SL_EXEC_SLURM, SL_EXEC_KUBERNETES };

enum sl_reviewer_mode { SL_REVIEWER_MANUAL = 0, SL_REVIEWER_HTTP, SL_REVIEWER_COMMAND };
enum sl_reviewer_protocol { SL_PROTOCOL_SLUICE = 0, SL_PROTOCOL_OPENAI };

/*
 * A window of merge.freeze (docs/config.md): on `days`, from `from_min` to
 * `to_min` (minutes of the day, to up to 1440) in time zone `tz`, the
 * target lands nothing.
 */
struct sl_freeze_window {
	unsigned days;    /* bit d: day d of the week (0 Sunday .. 6 Saturday) */
	int from_min, to_min;
	char *tz;         /* default "UTC" */
	char *reason;     /* default "merge.freeze" */
	int allow_urgent; /* urgent work lands in the window */
};

/*
 * A lane of merge.lanes (docs/config.md, "Lanes"): the paths it owns (globs:
 * `*` and `?` within a folder, `**` across folders) and the merge gates a
 * car of those paths alone runs. A lane's gates depend only on its paths.
 */
struct sl_lane {
	char *name;
	sl_strv paths;
	sl_strv gates; /* names of configured gates; an empty list: none */
};
#define SL_LANES_MAX 16 /* merge.lanes: lanes, at most */

struct sl_config {
	char *path;                /* the file it came from */
	char *target;              /* branch name, e.g. "main" (default: set by init) */
	struct {
		char *inbox;       /* default "work_orders" (relative to the repo root) */
		int jobs;          /* default 2, at most SL_JOBS_MAX */
		int allow_overlap; /* default 0 */
		int overlap_fatal; /* queue.overlap: fatal (default resolve: 0) */
	} queue;
	struct sl_builder builder;
	struct sl_builder *builders; /* the `builders:` map, in file order */
	size_t nbuilders;
	struct {
		sl_strv share;          /* paths symlinked from the main checkout */
		sl_strv copy;           /* paths copied from the main checkout */
		sl_strv setup;          /* argv run after creation, or NULL */
		int64_t setup_timeout_ms; /* default 10m */
		int hooks;              /* default 0: core.hooksPath=/dev/null for the builder */
		int pool;               /* finished worktrees kept for reuse; default 2, 0: none */
		int keep_ignored;       /* recycle: keep-ignored (1) or clean (0, the default) */
		int keep_failed;        /* default 1: a failed/rejected run's worktree stays for
		                           a person; 0: it goes to the pool (its work committed) */
		enum sl_worktree_mode mode; /* default read-write; a work order's `worktree:` wins */
	} worktree;
	struct sl_gate *gates;
	size_t ngates;
	sl_strv read_only_gates; /* names of the gates with worktree: read-only (no_write), or NULL */
	struct sl_retry_rule *retry;
	size_t nretry;
	struct {
		enum sl_reviewer_mode mode;         /* default manual */
		char *url;                          /* http: the endpoint (openai: the base URL) */
		enum sl_reviewer_protocol protocol; /* default sluice */
		char *model;                        /* openai: the model name */
		char *token_env;                    /* name of the variable holding the bearer token */
		int64_t timeout_ms;                 /* total, default 120s */
		int64_t connect_timeout_ms;         /* default 10s */
		int retries;                        /* default 3 (within one tick) */
		sl_strv command;                    /* command mode: argv */
		size_t max_reply;                   /* default 1 MiB */
		char *name;                         /* Reviewed-by: name; default from mode */
	} reviewer;
	struct {
		char *resolver;        /* "builder" (default) or "none" */
		int resolve_attempts;  /* default 2 */
		int verify;            /* accepted, no longer used: git merge-tree is the authority */
		char *message;         /* template of the merge message; default "Merge {work_order.id}: {work_order.title}" */
		sl_strv gates;         /* the gates run on each car of the train; NULL: every gate */
		int train_depth;       /* cars tested at once; 0: merge.jobs, else queue.jobs */
		int jobs;              /* a tick's workers for the train (approved, merging runs),
		                          apart from queue.jobs' builders; 0: shared */
		int batch;             /* cars tested as one chain, the gates on its tip; default 1 */
		int rerun_failed;      /* a red merge gate runs again this many times on the
		                          same tree before its car is blamed; default 1 */
		int reuse_green;       /* a merge gate green on the car's tree (same command)
		                          is not run again; default 1 */
		int reuse_gating;      /* so is one a run's own gates passed on that tree in a
		                          clean worktree; default 0 */
		sl_strv keep_ignored;  /* ignored paths of the run's worktree copied into the clean
		                          checkout the merge gates run in (NULL: none) */
		struct sl_freeze_window *freeze; /* merge.freeze: when the target lands nothing */
		size_t nfreeze;
		struct sl_lane *lanes; /* merge.lanes: lines of their own by paths */
		size_t nlanes;
	} merge;
	struct {                   /* budget: (docs/budgets.md) */
		double day_usd;    /* budget.day.usd: no new work order starts once the UTC
		                      day's recorded spend reaches it; -1 (none): no limit */
		double month_usd;  /* budget.month.usd: the same for the UTC month */
		double run_usd;    /* budget.run.usd: a run whose attempts recorded this
		                      much starts no more attempts; -1 (none): no limit
		                      (a work order's budget.usd wins) */
		double run_minutes; /* budget.run.minutes: the same for the attempts'
		                       wall time, which also bounds each attempt */
		struct sl_price *prices; /* budget.prices: a cost from tokens, per model */
		size_t nprices;
	} budget;
	struct {                   /* watch: (docs/watch.md) */
		struct sl_gate *gates; /* watch.gates: run on the target's tip, not on cars */
		size_t ngates;
		int every;             /* a tick watches after this many landings; 0 (default):
		                          only `sluice watch` does */
		int revert_auto;       /* revert_review: auto (1) or person (0, the default) */
	} watch;
	struct {
		char *name;            /* commit.name: the author and committer of sluice's
		                          commits; NULL: git's user.name (sl_repo_identity()) */
		char *email;           /* commit.email; NULL: git's user.email */
	} commit;
	struct {
		enum sl_executor_kind kind; /* default local */
		char *remote;          /* the git remote sluice and the jobs both reach (URL or
		                          absolute path); required unless local */
		int64_t poll_ms;       /* how often the engine is asked; default 2s */
		char *workdir;         /* on the worker: where a job makes its clone; NULL: $TMPDIR */
		char *git;             /* the git program on the worker; default "git" */
		struct {
			char *partition;   /* --partition, or NULL: the cluster's default */
			char *account;     /* --account, or NULL */
			char *qos;         /* --qos, or NULL */
			int cpus;          /* --cpus-per-task; 0: Slurm's default */
			char *memory;      /* --mem ("4G"), or NULL */
			sl_strv options;   /* more sbatch options, one argument each, or NULL */
		} slurm;
		struct {
			char *namespace_;  /* default "default" */
			char *context;     /* kubectl --context, or NULL */
			char *image;       /* the job's container image: required */
			char *cpu;         /* resources.requests.cpu ("2"), or NULL */
			char *memory;      /* resources.requests.memory ("4Gi"), or NULL */
			char *service_account; /* or NULL */
			char *git_secret;  /* a Secret mounted at /etc/sluice-git (its gitconfig is
			                      the job's GIT_CONFIG_GLOBAL), or NULL */
			char *kubectl;     /* default "kubectl" */
		} kubernetes;
	} executor;
	struct {
		int keep_last;         /* default 20 */
		int keep_failed;       /* failed runs' worktrees kept by a tick; default 5 */
		int64_t keep_failed_ms; /* gc.keep_failed_for: and none older; default 7 days */
	} gc;
	struct {
		sl_strv command;       /* argv run with each event's JSON on stdin, or NULL */
		char *url;             /* http(s) URL each event's JSON is POSTed to, or NULL */
		int64_t timeout_ms;    /* each delivery, default 10s */
		int64_t retry_for_ms;  /* an event not delivered this long after its move: given up; default 24h */
		int tries;             /* deprecated: failed tries before giving up; 0 (default): no limit */
	} notify;
};

/* Defaults only (no file). *out is the caller's: sl_config_free(). */
int sl_config_default(struct sl_config **out, struct sl_err *err);

/* The most builders at once: queue.jobs and `sluice tick --jobs`. */
#define SL_JOBS_MAX 256
#define SL_TRAIN_BATCH_MAX 64 /* merge.batch: cars of one batch, at most */

/* The longest target: "refs/heads/<target>" fits sl_ctx's target_ref[512]. */
#define SL_CONFIG_TARGET_MAX 500

/*
 * Why `target` cannot name the branch to merge into (starts with '-',
 * HEAD, refs/..., not a valid branch name, over SL_CONFIG_TARGET_MAX
 * bytes), or NULL when it can (static text).
 * Whether the branch exists is for the caller to check, in the repository.
 */
const char *sl_config_target_problem(const char *target);

/*
 * A reviewer name becomes the Reviewed-by: trailer of every merge: one line
 * (no control character: a newline would end the trailer and start a forged
 * one) of at most SL_REVIEWER_NAME_MAX characters (code points). The first
 * `len` bytes of `name`: 0 when fine, SL_NAME_CONTROL or SL_NAME_TOO_LONG.
 * Shared by the config check and the verdict parser.
 */
#define SL_REVIEWER_NAME_MAX 200
enum { SL_NAME_OK = 0, SL_NAME_CONTROL, SL_NAME_TOO_LONG };
int sl_reviewer_name_check(const char *name, size_t len);

/*
 * Load and validate `path`. *out is the caller's: sl_config_free(). A
 * missing file is SL_ENOTFOUND; a bad one SL_EINVALID with
 * "<path>:<line>:<col>: <what> ; <what to do>".
 */
int sl_config_load(struct sl_config **out, const char *path, struct sl_err *err);

/*
 * Like sl_config_load but collects every problem, one per line, into
 * `problems` (a newline-separated list). Returns the number of problems
 * (0: valid), or a negative code when the file cannot be read.
 */
struct sl_buf;
int sl_config_check(const char *path, struct sl_buf *problems, struct sl_err *err);

/*
 * The walk of both, over `len` bytes of YAML in memory (`name` for the
 * messages): every problem into `problems`, their number returned (< 0 on
 * an error, set in err). With no problem and `out` non-NULL, *out is the
 * config (the caller's, sl_config_free()). For tests and the fuzz target.
 */
int sl_config_parse(struct sl_config **out, const char *name, const char *data, size_t len,
                    struct sl_buf *problems, struct sl_err *err);

void sl_config_free(struct sl_config *cfg);

/*
 * The commented config.yaml that `sluice init` writes, with the target
 * branch and the inbox filled in. A new string, the caller's (free()).
 */
char *sl_config_template(const char *target, const char *inbox);

/*
 * The builder argv for a preset name (claude-code, codex, aider, gemini), as
 * a new sl_strv; SL_ENOTFOUND for an unknown preset. The prompt is passed
 * through the environment ($SLUICE_PROMPT_FILE) and, where the CLI needs
 * it on the command line, through `sh -c` reading that file.
 */
int sl_config_preset(sl_strv *out, const char *preset, struct sl_err *err);

/* 1 when `name` is a builder preset. */
int sl_config_preset_known(const char *name);

/* The programs a preset runs from PATH, space-separated ("gemini node"); NULL for no preset. */
const char *sl_config_preset_programs(const char *name);

/* 1 when the preset's CLI can resume its own session (session: keep). */
int sl_config_preset_resumes(const char *name);

/* The entry of `builders:` named `name`, or NULL. */
const struct sl_builder *sl_config_builder_named(const struct sl_config *cfg, const char *name);

/*
 * What `sluice check` warns about but accepts (session: keep with a rule
 * that switches the agent, or with worktree: reset, or with an agent whose
 * CLI cannot resume), one "path:line:col: warning: ..." a line, appended to
 * out. Returns their number.
 */
int sl_config_warnings(const struct sl_config *cfg, struct sl_buf *out);

/*
 * The keys config.yaml knows (docs/config.md), one row of the table the
 * walk reads them by: its dotted key ("merge.train_depth", "gates.<name>.timeout"),
 * its type ("number", "duration", "section", ...), its default as the file
 * would write it (NULL: none, or set late), and a number's range.
 */
struct sl_config_key {
	const char *key;
	const char *type;
	const char *def;
	int min, max;
};
/* The i-th key into out: 0, or -1 past the last. */
int sl_config_key(size_t i, struct sl_config_key *out);

#endif
