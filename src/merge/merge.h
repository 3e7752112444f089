#ifndef SL_MERGE_MERGE_H
#define SL_MERGE_MERGE_H
/*
 * The merge step (docs/design.md, The merge): `git merge-tree --write-tree` is
 * the authority for the merge (libgit2 may add a second opinion); the no-ff merge
 * commit and the compare-and-swap of the target ref; bringing a checked-out
 * target along like receive.denyCurrentBranch=updateInstead; the conflict
 * context; and the builder's resolution inside the run's worktree.
 *
 * Revisions given to these functions are resolved with libgit2
 * (git_revparse_single); anything starting with '-' is refused, and only
 * full hex object ids are ever passed to the git CLI.
 *
 * The git CLI is "git" from PATH, or $SLUICE_GIT when set.
 */
#include <git2.h>
#include <jansson.h>
#include <stddef.h>
#include "core/buf.h"
#include "core/err.h"

/* A sorted list of unique repository paths. */
struct merge_paths {
	char **v;
	size_t n;
	size_t cap;
};

#define MERGE_PATHS_INIT { NULL, 0, 0 }

/* Add a copy of `path` (kept sorted and unique); 0 or SL_ERROR (no memory). */
int merge_paths_add(struct merge_paths *p, const char *path);
/* 1 when `path` is in the list. */
int merge_paths_has(const struct merge_paths *p, const char *path);
void merge_paths_release(struct merge_paths *p);

/*
 * 1 when git converts `path` in `repo` in a way libgit2 does not: its
 * `filter` attribute names a driver (smudge/clean, such as LFS) or it has a
 * `working-tree-encoding`; also 1 when the attributes cannot be read (let
 * git decide). Its content must go through git in both directions.
 */
int merge_path_converted(git_repository *repo, const char *path);

struct merge_opts {
	int libgit2_opinion; /* 1: also merge with libgit2, into res->lg_* (never the verdict) */
};

#define MERGE_OPTS_INIT { 0 }

#define MERGE_REASON_MAX 512

/*
 * What merging `theirs` into `ours` gives, as `git merge-tree --write-tree`
 * (git's ort merge, with its rename and directory-rename detection) says:
 * git is the authority for the verdict, the tree and the conflicted paths.
 *
 * conflicts: exactly the paths git merge-tree --name-only prints, sorted and
 * unique; git's "<path>~<side>" names for a side moved out of the way
 * (file/directory, file/symlink) are reported as "<path>".
 *
 * libgit2's in-memory merge is computed only with opts->libgit2_opinion,
 * as a second opinion in the lg_* fields: it never changes clean, tree,
 * conflicts or reason.
 */
struct merge_result {
	int clean;                       /* git merge-tree exited 0 */
	git_oid ours;                    /* the resolved commits */
	git_oid theirs;
	git_oid tree;                    /* the tree git wrote: the merge when clean, else the
					    merge with conflict markers in text conflicts */
	struct merge_paths conflicts;    /* git's conflicted paths, "~<side>" dropped */
	struct sl_buf git_messages;      /* git's CONFLICT lines, one per line (bounded 64 KiB) */
	char reason[MERGE_REASON_MAX];   /* "" when clean */
	int lg_clean;                    /* libgit2's verdict; -1 when not asked */
	git_oid lg_tree;                 /* the tree libgit2 wrote when it says clean */
	struct merge_paths lg_conflicts; /* the ancestor, ours and theirs paths of its conflicts */
};

#define MERGE_RESULT_INIT { 0 }

/*
 * Preview the merge of `theirs_rev` into `ours_rev` in the repository at
 * `repo_path` (a work tree or a git dir). `opts` NULL: MERGE_OPTS_INIT.
 * Returns 0 whether clean or not (look at res->clean), SL_EINVALID for a
 * revision that starts with '-' or names no commit, or an error (git
 * merge-tree failed). *res is the caller's: merge_result_release(), also
 * after an error.
 */
