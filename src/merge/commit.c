/*
 * merge_commit: the no-ff merge commit and the compare-and-swap of the
 * target ref, redone on the new tip when the target moved meanwhile.
 */
#include "merge/merge_int.h"
#include "core/fs.h"
#include "core/fault.h"
#include "core/lock.h"
#include "core/repo.h"
#include "core/time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#define DEFAULT_ATTEMPTS 5
#define LOCK_RETRIES 5
#define MESSAGE_MAX ((size_t)16 << 10)
/* A longer subject (merge.message may name any work-order field) is cut: never too long. */
#define SUBJECT_MAX ((size_t)2048)
#define ALREADY_MERGED_DEPTH 10000

/* State of one merge_commit call. */
struct mc {
	git_repository *repo;
	const struct merge_commit_opts *o;
	struct merge_commit_result *res;
	char refname[512];
	git_commit *head;
	git_signature *sig;
	struct sl_buf msg;
	/*
	 * After a failed CAS the checkout was brought back to the old tip's
	 * tree; that, not the new tip's, is what its files hold, so it is the
	 * next attempt's baseline (this also heals a checkout whose branch was
	 * moved underneath it, e.g. by update-ref).
	 */
	git_oid wt_base;
	int have_wt_base;
	int keep_journal; /* a dead merge's journal: not ours to remove */
};

static int has_newline(const char *s)
{
	return s && strpbrk(s, "\r\n") != NULL;
}

