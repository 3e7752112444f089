#ifndef SLUICE_TRAIN_H
#define SLUICE_TRAIN_H

/*
 * The merge train's decision (docs/ARCHITECTURE.md, The merge train): what
 * one run's car does next, from the train's state alone. A pure function:
 * no store, no git, no clock, no process check; what those would tell is
 * computed by the caller (the runner, src/runner/step_train.c) and passed
 * in struct train_state, and the caller applies the move.
 */
#include "store/store.h"
#include "core/ctx.h"

#include <stddef.h>

enum train_action {
	TRAIN_DO_LAND,           /* front car, green on the tip: land it (the run moves to merging) */
	TRAIN_DO_TEST,           /* pending, or testing with no live tester: test the car here */
	TRAIN_DO_WAIT,           /* say the reason, look again in a moment (a live car ahead) */
	TRAIN_DO_STOP,           /* say the reason, a later tick goes on */
	TRAIN_DO_PARK,           /* out of the line on a speculation: built again on the tip */
	TRAIN_DO_LEAVE_CONFLICT, /* out of the line on the tip, in conflict: resolution */
	TRAIN_DO_LEAVE_SEMANTIC, /* out of the line on the tip, red with something new there */
	TRAIN_DO_OWN_RED         /* out of the line on the tip, red on its own merge */
};

struct train_state {
	const struct store_car *cars; /* the train, in order */
	size_t n;
	const int *alive;   /* alive[i]: a live process carries car i (its tester) */
	const char *tip;    /* the target's tip (hex) */
	const char *me;     /* the run whose car decides */
	int head_in_base;   /* the run's head is its car's base or behind it */
	int holds;          /* the run is still approved, with the car's head */
	const char *target; /* the target branch, for the reason */
	int train_depth;    /* merge.train_depth (merge.batch above 1), for the reason */
	const char *depth_key; /* "merge.train_depth" or "merge.batch" (NULL: the first) */
	const char *my_ahead_name;   /* the work order of the car my car was built on */
	const char *line_ahead_name; /* the work order of the car right ahead in the line */
	const char *frozen;      /* the target is frozen: the reason (NULL: not frozen) */
	int frozen_allow_urgent; /* the freeze lets urgent work land */
	int urgent;              /* the run's work order says priority: urgent */
	int batch;               /* merge.batch: cars tested as one chain (1: each on its own) */
	int filling;             /* approved runs of the target are still to join the train */
	const char *lanes_ahead; /* merge.lanes: the lanes a waiting car's cars ahead hold
				    ("web, api"), when it waits for them (NULL: not so) */
	char frozen_buf[256];    /* where train_state_of() keeps the reason */
	char lanes_buf[128];     /* and lanes_ahead */
};

/* Where a car stands in the line (cars red or in conflict on their own verdict are out). */
struct train_where {
	size_t me;       /* index of the run's car; n when it is not in the train */
	size_t ahead;    /* index of the car right ahead in the line; n when none */
	int pos;         /* 1-based place in the line; 0: out of it */
	int total;       /* cars in the line */
	int live_ahead;  /* a live process carries a car ahead of it */
};

struct train_decision {
	enum train_action action;
	struct train_where where;
	char why[512]; /* the run's reason, as a person reads it ("" for TEST and the leaves) */
};

/*
 * 1 when car c's verdict (red, conflict) is its own: tested on the tip or
 * on a green car ahead. Otherwise it stays in its place to be rebuilt.
 */
int train_verdict_holds(const struct store_car *cars, size_t n, const char *tip,
			const struct store_car *c);

/* 1 when car c is in the line. */
int train_in_line(const struct store_car *cars, size_t n, const char *tip,
		  const struct store_car *c);

/* Where run `me`'s car stands (alive may be NULL: nothing live). */
void train_locate(const struct store_car *cars, size_t n, const int *alive, const char *tip,
		  const char *me, struct train_where *w);

/*
 * The tail of a car's "in the train: car k of M" reason for what it is now
 * (into buf), as its worker would say it; "" to keep the tail as it is
 * (under test, or out of the line waiting for the cars ahead). ahead_name:
 * the work order of the car it is built on (the target's name when none);
 * depth_key: the setting that holds the depth (train_depth_key()).
 */