int merge_preview(const char *repo_path, const char *ours_rev, const char *theirs_rev,
		  const struct merge_opts *opts, struct merge_result *res, struct sl_err *err);

void merge_result_release(struct merge_result *res);

enum merge_status {
	MERGE_MERGED = 0, /* the merge commit is on the target */
	MERGE_CONFLICT,   /* the merge conflicts: paths and reason */
	MERGE_DEFERRED,   /* the target's checkout cannot take it now: nothing touched, retry later */
	MERGE_MOVED       /* opts->commit: the target is not its first parent (any more) */
};

/*
 * The merge commit's subject: merge.message `tmpl` rendered with the run's
 * names ({run.id}, {run.short}, {run.branch}, {reviewer}) and its work
 * order's fields ({work_order.<field>}: a string or an integer, else
 * empty), trailing blanks and newlines cut, appended to out (subject.c).
 * Nothing when tmpl is NULL or empty. The strings are borrowed.
 */
struct merge_subject_vars {
	const char *run_id, *branch, *reviewer;
	const json_t *fields; /* the work order's fields */
};
int merge_subject_render(struct sl_buf *out, const char *tmpl, const struct merge_subject_vars *v,
			 struct sl_err *err);

struct merge_commit_opts {
	/*
	 * NOTE: new fields go at the end (MERGE_COMMIT_OPTS_INIT is positional).
	 */
	const char *target;        /* branch: "main" or "refs/heads/main"; required */
	const char *head;          /* the run's head commit (hex id or revision); required */
	const char *work_order_id; /* required */
	const char *title;         /* required */
	const char *run_id;        /* required */
	const char *reviewer;      /* Reviewed-by:; required */
	const char *resolved_with; /* Resolved-with: <rival run id>, or NULL */
	const char *subject;       /* NULL: "Merge <work_order_id>: <title>" */
	int max_attempts;          /* redo the merge this often when the target moves; 0: 5 */
	/*
	 * Test hook: called on every attempt after the merge commit exists and
	 * the checkout (if any) is updated, just before the ref moves. A
	 * nonzero return aborts with that code.
	 */
	int (*before_ref_update)(void *data, int attempt);
	void *hook_data;
	/*
	 * A file kept while a checked-out target's files are being brought
	 * along and until its ref moved (who, the old and the new tree): if
	 * the process dies in between, merge_recover_checkout() puts the
	 * files it had written back in order. NULL: none.
	 */
	const char *journal;
	/*
	 * Called on every attempt with the tip the target is to move from
	 * (compare-and-swap), before anything is touched. Nonzero: do not
	 * land on it; `why` (n bytes) says why, and merge_commit() returns
	 * SL_ETRANSIENT (MERGE_DEFERRED) with that reason. NULL: none.
	 */
	int (*guard)(void *data, const git_oid *tip, char *why, size_t n);
	void *guard_data;
	/*
	 * A merge commit made earlier by merge_build() (full hex id), or NULL.
	 * Set: merge_commit() merges nothing, it lands exactly this commit
	 * (the tested car of the merge train): the target moves by CAS from
	 * the commit's first parent to the commit. When the target's tip is
	 * not that first parent it returns SL_ETRANSIENT with MERGE_MOVED.
	 */
	const char *commit;
	/*
	 * 1: merge and land nothing; only find the merge of `head` already on
	 * the target (SL_EEXISTS, as below: a landing cut short by a crash).
	 * When the head is not on the target, SL_ETRANSIENT with MERGE_MOVED.
	 */
	int find_only;
	/*
	 * The author and committer of the merge commit (sl_repo_identity(),
	 * docs/config.md commit.name/commit.email); NULL: sluice <sluice@localhost>.
	 */
	const char *name;
	const char *email;
};

#define MERGE_COMMIT_OPTS_INIT { NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL }

struct merge_commit_result {
	enum merge_status status;
	git_oid commit;              /* the merge commit (MERGE_MERGED) */
	git_oid tip;                 /* the target tip merged into (first parent) */
	git_oid tree;                /* the merged tree */
	int attempts;                /* merges computed (1 unless the target moved) */
	int checkout_updated;        /* 1: a work tree with the target checked out was brought along */
	int checkout_via_git;        /* 1: with `git read-tree -m -u` (libgit2 cannot read that index) */
	struct merge_paths paths;    /* conflicted paths, or the user's colliding paths */
	struct merge_paths kept;     /* paths whose index held the merge's entry already: left alone */
	char reason[MERGE_REASON_MAX];
};

#define MERGE_COMMIT_RESULT_INIT { 0 }

/*
 * Merge opts->head into opts->target with a no-ff merge commit whose
 * message is the subject, a blank line and the trailers Work-Order,
 * Sluice-Run, Reviewed-by and (if given) Resolved-with; author and
 * committer opts->name <opts->email> (default "sluice <sluice@localhost>").
 *
 * The commit is created without moving a ref; the target then moves by
 * compare-and-swap against the tip merged into. When the target moved
 * meanwhile, the merge is computed again on the new tip (up to
 * max_attempts). When the target is the branch a work tree has checked out
 * (HEAD names it; a detached HEAD checks out no branch), that work tree is
 * first brought to the merge with a safe checkout (baseline: the old tip's
 * tree) that keeps the user's staged, unstaged and untracked changes as
 * `git read-tree -m -u OLD NEW` would: everything checked first with the
 * index lock held (recorded in the journal), no write through a symbolic
 * link, skip-worktree entries left unwritten; with git itself when libgit2
 * cannot read that index (split or sparse index) or sparse checkout is on.
 * If the CAS then fails, the checkout is brought back to
 * the old tip's tree before the next attempt, which then uses that tree as
 * its baseline.
 *
 * Returns 0 (MERGE_MERGED); SL_ECONFLICT (MERGE_CONFLICT, res->paths and
 * reason); SL_ETRANSIENT (MERGE_DEFERRED: the user's changes collide with
 * the merge (staged ones included), a file or link of the user's is in the
 * way, a merge/rebase/cherry-pick/revert/bisect/am is in progress there or
 * a rebase or bisect of the target anywhere, the work tree with the target
 * is missing, its index has conflicts or is locked; nothing was touched,
 * try again later); SL_EEXISTS (head is
 * already in the target: res->commit is the merge commit found on the
 * target's first-parent line, or zero);
 * SL_ENOTFOUND (no such target branch); SL_EINVALID (bad head); SL_ELOCKED
 * (the ref stayed locked); SL_ECONFLICT also when the target kept moving.
 * *res is the caller's: merge_commit_result_release().
 */
int merge_commit(const char *repo_path, const struct merge_commit_opts *opts,
		 struct merge_commit_result *res, struct sl_err *err);

void merge_commit_result_release(struct merge_commit_result *res);

/*
 * The car of the merge train: the merge commit of opts->head into `onto`
 * (a full hex commit id: the target's tip or the car ahead), with the
 * message of merge_commit() and git's merged tree, moving no ref (opts->
 * target only names the branch in errors). Returns 0 (res->commit,
 * res->tree; res->tip is `onto`), SL_ECONFLICT (res->paths and reason, as
 * merge_commit), SL_EEXISTS (the head is in `onto` already), SL_EINVALID.
 * *res is the caller's: merge_commit_result_release().
 */
int merge_build(const char *repo_path, const struct merge_commit_opts *opts, const char *onto,
		struct merge_commit_result *res, struct sl_err *err);

/* The maximum size of gitConflictOutput. */
#define MERGE_CONFLICT_OUTPUT_MAX ((size_t)256 << 10)

struct merge_conflict_info {
	struct merge_paths paths;  /* as merge_result.conflicts */
	struct sl_buf output;      /* gitConflictOutput: per path, markers or a one-line description */
	int truncated;             /* 1 if output hit MERGE_CONFLICT_OUTPUT_MAX */
	char reason[MERGE_REASON_MAX];
};