/* Subject: one line (newlines folded to spaces); trailers in the last paragraph. */
static int build_message(struct sl_buf *msg, const struct merge_commit_opts *o, struct sl_err *err)
{
	char *p;
	int error = 0;

	if (!o->work_order_id || !o->title || !o->run_id || !o->reviewer || !*o->work_order_id ||
	    !*o->run_id || !*o->reviewer)
		return sl_err_set(err, SL_EINVALID, "merge needs a work order id, title, run id "
				  "and reviewer");
	if (has_newline(o->work_order_id) || has_newline(o->run_id) || has_newline(o->reviewer) ||
	    has_newline(o->resolved_with))
		return sl_err_set(err, SL_EINVALID, "a merge trailer value contains a newline");
	if (o->subject) {
		size_t n = strlen(o->subject);

		if (n > SUBJECT_MAX) {
			n = SUBJECT_MAX - 3; /* at a character boundary, then "..." */
			while (n && ((unsigned char)o->subject[n] & 0xc0) == 0x80)
				n--;
		}
		error |= sl_buf_add(msg, o->subject, n);
		if (n < strlen(o->subject))
			error |= sl_buf_puts(msg, "...");
	} else {
		error |= sl_buf_addf(msg, "Merge %s: %s", o->work_order_id, o->title);
	}
	for (p = msg->ptr; p && *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	error |= sl_buf_addf(msg, "\n\nWork-Order: %s\n" MERGE_TRAILER_RUN ": %s\nReviewed-by: %s\n",
			     o->work_order_id, o->run_id, o->reviewer);
	if (o->resolved_with && *o->resolved_with)
		error |= sl_buf_addf(msg, "Resolved-with: %s\n", o->resolved_with);
	return error ? sl_err_set(err, SL_ETOOBIG, "the merge message is too long") : 0;
}

static int set_refname(struct mc *m, struct sl_err *err)
{
	const char *t = m->o->target;
	int n;

	if (!t || !*t || t[0] == '-')
		return sl_err_set(err, SL_EINVALID, "invalid target branch '%s'", t ? t : "");
	n = snprintf(m->refname, sizeof(m->refname), "%s%s",
		     strncmp(t, "refs/", 5) ? "refs/heads/" : "", t);
	if (n < 0 || (size_t)n >= sizeof(m->refname) || !git_reference_is_valid_name(m->refname))
		return sl_err_set(err, SL_EINVALID, "invalid target branch '%s'", t);
	return 0;
}

/* The target's current tip. */
static int read_tip(git_commit **tip, struct mc *m, struct sl_err *err)
{
	git_reference *ref = NULL;
	int error;

	*tip = NULL;
	error = git_reference_lookup(&ref, m->repo, m->refname);
	if (error == GIT_ENOTFOUND)
		return sl_err_set(err, SL_ENOTFOUND, "target branch '%s' does not exist; create it "
				  "or set 'target' in .system/config.yaml", m->o->target);
	if (!error)
		error = git_reference_peel((git_object **)tip, ref, GIT_OBJECT_COMMIT);
	git_reference_free(ref);
	return error ? sl_err_git(err, error, "cannot read the target branch '%s'", m->o->target)
		     : 0;
}

/*
 * The head is already in the target (a rerun after a crash): find the merge
 * commit on the first-parent line whose second parent is the head.
 */
static int find_existing_merge(struct mc *m, const git_commit *tip)
{
	git_revwalk *walk = NULL;
	git_oid id;
	int n = 0, found = 0;

	if (git_revwalk_new(&walk, m->repo) || git_revwalk_push(walk, git_commit_id(tip)))
		goto out;
	git_revwalk_simplify_first_parent(walk);
	while (!found && n++ < ALREADY_MERGED_DEPTH && !git_revwalk_next(&id, walk)) {
		git_commit *c = NULL;

		if (!git_commit_lookup(&c, m->repo, &id) && git_commit_parentcount(c) == 2 &&
		    git_oid_equal(git_commit_parent_id(c, 1), git_commit_id(m->head))) {
			git_oid_cpy(&m->res->commit, &id);
			found = 1;
		}
		git_commit_free(c);
	}
out:
	git_revwalk_free(walk);
	return found;
}

static int already_merged(struct mc *m, const git_commit *tip, struct sl_err *err)
{
	const git_oid *t = git_commit_id(tip), *h = git_commit_id(m->head);

	if (!git_oid_equal(t, h) && git_graph_descendant_of(m->repo, t, h) != 1)
		return 0;
	m->res->status = MERGE_MERGED;
	git_oid_cpy(&m->res->tip, t);
	if (!find_existing_merge(m, tip))
		memset(&m->res->commit, 0, sizeof(m->res->commit));
	snprintf(m->res->reason, sizeof(m->res->reason), "'%s' is already merged into '%s'",
		 git_oid_tostr_s(h), m->o->target);
	return sl_err_set(err, SL_EEXISTS, "%s", m->res->reason);
}

static void short_sleep(int attempt)
{
	sl_sleep_ms((int64_t)10 << attempt); /* 10, 20, 40, 80, 160 ms */
}

/* CAS the target from tip to the new commit, retrying a locked ref briefly; 1: it moved. */
static int move_ref(struct mc *m, const git_oid *tip, struct sl_err *err)
{
	git_reference *out = NULL;
	char log[256];
	int error = GIT_ELOCKED, i;

	snprintf(log, sizeof(log), "merge: run %s (%s), no-ff", m->o->run_id, m->o->work_order_id);
	for (i = 0; i < LOCK_RETRIES && error == GIT_ELOCKED; i++) {
		if (i)
			short_sleep(i - 1);
		error = git_reference_create_matching(&out, m->repo, m->refname, &m->res->commit, 1,
						      tip, log);
		git_reference_free(out);
		out = NULL;
	}
	if (error == GIT_EMODIFIED)
		return 1;
	if (error)
		return sl_err_git(err, error, "cannot move the target branch '%s'", m->o->target);
	return 0;
}

/* Create the merge commit of tip and head with tree `tree` (no ref moves). */
static int create_commit(struct mc *m, const git_commit *tip, const git_tree *tree,
			 struct sl_err *err)
{
	const git_commit *parents[2] = { tip, m->head };
	int error;

	error = git_commit_create(&m->res->commit, m->repo, NULL, m->sig, m->sig, NULL,
				  sl_buf_cstr(&m->msg), tree, 2, parents);
	sl_fault(error ? NULL : "merge.after_commit");
	return error ? sl_err_git(err, error, "cannot create the merge commit") : 0;
}

static int conflict(struct mc *m, struct merge_result *pr, struct sl_err *err)
{
	size_t i;

	m->res->status = MERGE_CONFLICT;
	snprintf(m->res->reason, sizeof(m->res->reason), "%s", pr->reason);
	for (i = 0; i < pr->conflicts.n; i++)
		if (merge_paths_add(&m->res->paths, pr->conflicts.v[i]))
			return sl_err_set(err, SL_ERROR, "out of memory");
	return sl_err_set(err, SL_ECONFLICT, "merging '%s' into '%s' conflicts: %s",
			  git_oid_tostr_s(git_commit_id(m->head)), m->o->target, pr->reason);
}

/* Write the journal of merge_commit_opts: "<owner>\n<old tree>\n<new tree>\n". */
static int write_journal(struct mc *m, const git_oid *old_tree, const git_oid *new_tree,
			 struct sl_err *err)
{
	char owner[64], text[256];

	if (!m->o->journal)
		return 0;
	/*
	 * A journal of a merge that died is the only record of what it left
	 * half done: keep it for the recovery (merge_recover_checkout) and wait.
	 */
	if (merge_journal_dead(m->o->journal)) {
		m->res->status = MERGE_DEFERRED;
		snprintf(m->res->reason, sizeof(m->res->reason),
			 "an interrupted merge is being recovered first (%s)", m->o->journal);
		m->keep_journal = 1;
		return sl_err_set(err, SL_ETRANSIENT, "%s", m->res->reason);
	}
	sl_owner_self(owner, sizeof(owner));
	snprintf(text, sizeof(text), "%s\n%s\n", owner, git_oid_tostr_s(old_tree));
	snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s\n",
		 git_oid_tostr_s(new_tree));
	return sl_write_file_atomic(m->o->journal, text, strlen(text), err);
}