void train_car_tail(const struct store_car *c, int pos, int train_depth, const char *depth_key,
		    const char *ahead_name, char *buf, size_t n);

/* 1 when train_car_tail() of car c at pos names ahead_name (else it may be NULL). */
int train_car_tail_names(const struct store_car *c, int pos);

/* What the run's car does now, and why. -1 when the run has no car in the train. */
int train_decide(const struct train_state *st, struct train_decision *d);


/* ---- Lanes (train/lanes.c; docs/config.md, "Lanes") ---- */

/* The lanes whose globs match path (bit i: merge.lanes[i]; 0: none). Pure. */
int64_t train_lanes_of_path(const struct sl_config *cfg, const char *path);

/*
 * The key of merge.lanes (0: none): a car whose lanes were read under
 * another key (its lanes_key) has them read again, and is tested again.
 */
int64_t train_lanes_key(const struct sl_config *cfg);

/* 1 when cars a and b share a lane (a wide car, lanes 0, shares every lane). Pure. */
int train_shares(const struct store_car *a, const struct store_car *b);

/* "web, api" of a car's lanes ("every lane" for 0), into buf. Pure. */
void train_lane_words(const struct sl_config *cfg, int64_t lanes, char *buf, size_t n);

/*
 * The lanes of the paths `head` changed since it met `tip` (the merge
 * base): 0 (wide) when one is in no lane, nothing changed, or merge.lanes
 * is not set.
 */
int train_lanes_of_run(struct sl_ctx *ctx, const char *tip, const char *head, int64_t *lanes,
		       struct sl_err *err);

/*
 * 1 when a and b (commits or trees, hex) hold the same content on every
 * path of the given lanes (0 when not, when they cannot be read, or for
 * lanes 0).
 */
int train_lanes_same(const char *repo_root, const struct sl_config *cfg, int64_t lanes,
		     const char *a, const char *b);

/*
 * The config a car of `lanes` is tested with: merge.gates the union of
 * its lanes' gates. 1 made (out->ctx is ctx with it), 0 for a wide car or
 * no lanes (ctx's own), -1 out of memory. Release with
 * train_lane_cfg_release().
 */
struct train_lane_cfg {
	struct sl_config cfg;
	char **gates;
	struct sl_ctx ctx;
};
int train_lane_cfg(const struct sl_ctx *ctx, int64_t lanes, struct train_lane_cfg *out);
void train_lane_cfg_release(struct train_lane_cfg *c);

/* ---- Batches (train/batch.c; docs/config.md, "Batches") ---- */
struct sl_ctx;
struct sl_config;
struct train;

/* The cars the train builds at once: merge.batch when above 1, else merge.train_depth. */
int train_depth_of(const struct sl_config *cfg);
/* Its setting's name: "merge.batch" or "merge.train_depth". */
const char *train_depth_key(const struct sl_config *cfg);

/*
 * The index of the car of the batch (the first `batch` cars of the line,
 * conflicts left out) that is tested now: the batch's last car while none
 * is red (none while `filling` and the batch is not whole), else the car
 * half-way between the front and the first red (bisection); n when none
 * is (a green car at the front lands first; a red car at the front
 * leaves). Pure.
 */
size_t train_batch_tester(const struct store_car *cars, size_t n, const char *tip, int batch,
			  int filling);

/* 1 when a car of the batch is red: the batch is being bisected. Pure. */
int train_batch_bisecting(const struct store_car *cars, size_t n, const char *tip, int batch);

/*
 * The cars ahead of car `green` in its chain that were not tested
 * themselves (pending, or under test): green by its test, their record
 * naming its run and commit (covered_by, covered_commit). Inside the
 * caller's transaction, the repository lock held; nothing under batch 1.
 */
int train_batch_cover(struct sl_ctx *ctx, const struct store_car *green, struct sl_err *err);