#define MERGE_CONFLICT_INFO_INIT { MERGE_PATHS_INIT, SL_BUF_INIT, 0, { 0 } }

/*
 * The conflict context of merging `theirs_rev` into `ours_rev`, all from
 * git merge-tree's result (merge_result): for each path git names,
 * "--- <path>: <kind>" and, for a text conflict (git's "CONFLICT
 * (contents)" on a file), its conflicted hunks as git wrote the file into
 * its tree: each region of conflict markers with three lines of context
 * around it (regions that meet are one hunk) under "@@ lines A-B @@", the
 * line numbers of that file (as in a worktree after `git merge`). git 2.39's merge-tree takes no labels and writes the
 * ids it was given ("<<<<<<< <ours id>[:<path>]"): those marker lines get
 * `ours_label` and `theirs_label` instead (NULL: the revisions as given),
 * as do the ids in git's messages. Binary files, symlinks, submodules,
 * modify/delete and renames get a one-line description. git's CONFLICT
 * messages follow ("--- git merge-tree:"). A clean merge gives empty paths
 * and output. `opts` as merge_preview. *info is the caller's:
 * merge_conflict_info_release().
 */
int merge_conflict_info(const char *repo_path, const char *ours_rev, const char *theirs_rev,
			const char *ours_label, const char *theirs_label, const struct merge_opts *opts,
			struct merge_conflict_info *info, struct sl_err *err);

void merge_conflict_info_release(struct merge_conflict_info *info);

/*
 * Inside the run's worktree `wt_path`, start merging `target_oid` (a full
 * hex commit id) into the checked-out run branch with the git CLI
 * (`merge --no-ff --no-commit`, hooks off, identity sluice), leaving
 * conflict markers in the files. The worktree must be clean. *conflicted
 * gets the unmerged paths (empty when git merged cleanly). Returns 0 in both
 * cases; an error when git refused (dirty worktree, bad id).
 */
int merge_into_worktree(const char *wt_path, const char *target_oid,
			struct merge_paths *conflicted, struct sl_err *err);

/*
 * Check that a resolution is complete: the index of `wt_path` has no
 * unmerged entries and none of `conflicted` (as returned by
 * merge_into_worktree) holds a conflict marker line in the work tree
 * ("<<<<<<< ", ">>>>>>> " at a line start, or a line that is exactly
 * "======="). SL_ECONFLICT naming the first offending path and line.
 */
int merge_verify_resolved(const char *wt_path, const struct merge_paths *conflicted,
			  struct sl_err *err);

/*
 * Finish the resolution: stage everything but `excluded` (the worktree's
 * shared and copied paths; NULL-terminated, or NULL) with `git add -A`, verify as
 * merge_verify_resolved(), and commit the merge with `git commit` (the
 * message: `message`, or git's prepared MERGE_MSG when NULL), hooks off,
 * author and committer `name` <`email`> (each NULL: sluice, sluice@localhost;
 * sl_repo_identity() gives the configured ones). If the builder already
 * committed the merge, nothing is committed. *head gets the resulting HEAD.
 */
int merge_commit_resolution(const char *wt_path, const char *message, const char *name,
			    const char *email, const struct merge_paths *conflicted,
			    const char *const *excluded, git_oid *head, struct sl_err *err);

/*
 * After a crash during a merge (the journal of merge_commit_opts is still
 * there and its process is gone): in the work tree that has `target`
 * checked out, every path the merge changes whose file is what the merge
 * wrote, or a cut-off write of it, or is missing where the merge removed
 * or rewrote it, is brought back in line with what the target's ref names
 * now (index included). Files holding anything else are the user's and are
 * left alone; nothing at all is when the journal has no "write" line (the
 * merge died before it wrote a file). Removes the journal. SL_ETRANSIENT,
 * journal kept, while the user's index.lock is there (their git is at
 * work). *recovered: 1 when it did something.
 */
int merge_recover_checkout(const char *repo_path, const char *target, const char *journal,
			   int *recovered, struct sl_err *err);