/* Commit, bring a checkout along, CAS. 0 merged, 1 the target moved, or an error. */
static int commit_and_move(struct mc *m, const git_commit *tip, const git_oid *tree_id,
			   int attempt, struct sl_err *err)
{
	git_tree *tree = NULL;
	const git_oid *old_tree = m->have_wt_base ? &m->wt_base : git_commit_tree_id(tip);
	char *where = NULL;
	int error;

	if ((error = git_tree_lookup(&tree, m->repo, tree_id))) {
		error = sl_err_git(err, error, "cannot read the merged tree");
		goto out;
	}
	if ((!m->o->commit && (error = create_commit(m, tip, tree, err))) ||
	    (error = write_journal(m, old_tree, tree_id, err)) ||
	    (error = merge__checkout_target(m->repo, m->refname, old_tree, tree_id, m->o->journal,
					    &where, m->res, err)))
		goto out;
	m->res->checkout_updated = where != NULL;
	sl_fault("merge.after_checkout");
	if (m->o->before_ref_update && (error = m->o->before_ref_update(m->o->hook_data, attempt)))
		error = sl_err_set(err, error < 0 ? error : SL_ERROR, "merge aborted by the test hook");
	else
		error = move_ref(m, git_commit_id(tip), err);
	sl_fault(error ? NULL : "merge.after_ref_move");
	if (error && where) {
		m->res->checkout_updated = 0;
		if (merge__checkout_revert(where, m->res->checkout_via_git, tree_id, old_tree,
					   m->o->journal, &m->res->kept, err) &&
		    error == 1)
			error = SL_ERROR;
		if (old_tree != &m->wt_base)
			git_oid_cpy(&m->wt_base, old_tree);
		m->have_wt_base = 1;
	}
out:
	if (m->o->journal && !m->keep_journal) /* moved, or brought back: files in order again */
		unlink(m->o->journal);
	free(where);
	git_tree_free(tree);
	return error;
}

/*
 * The prebuilt commit of opts->commit (parents: some tip, the head): 0, or
 * SL_EINVALID when it is no merge commit of the head.
 */
static int read_prebuilt(git_commit **out, struct mc *m, struct sl_err *err)
{
	git_oid id;

	*out = NULL;
	if (git_oid_fromstr(&id, m->o->commit) || git_commit_lookup(out, m->repo, &id) ||
	    git_commit_parentcount(*out) != 2 ||
	    !git_oid_equal(git_commit_parent_id(*out, 1), git_commit_id(m->head))) {
		git_commit_free(*out);
		*out = NULL;
		return sl_err_set(err, SL_EINVALID, "'%s' is not a merge commit of '%s'",
				  m->o->commit, git_oid_tostr_s(git_commit_id(m->head)));
	}
	return 0;
}

/* Land opts->commit on `tip`: 0 merged, 1 moved (tip is not its first parent), or an error. */
static int land_prebuilt(struct mc *m, const git_commit *tip, int n, struct sl_err *err)
{
	git_commit *c = NULL;
	int error;

	if ((error = read_prebuilt(&c, m, err)))
		return error;
	if (!git_oid_equal(git_commit_parent_id(c, 0), git_commit_id(tip))) {
		git_commit_free(c);
		return 1;
	}
	git_oid_cpy(&m->res->commit, git_commit_id(c));
	git_oid_cpy(&m->res->tree, git_commit_tree_id(c));
	error = commit_and_move(m, tip, git_commit_tree_id(c), n, err);
	git_commit_free(c);
	return error;
}

/* One attempt: merge head into the current tip. 0 merged, 1 moved, or an error. */
static int attempt(struct mc *m, int n, struct sl_err *err)
{
	struct merge_opts mo = MERGE_OPTS_INIT;
	struct merge_result pr = MERGE_RESULT_INIT;
	git_commit *tip = NULL;
	int error;

	if ((error = read_tip(&tip, m, err)))
		goto out;
	if (m->o->guard && m->o->guard(m->o->guard_data, git_commit_id(tip), m->res->reason,
				       sizeof(m->res->reason))) {
		m->res->status = MERGE_DEFERRED;
		error = sl_err_set(err, SL_ETRANSIENT, "%s", m->res->reason);
		goto out;
	}
	if ((error = already_merged(m, tip, err)))
		goto out;
	git_oid_cpy(&m->res->tip, git_commit_id(tip));
	if (m->o->find_only) {
		error = 1; /* not on the target: "moved", never merged here */
		goto out;
	}
	if (m->o->commit) {
		error = land_prebuilt(m, tip, n, err);
		goto out;
	}
	sl_fault("merge.before_merge");
	error = merge__preview_commits(m->repo, tip, m->head, &mo, &pr, NULL, err);
	if (error)
		goto out;
	if (!pr.clean) {
		error = conflict(m, &pr, err);
		goto out;
	}
	git_oid_cpy(&m->res->tree, &pr.tree);
	error = commit_and_move(m, tip, &pr.tree, n, err);
out:
	merge_result_release(&pr);
	git_commit_free(tip);
	return error;
}