/*
 * 1 when run_id's work order is a revert (docs/watch.md): its car runs the
 * watch gate too, so no other car's test covers it. train_batch_solo(): 1
 * when a car of t's batch is such a run: the line's cars are tested each on
 * its own until it has landed or left (merge.batch as if 1). A run's work
 * order never changes: each run is read once per wait, through `names`.
 */
struct train_names;
int train_car_solo(struct sl_ctx *ctx, const char *run_id);
int train_batch_solo(struct train_names *names, const struct train *t);

/*
 * 1 when an approved run of ctx's target is not in train t yet (its head
 * not on the tip: it will join): a batch not whole waits for it, but not
 * once TRAIN_BATCH_FILL_MS have passed since the last car joined (an
 * approved run whose worker never gets it to the train holds no batch).
 */
#define TRAIN_BATCH_FILL_MS ((int64_t)10 * 60 * 1000)
int train_batch_filling(struct sl_ctx *ctx, const struct train *t);

/* ---- The cars outside the decision (train/cars.c, train/checkout.c) ---- */
struct sl_ctx;
struct merge_commit_result;
struct json_t;

/*
 * refs/sluice/train/<run-id> at `commit`, or deleted (commit NULL): git gc
 * keeps the car. Only sluice writes these refs, under the repository lock
 * (the caller holds it); a lock file of one a killed sluice left is removed
 * first.
 */
int train_car_ref(struct sl_ctx *ctx, const char *run_id, const char *commit,
		  struct sl_err *err);

/*
 * train.json of a landing, from the store's car `c` (never from a file a
 * builder can write) and what landed (`mr`): "green" only when the car was
 * green on exactly the commit that landed; a car of merge.lanes names its
 * lanes and their paths. A new reference, or NULL.
 */
struct json_t *train_record_json(const struct sl_config *cfg, const struct store_car *c,
				 const struct merge_commit_result *mr);

/*
 * At the start of a tick (the repository lock held): lock files under
 * refs/sluice/train/ a killed sluice left removed; the cars of runs (of
 * `runs`, the store's) that are no longer approved or merging leave the
 * train with their refs. Failures are logged.
 */
void train_tidy(struct sl_ctx *ctx, const struct store_run *runs, size_t n);

/*
 * The merge gates' checkout of a car (train/checkout.c): a worktree of its
 * own detached at `commit` (*out, the caller's path), with the config's
 * kept paths and nothing else of the run's worktree `run_wt`.
 * train_checkout_drop removes it (and a killed sluice's);
 * train_checkouts_prune removes git's entries of such checkouts a kill
 * left half made or half removed.
 */
int train_checkout(struct sl_ctx *ctx, const char *run_id, const char *run_wt,
		   const char *commit, char **out, struct sl_err *err);
void train_checkout_drop(struct sl_ctx *ctx, const char *run_id);
void train_checkouts_prune(struct sl_ctx *ctx);


/* ---- The plan and the car's test (train/plan.c, train/test.c) ---- */
struct sl_lock;
struct merge_commit_opts;
struct build_gate_results;
struct sl_config;

/* The train of a target: its cars in order, and the target's tip they were read at. */
struct train {
	struct store_car *cars;
	size_t n;
	char tip[41];
};

/* The run whose worker works the train, as the runner holds it (borrowed). */
struct train_run {
	struct sl_ctx *ctx;
	const struct store_run *run; /* the row as last read: reload() reads it again */
	const char *run_dir;
	const char *wt;
};

/* What stays in the runner, called back by the train (arg: the runner's). */
struct train_ops {
	void *arg;
	/* the repository lock (.system/lock) */
	int (*lock_repo)(void *arg, struct sl_lock *lock, struct sl_err *err);
	/* the merge commit's message and identity of run r's car, into o; *held for release */
	int (*merge_opts)(void *arg, const struct store_run *r, struct merge_commit_opts *o,
			  void **held, struct sl_err *err);
	void (*merge_opts_release)(void *held);
	/* the run's row changed under it (its reason, as an event): read it again */
	void (*reload)(void *arg);
	/* the target's tip now (hex) */
	int (*target_tip)(void *arg, char tip[41], struct sl_err *err);
};

void train_release(struct train *t);