/* 1 when `journal` is whole and the merge that wrote it is dead. */
int merge_journal_dead(const char *journal);

/*
 * The locks a dead merge held, as its journal records them ("lock <dev>
 * <ino> <mtime s> <mtime ns> <path>" lines, written right after the merge
 * created each one; only an index.lock): each is removed only while the file at that path is
 * still that very file; anything else there (the user's own index.lock
 * made since) is never touched (docs/design.md, Locks and crash recovery). *left: recorded locks still
 * there that could not be removed. 0, or -1 when the journal is unreadable.
 */
int merge_journal_release_locks(const char *journal, int *left);

/*
 * At a tick's start, under the repository lock (merge/leftovers.c): the
 * target's ref lock (<gitdir>/<target_ref>.lock) and packed-refs.lock
 * removed once older than 5 minutes (a git or sluice killed while moving
 * the ref); and after a merge that died (`journal` there, its process
 * gone), its locks released and the checkout of `target` in the work tree
 * `root` put back in line (merge_recover_checkout()), or left for a later
 * tick while a lock is too young to tell. Logged, never fatal.
 */
void merge_remove_stale_ref_locks(const char *gitdir, const char *target_ref);
void merge_recover_dead(const char *root, const char *gitdir, const char *target_ref,
			const char *target, const char *journal);

/* ---- the rival of a conflict: who last changed the clashing lines (merge/blame.c) ---- */

/* A change between two versions of a file, as a diff's hunk header gives it (1-based). */
struct merge_hunk {
	size_t old_start, old_count; /* old_count 0: lines added after line old_start */
	size_t new_start, new_count; /* new_count 0: lines removed after line new_start */
};

/* Lines first .. first + count - 1 of a file (1-based). */
struct merge_lines {
	size_t first, count;
};

/*
 * The lines of our side (of `our_total` lines) that clash with their side:
 * those of each of our hunks (against the merge base) whose base lines
 * overlap or touch the base lines of one of theirs, which is when git's
 * three-way file merge (xdiff) makes them a conflict. For our hunk that only
 * removed lines, the lines on either side of the removal. Sorted, merged,
 * within 1..our_total. Pure. *out is the caller's (free()); 0, or -1 out of
 * memory.
 */
int merge_clashing_lines(const struct merge_hunk *ours, size_t nours,
			 const struct merge_hunk *theirs, size_t ntheirs, size_t our_total,
			 struct merge_lines **out, size_t *nout);

/*
 * A landing on the target that last changed clashing lines: the commit on
 * the target's first-parent history that brought them (a run's merge commit,
 * or a commit made on the target itself), its author ("Name <mail>") and
 * subject, and where: the first path and line of it, how many lines.
 */
struct merge_landing {
	char commit[GIT_OID_HEXSZ + 1];
	char *author;
	char *subject;
	char *path;
	size_t line;
	size_t lines;
};

/*
 * Who last changed the conflicting lines on the target: for each of `paths`
 * (conflicted by merging `head` into `tip`), the clashing lines of tip's side
 * (merge_clashing_lines against the merge base of tip and head) are blamed
 * with `git blame --first-parent <base>..<tip>`, so that each line names the
 * landing that brought it; lines older than the base are nobody's. A path
 * missing on tip or in the base's place, or binary, adds nothing. Landings in
 * the order first seen (path order, then line order). *out is the caller's:
 * merge_landings_free(). 0 (maybe none), or an error.
 */
int merge_blame_landings(const char *repo_path, const char *tip, const char *head,
			 const char *const *paths, size_t npaths, struct merge_landing **out,
			 size_t *nout, struct sl_err *err);
void merge_landings_free(struct merge_landing *v, size_t n);

/* ---- landings (merge/landings.c) ------------------------------------------ */

/*
 * The trailer that names the run a merge commit landed: written by
 * merge_commit (merge/commit.c), read by merge_line_next and every
 * other reader (docs/ARCHITECTURE.md, "merge"). Spelled here only.
 */