static int setup(struct mc *m, const char *repo_path, struct sl_err *err)
{
	int error;

	sl_buf_init(&m->msg, MESSAGE_MAX);
	if ((error = set_refname(m, err)) || (error = build_message(&m->msg, m->o, err)))
		return error;
	error = git_repository_open_ext(&m->repo, repo_path, 0, NULL);
	if (error)
		return sl_err_git(err, error, "cannot open the repository '%s'", repo_path);
	if ((error = merge__resolve_commit(&m->head, m->repo, m->o->head, err)))
		return error;
	error = git_signature_now(&m->sig, m->o->name ? m->o->name : SL_IDENTITY_NAME,
				  m->o->email ? m->o->email : SL_IDENTITY_EMAIL);
	return error ? sl_err_git(err, error, "cannot make the committer identity") : 0;
}

int merge_commit(const char *repo_path, const struct merge_commit_opts *opts,
		 struct merge_commit_result *res, struct sl_err *err)
{
	struct mc m = { 0 };
	int error, n, max = opts->max_attempts > 0 ? opts->max_attempts : DEFAULT_ATTEMPTS;

	if (opts->commit || opts->find_only)
		max = 1; /* a moved target is the train's to rebuild on, never merged again here */
	m.o = opts;
	m.res = res;
	error = setup(&m, repo_path, err);
	for (n = 1; !error && n <= max; n++) {
		res->attempts = n;
		merge_paths_release(&res->paths);
		error = attempt(&m, n, err);
		if (error == 1 && n < max)
			error = 0;
		else if (!error)
			break;
	}
	if (error == 1 && (opts->commit || opts->find_only)) {
		res->status = MERGE_MOVED;
		snprintf(res->reason, sizeof(res->reason), "the target branch '%s' is no longer "
			 "the base the merge was built and tested on", opts->target);
		error = sl_err_set(err, SL_ETRANSIENT, "%s", res->reason);
	} else if (error == 1) {
		res->status = MERGE_CONFLICT;
		snprintf(res->reason, sizeof(res->reason), "the target branch '%s' kept moving "
			 "during %d merge attempts", opts->target, max);
		error = sl_err_set(err, SL_ECONFLICT, "%s; try again", res->reason);
	} else if (!error) {
		res->status = MERGE_MERGED;
		res->reason[0] = '\0';
	}
	sl_buf_release(&m.msg);
	git_signature_free(m.sig);
	git_commit_free(m.head);
	git_repository_free(m.repo);
	return error;
}

void merge_commit_result_release(struct merge_commit_result *res)
{
	merge_paths_release(&res->paths);
	merge_paths_release(&res->kept);
}

int merge_build(const char *repo_path, const struct merge_commit_opts *opts, const char *onto,
		struct merge_commit_result *res, struct sl_err *err)
{
	struct merge_opts mo = MERGE_OPTS_INIT;
	struct merge_result pr = MERGE_RESULT_INIT;
	struct mc m = { 0 };
	git_commit *base = NULL;
	git_tree *tree = NULL;
	int error;

	m.o = opts;
	m.res = res;
	if ((error = setup(&m, repo_path, err)) ||
	    (error = merge__resolve_commit(&base, m.repo, onto, err)) ||
	    (error = already_merged(&m, base, err)))
		goto out;
	git_oid_cpy(&res->tip, git_commit_id(base));
	res->attempts = 1;
	sl_fault("merge.before_merge");
	if ((error = merge__preview_commits(m.repo, base, m.head, &mo, &pr, NULL, err)))
		goto out;
	if (!pr.clean) {
		error = conflict(&m, &pr, err);
		goto out;
	}
	git_oid_cpy(&res->tree, &pr.tree);
	if ((error = git_tree_lookup(&tree, m.repo, &pr.tree))) {
		error = sl_err_git(err, error, "cannot read the merged tree");
		goto out;
	}
	if (!(error = create_commit(&m, base, tree, err))) {
		res->status = MERGE_MERGED;
		res->reason[0] = '\0';
	}
out:
	merge_result_release(&pr);
	git_tree_free(tree);
	git_commit_free(base);
	sl_buf_release(&m.msg);
	git_signature_free(m.sig);
	git_commit_free(m.head);
	git_repository_free(m.repo);
	return error;
}