/* The cars of the train of ctx->target_ref, read at tip (t->tip). */
int train_load(struct sl_ctx *ctx, const char *tip, struct train *t, struct sl_err *err);

/*
 * Bring every car in the line onto its place (hold the repository lock):
 * cars of runs that went elsewhere leave, cars beyond merge.train_depth are
 * parked, cars on a stale base are built again on the car ahead (car 1: on
 * t->tip) and their runs told so.
 */
int train_plan(const struct train_run *tr, const struct train_ops *ops, struct train *t,
	       struct sl_err *err);

/*
 * Under the repository lock: the train at the target's tip now, planned
 * (train_plan()), read again and every car told its place (train_retell()).
 * SL_ENOTFOUND when tr's run has no car in it (it left the train).
 */
int train_planned(const struct train_run *tr, const struct train_ops *ops, struct train *t,
		  struct sl_err *err);

/* Car c back to waiting: no commit, no result, no ref (hold the repository lock). */
int train_park(struct sl_ctx *ctx, struct store_car *c, struct sl_err *err);

/* Every car in the line (but `skip`'s, landing now) told its place (best effort). */
void train_retell(const struct train_run *tr, const struct train_ops *ops, const struct train *t,
		  const char *skip);

/* The work order of run `run_id` (into buf; the target's name for NULL), for a reason. */
const char *train_wo_of(struct sl_ctx *ctx, const char *run_id, char *buf, size_t n);

/*
 * The work orders named in a waiting car's reasons, read from the store once
 * for the worker's wait (a run's work order never changes): the look every
 * 100 ms reads no run row for them again. Zeroed, then ctx set.
 */
struct train_names {
	struct sl_ctx *ctx;
	struct {
		char run[64];
		char wo[128];
	} e[4];
	char target[128];
	size_t next;
	/* train_batch_solo()'s answer per run of the batch, read once (64: SL_TRAIN_BATCH_MAX) */
	struct {
		char run[64];
		int solo;
	} solo[64];
	size_t nsolo;
};

/* train_wo_of() of run_id, from the cache when it was read before (NULL: the target's name). */
const char *train_name_of(struct train_names *c, const char *run_id);

/*
 * Whether a live process carries each car (its tester), for the cars up to
 * index `upto` (the decision reads no car behind the run's; theirs are 0):
 * the caller's to free.
 */
int *train_testers_alive(const struct train *t, size_t upto);

/* 1 when a live process is named as car c's tester (core/lock.h's owner). */
int train_tester_alive(const struct store_car *c);

/* 1 when merge.gates selects at least one configured gate; "a, b" of them ("none"). */
int train_has_merge_gates(const struct sl_config *cfg);
void train_gate_names(const struct sl_config *cfg, char *buf, size_t n);

/*
 * Under the repository lock: the car of tr's run (still `commit`) marked as
 * tested by `owner`, 1 when it changed meanwhile (train_claim_test); the
 * gates' result recorded when the car is still the one `owner` tests
 * (train_record_result).
 */
int train_claim_test(const struct train_run *tr, const struct train_ops *ops, const char *commit,
		     const char *owner, struct sl_err *err);
int train_record_result(const struct train_run *tr, const struct train_ops *ops,
			const char *commit, const char *owner, const struct build_gate_results *gr,
			struct sl_err *err);

/*
 * The merge gates on `commit` (into gr), their output under <run>/train/:
 * none configured, the gates' step alone; executor.kind remote, a job on the
 * commit (remote: 1); else in a checkout of its own (train_checkout()). The
 * run's worktree is not touched; wt_ready makes it again when it is gone.
 * Each gate's outcome on `tree` (the commit's) goes to the store, and a red
 * gate runs again there up to merge.rerun_failed times (train_rerun_decide()):
 * gr holds each gate's last run, red only when it was red on every run.
 */
int train_run_gates(const struct train_run *tr, const char *commit, const char *tree, int remote,
		    int (*wt_ready)(void *arg, struct sl_err *err), void *arg,
		    struct build_gate_results *gr, struct sl_err *err);