#define MERGE_TRAILER_RUN "Sluice-Run"

/*
 * The target's first-parent line, one commit at a time: every reader of
 * landings walks it through here (docs/ARCHITECTURE.md, "merge").
 * merge_landings_between below is a loop over it; the audit walks the
 * target with it. A walk of every commit a move brings (target/target.c)
 * is not a walk of the line.
 *
 * Where the line starts and ends. Zero or NULL means "no limit" / "none".
 */
struct merge_line_opts {
	const git_oid *tip;      /* the commit whose first-parent line is walked */
	const git_oid *base;     /* hidden: it and what it reaches are not walked, or NULL */
	const git_oid *until[2]; /* the walk ends once each one given was walked; none: no end */
	size_t max_commits;      /* commits walked at most */
};
#define MERGE_LINE_OPTS_INIT { NULL, NULL, { NULL, NULL }, 0 }

/* One commit of the line. Borrowed from the walk until its next merge_line_next. */
struct merge_line_commit {
	const git_commit *commit;
	const git_oid *id;
	char hex[GIT_OID_HEXSZ + 1];
	const char *run;             /* its MERGE_TRAILER_RUN trailer, NULL: a person's commit */
	const git_signature *author;
	const char *subject;         /* the message's first line ("" when none) */
	unsigned int parents;
};

/* A walk of the line: the caller's, its fields the walk's own. */
struct merge_line {
	git_repository *repo;
	git_revwalk *walk;
	git_oid until[2];
	unsigned int nuntil, seen; /* how many `until` were given; a bit for each walked */
	size_t walked, max;
	int done;
	git_commit *commit;        /* what merge_line_next gave last */
	char *run;
};
#define MERGE_LINE_INIT { 0 }

/*
 * Start a walk of o->tip's first-parent line, newest first, in `repo` (the
 * caller's, open until merge_line_close). 0, or a libgit2 error code
 * (git_error_last() says what; word it with sl_err_git). Either way `l` is
 * released with merge_line_close.
 */
int merge_line_open(struct merge_line *l, git_repository *repo, const struct merge_line_opts *o);
/*
 * The next commit of the line into *c: 1, or 0 at its end (the base, the
 * last `until`, the limit, or the root). A commit git cannot read is
 * walked (it counts for the limit and `until`) but not given.
 */
int merge_line_next(struct merge_line *l, struct merge_line_commit *c);
/* What the walk holds (not `l` itself, nor the repository). */
void merge_line_close(struct merge_line *l);

/* What merge_landings_between walks and keeps. Zero means "no limit" / "off". */
struct merge_landings_opts {
	const char *tip;      /* the commit (hex) whose first-parent line is walked */
	const char *base;     /* a commit (hex) the walk stops at (hidden), or NULL: the whole line */
	size_t max_commits;   /* commits walked at most */
	size_t max_found;     /* landings kept at most */
	int merges_only;      /* only merges (two parents) are landings */
	int persons;          /* also keep the commits without the trailer (run NULL) */
	const char *skip_run; /* a run left out, or NULL */
};

/* One commit of the line: the run it landed (NULL: a person's commit), author, subject. */
struct merge_run_landing {
	char commit[GIT_OID_HEXSZ + 1];
	char *run;
	char *author;  /* "Name <email>" */
	char *subject; /* the message's first line */
};

/*
 * Which runs landed between o->base and o->tip: the MERGE_TRAILER_RUN
 * trailers of tip's first-parent line down to base, newest first, with the
 * filters and limits of `o`. *out (n entries) is the caller's, freed with
 * merge_run_landings_free; on error *out is NULL and *n 0.
 */
int merge_landings_between(const char *repo_root, const struct merge_landings_opts *o,
			   struct merge_run_landing **out, size_t *n, struct sl_err *err);
void merge_run_landings_free(struct merge_run_landing *v, size_t n);

/* The run a commit message's MERGE_TRAILER_RUN trailer names (a new string), or NULL. */
char *merge_run_of_message(const char *message);

#endif