/*
 * A red merge gate runs again on the same tree before its car is blamed
 * (merge.rerun_failed; rerun.c). One gate's tally: passed on the run just
 * made, and its red runs on the tree so far (the store's gate_runs, that
 * run included).
 */
struct train_gate_tally {
	int passed;
	int reds;
};
enum train_rerun {
	TRAIN_RERUN_GREEN, /* every gate passed */
	TRAIN_RERUN_AGAIN, /* run the gates marked in again[] once more on the same tree */
	TRAIN_RERUN_RED,   /* a gate red rerun_failed + 1 times on the tree: the car is red */
};
enum train_rerun train_rerun_decide(const struct train_gate_tally *g, size_t n, int rerun_failed,
				    int *again);
/*
 * No tree tested twice (merge.reuse_green; rerun.c): 1 when a gate's
 * greens and reds on one tree, for one command, let its green stand there
 * (a green and never a red: a flaky or red tree runs the gate again).
 */
int train_green_stands(int greens, int reds);
/* "red on both runs of the same tree 0123456789ab" ("" for fewer than 2 runs). */
void train_red_runs_words(int runs, const char *tree, char *buf, size_t n);

/*
 * No tree tested twice (docs/RELIABILITY.md): a run's own gates, all green
 * (gr) on its head `head`, in its worktree wt with nothing untracked,
 * ignored or changed there (the clean checkout the merge gates would have),
 * count for head's tree: a merge gate of the same command is not run on a
 * car of that tree. 1 when recorded, 0 when not (a failure is logged).
 */
int train_gating_green(struct sl_ctx *ctx, const char *wt, const char *head,
		       const struct build_gate_results *gr);

/* The merge gates' time of gr, in milliseconds. */
int64_t train_gates_ms(const struct build_gate_results *gr);

/* ---- The landing (train/landing.c) ---- */

/* 1 when commit `from` is `to` or descends from it (both hex), 0 when not or unknown. */
int train_reaches(const char *repo_root, const char *from, const char *to);

/* 1 when the store holds sluice's intent to land run_id's green car, and `tip` has it. */
int train_landing_ours(struct sl_ctx *ctx, const char *run_id, const char *tip);

/*
 * The run landed as mr->commit (hold the repository lock): its train.json,
 * from the store's car (a run without one: a landing sluice did not test),
 * given to write(); then the car's ref goes (the row stays until the run is
 * merged). Failing to delete the ref is logged.
 */
int train_landed(struct sl_ctx *ctx, const char *run_id, const struct merge_commit_result *mr,
		 int (*write)(void *arg, struct json_t *j, struct sl_err *err), void *arg,
		 struct sl_err *err);

/* ---- The run's own car in the line (train/line.c; each takes the repository lock) ---- */

/* Out of the train, its ref deleted. */
int train_leave(const struct train_run *tr, const struct train_ops *ops, struct sl_err *err);

/* Out of the line on a speculation: parked (train_park()), to be built again on the tip. */
int train_park_mine(const struct train_run *tr, const struct train_ops *ops, struct store_car *me,
		    struct sl_err *err);

/* This process no longer carries the car: the cars behind it stop waiting for it (best effort). */
void train_let_go(const struct train_run *tr, const struct train_ops *ops);

/* 1 when car c still stands for its run (approved or landing, with the car's head). */
int train_car_holds(struct sl_ctx *ctx, const struct store_car *c);

/*
 * The train's state as train_decide() reads it for tr's run (its car's
 * place in *w): the testers' liveness up to the run's car, the work orders
 * it names through `names`, the one git walk only where the decision reads
 * it. st->alive is the caller's to free. -1 when the run has no car.
 */
int train_state_of(const struct train_run *tr, const struct train *t, struct train_names *names,
		   struct train_state *st, struct train_where *w);

/* 1 when run_id's car is under test by a process that is gone (a killed worker's). */
int train_tester_gone(struct sl_ctx *ctx, const char *run_id);

/*
 * A car red on its own merge, with nothing new on the target: the names of
 * its failed gates (into failed, at most max - 1, NULL after them: they
 * point into the returned document, the caller's to json_decref()) and the
 * run's reason (into reason).
 */
struct json_t *train_own_red(const struct store_car *me, const char **failed, size_t max,
			     char *reason, size_t reason_n);

/* ---- Joining with queue.overlap: fatal, and the rivals (train/join.c) ---- */

/*
 * The run whose landings `tip` holds and `base` does not (the Sluice-Run
 * trailers on tip's first-parent line down to base, skip_run's left out),
 * newest first, at most 64: a semantic conflict's rivals. *ids
 * (NULL-terminated) is the caller's.
 */
int train_rivals_between(struct sl_ctx *ctx, const char *skip_run, const char *tip,
			 const char *base, char ***ids, struct sl_err *err);

/*
 * The run that changed a file `run` changed first (*rival, the caller's),
 * with the files (*paths, the caller's): one that landed on the target
 * `tip` since `run` last met it, or a car already in the train; *landed says
 * which. 0 with *rival NULL when there is none. Hold the repository lock.
 */
int train_first_overlap(struct sl_ctx *ctx, const struct store_run *run, const char *tip,
			char **rival, char ***paths, int *landed, struct sl_err *err);

/* "'a.txt', 'b.txt', 'c.txt' and 4 more" of paths (into buf). */
void train_some_paths(const char *const *paths, char *buf, size_t n);

/*
 * The run of tr joins the train (a car of its head already there stays as
 * it is). Under queue.overlap: fatal a run that changed a file another run
 * changed first does not join: 1, and why (into why) the run fails. The
 * check and the join hold the repository lock, so that of two runs
 * approved at once one sees the other.
 */
int train_join(const struct train_run *tr, const struct train_ops *ops, char *why, size_t n,
	       struct sl_err *err);

/* ---- The reasons a run shows outside train_decide() (train/words.c): pure ---- */

/* The run's car under test: "in the train: car 2 of 3, testing on top of W1 (gates: a, b)". */
void train_testing_reason(char *buf, size_t n, int pos, int total, const char *ahead_name,
			  const char *gate_names);

/* queue.overlap: fatal: paths (their words) also changed by rival (its work order `wo`). */
void train_overlap_reason(char *buf, size_t n, const char *paths, const char *wo,
			  const char *rival, int landed);

/* The run's head is on the target by a move sluice did not make, held (unreviewed). */
void train_held_reason(char *buf, size_t n, const char *target, const char *commit,
		       const char *run);

/* ---- A frozen target (train/freeze.c) ---- */
struct sl_freeze_window;

/* What holds a target's landings now: a person's freeze and the config's windows. */
struct train_freeze {
	int frozen;
	int allow_urgent; /* every freeze that holds lets urgent work land */
	int64_t until_ms; /* the person's freeze: its end (0: until unfrozen, or a window) */
	char reason[256]; /* the first freeze's reason */
	int by_person;    /* `sluice freeze` holds (sluice unfreeze ends it) */
	int by_window;    /* a window of merge.freeze holds */
};

/* 1 when window w holds on day `wday` (0 Sunday) at `minute` of the day (pure). */
int train_window_holds(const struct sl_freeze_window *w, int wday, int minute);

/*
 * Whether ctx's target is frozen at now_ms (into *f): the store's freeze
 * (`sluice freeze`, not past its --until) and merge.freeze's windows. A
 * freeze the store cannot read holds (logged). 1 frozen, 0 not.
 */
int train_frozen(struct sl_ctx *ctx, int64_t now_ms, struct train_freeze *f);

/*
 * train_frozen(), and whether the work order's run is urgent (*urgent): 1
 * when the freeze holds that run's landing (not urgent, or not allowed).
 */
int train_frozen_for(struct sl_ctx *ctx, const char *work_order_id, int64_t now_ms,
		     struct train_freeze *f, int *urgent);

/* A freeze as JSON ({reason, until: ISO 8601 or null, allow_urgent}; null: not frozen). */
struct json_t *train_freeze_json(const struct train_freeze *f);

/* "target main: frozen (REASON) until TIME: lands nothing, tests go on" (into buf). */
void train_freeze_line(const struct sl_ctx *ctx, const struct train_freeze *f, char *buf,
		       size_t n);

#endif
