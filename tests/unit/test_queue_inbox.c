/* queue/inbox.c and graph.c: scanning, cross-file rules, ingestion. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fs.h"
#include "queue/queue.h"
#include "store/store.h"
#include "test_helpers.h"

static int setup(void **state)
{
	return test_store_setup(state, "/tmp/sluice-test-inbox.XXXXXX");
}

/* Write inbox/<name> with a work order: id, then extra front-matter lines. */
static void wo(struct test_store *f, const char *name, const char *id, const char *extra)
{
	char rel[256], text[4096];
	struct sl_err err = SL_ERR_INIT;
	char *path, *dir;

	snprintf(rel, sizeof(rel), "inbox/%s", name);
	path = sl_path_join(f->dir, rel);
	dir = strdup(path);
	*strrchr(dir, '/') = '\0';
	assert_int_equal(sl_mkdir_p(dir, &err), 0);
	snprintf(text, sizeof(text), "---\nid: %s\ntitle: Work order %s\n%s---\nBody.\n", id, id,
	         extra ? extra : "");
	assert_int_equal(sl_write_file(path, text, strlen(text), &err), 0);
	free(path);
	free(dir);
}

static void rm(struct test_store *f, const char *name)
{
	char rel[256];
	char *path;

	snprintf(rel, sizeof(rel), "inbox/%s", name);
	path = sl_path_join(f->dir, rel);
	assert_int_equal(unlink(path), 0);
	free(path);
}

static const struct queue_entry *find(const struct queue_scan *s, const char *path_end)
{
	size_t i, n = strlen(path_end);

	for (i = 0; i < s->n; i++)
		if (strlen(s->v[i].path) >= n &&
		    !strcmp(s->v[i].path + strlen(s->v[i].path) - n, path_end))
			return &s->v[i];
	fail_msg("no entry %s", path_end);
	return NULL;
}

static void evaluate(struct test_store *f, struct queue_scan *scan, struct store *st)
{
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(queue_scan(scan, f->dir, "inbox", &err), 0);
	assert_int_equal(queue_evaluate(scan, st, &err), 0);
}

static void expect_entry(const struct queue_scan *s, const char *name, const char *state,
                         const char *reason_part)
{
	const struct queue_entry *e = find(s, name);

	if (strcmp(e->state, state) || (reason_part && !strstr(e->reason, reason_part)))
		fail_msg("%s: expected %s (%s), got %s (%s)", name, state,
		         reason_part ? reason_part : "", e->state, e->reason);
}

static void test_missing_inbox(void **state)
{
	struct test_store *f = *state;
	struct queue_scan scan = QUEUE_SCAN_INIT;
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(queue_scan(&scan, f->dir, "nowhere", &err), 0);
	assert_int_equal(scan.n, 0);
	queue_scan_release(&scan);
}

static void test_graph_rules(void **state)
{
	struct test_store *f = *state;
	struct queue_scan scan = QUEUE_SCAN_INIT;
	struct sl_buf problems = SL_BUF_INIT;

	wo(f, "a.md", "A", "depends_on: [B]\n");
	wo(f, "b.md", "B", "depends_on: [A]\n");
	wo(f, "x.md", "X", "depends_on: [Y]\n");
	wo(f, "y.md", "Y", "depends_on: [Z]\n");
	wo(f, "sub/z.md", "Z", "depends_on: [X]\n");
	wo(f, "d1.md", "D", NULL);
	wo(f, "d2.md", "D", NULL);
	wo(f, "u.md", "U", "depends_on: [NOPE]\n");
	wo(f, "r.md", "R", NULL);
	wo(f, "w.md", "W", "depends_on: [R]\n");
	wo(f, "w2.md", "W2", "depends_on: [W, A]\n");
	wo(f, "done.md", "DONE", "status: done\n");
	wo(f, "after.md", "AFTER", "depends_on: [DONE]\n");
	wo(f, "draft.md", "DRAFT", "status: draft\ndepends_on: [NOPE]\n");
	wo(f, "afterdraft.md", "AD", "depends_on: [DRAFT]\n");
	wo(f, "notes.txt", "IGNORED", NULL);
	evaluate(f, &scan, NULL);
	assert_int_equal(scan.n, 15);
	expect_entry(&scan, "/a.md", "invalid", "dependency cycle A -> B -> A");
	expect_entry(&scan, "/b.md", "invalid", "dependency cycle A -> B -> A");
	expect_entry(&scan, "/x.md", "invalid", "dependency cycle X -> Y -> Z -> X");
	expect_entry(&scan, "/z.md", "invalid", "dependency cycle X -> Y -> Z -> X");
	expect_entry(&scan, "/d1.md", "invalid", "duplicate id 'D' in inbox/d1.md and inbox/d2.md");
	expect_entry(&scan, "/d2.md", "invalid", "duplicate id 'D'");
	assert_int_equal(find(&scan, "/d1.md")->owner, 1);
	assert_int_equal(find(&scan, "/d2.md")->owner, 0);
	expect_entry(&scan, "/u.md", "invalid",
	             "inbox/u.md:4:14: work order 'U' depends on unknown 'NOPE'");
	expect_entry(&scan, "/r.md", "ready", "ready");
	expect_entry(&scan, "/w.md", "waiting", "waits on R (ready)");
	expect_entry(&scan, "/w2.md", "waiting", "waits on W (waiting), A (invalid)");
	expect_entry(&scan, "/done.md", "skipped", "already done");
	expect_entry(&scan, "/after.md", "ready", NULL);
	expect_entry(&scan, "/draft.md", "skipped", "status draft");
	expect_entry(&scan, "/afterdraft.md", "waiting", "waits on DRAFT (skipped)");
	assert_int_equal(queue_problems(&scan, &problems), 8);
	assert_non_null(strstr(sl_buf_cstr(&problems), "inbox/sub/z.md:"));
	sl_buf_release(&problems);
	queue_scan_release(&scan);
}

static void ingest(struct test_store *f, struct queue_ingest_stats *stats)
{
	struct sl_err err = SL_ERR_INIT;

	if (queue_ingest(f->st, f->dir, "inbox", stats, &err))
		fail_msg("%s", err.msg);
}

static void expect_row(struct test_store *f, const char *id, const char *state, const char *reason)
{
	struct store_wo row = STORE_WO_INIT;
	struct sl_err err = SL_ERR_INIT;

	assert_int_equal(store_wo_get(f->st, id, &row, &err), 0);
	if (strcmp(row.state, state) || (reason && !strstr(row.reason, reason)))
		fail_msg("%s: expected %s (%s), got %s (%s)", id, state, reason ? reason : "",
		         row.state, row.reason);
	store_wo_release(&row);
}

static void test_ingest_lifecycle(void **state)
{
	struct test_store *f = *state;
	struct queue_ingest_stats s;
	struct sl_err err = SL_ERR_INIT;
	long long events;

	wo(f, "a.md", "A", NULL);
	wo(f, "b.md", "B", "depends_on: [A]\n");
	wo(f, "bad.md", "bad/id", NULL);
	ingest(f, &s);
	assert_int_equal(s.files, 3);
	assert_int_equal(s.added, 2);
	expect_row(f, "A", "ready", NULL);
	expect_row(f, "B", "waiting", "waits on A (ready)");
	assert_int_equal(query_int(f->st, "SELECT count(*) FROM inbox_errors"), 1);
	events = query_int(f->st, "SELECT count(*) FROM events");
	/* the two new work orders, and the invalid bad.md told once (its notification's event) */
	assert_int_equal(events, 3);
	assert_int_equal(query_int(f->st, "SELECT count(*) FROM notify_outbox WHERE path LIKE '%bad.md'"),
	                 1);

	ingest(f, &s); /* nothing changed: nothing written */
	assert_int_equal(s.added + s.revised + s.changed + s.gone, 0);
	assert_int_equal(query_int(f->st, "SELECT count(*) FROM events"), events);

	/* runs drive running and done; re-ingesting keeps them */
	assert_int_equal(store_wo_set_state(f->st, "A", WO_RUNNING, "run R1 is building", &err), 0);
	ingest(f, &s);
	expect_row(f, "A", "running", "run R1");
	expect_row(f, "B", "waiting", "waits on A (running)");

	/* a new revision while running is frozen until the run ends */
	wo(f, "a.md", "A", "priority: 1\n");
	ingest(f, &s);
	assert_int_equal(s.revised, 0);
	expect_row(f, "A", "running", NULL);
	assert_int_equal(query_int(f->st, "SELECT priority FROM work_orders WHERE id = 'A'"), 3);

	assert_int_equal(store_wo_set_state(f->st, "A", WO_DONE, "merged by run R1", &err), 0);
	ingest(f, &s); /* the run ended: the new revision is new work */
	assert_int_equal(s.revised, 1);
	expect_row(f, "A", "ready", NULL);
	assert_int_equal(query_int(f->st, "SELECT priority FROM work_orders WHERE id = 'A'"), 1);
	assert_int_equal(query_int(f->st, "SELECT count(*) FROM events WHERE reason LIKE "
	                                  "'new revision of inbox/a.md%'"),
	                 1);

	assert_int_equal(store_wo_set_state(f->st, "A", WO_DONE, "merged by run R2", &err), 0);
	ingest(f, &s); /* same revision: done stays done, B is ready */
	expect_row(f, "A", "done", "merged by run R2");
	expect_row(f, "B", "ready", NULL);

	rm(f, "a.md"); /* a done work order's file removed: dependents stay fine */
	ingest(f, &s);
	assert_int_equal(s.gone, 1);
	expect_row(f, "A", "done", "is gone from the inbox");
	assert_int_equal(query_int(f->st, "SELECT present FROM work_orders WHERE id = 'A'"), 0);
	expect_row(f, "B", "ready", NULL);

	assert_int_equal(store_wo_set_state(f->st, "B", WO_FAILED, "run R3 failed", &err), 0);
	wo(f, "c.md", "C", "depends_on: [B]\n");
	ingest(f, &s);
	expect_row(f, "B", "failed", NULL);
	expect_row(f, "C", "blocked", "B failed");
}

static void test_long_chain(void **state)
{
	struct test_store *f = *state;
	struct queue_ingest_stats s;
	char name[32], id[32], dep[64];
	int i;

	for (i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "c%05d.md", i);
		snprintf(id, sizeof(id), "C%05d", i);
		snprintf(dep, sizeof(dep), "depends_on: [C%05d]\n", i - 1);
		wo(f, name, id, i ? dep : NULL);
	}
	ingest(f, &s);
	assert_int_equal(s.added, 3000);
	expect_row(f, "C00000", "ready", NULL);
	expect_row(f, "C02999", "waiting", "waits on C02998 (waiting)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_missing_inbox, setup, test_store_teardown),
	        cmocka_unit_test_setup_teardown(test_graph_rules, setup, test_store_teardown),
	        cmocka_unit_test_setup_teardown(test_ingest_lifecycle, setup, test_store_teardown),
	        cmocka_unit_test_setup_teardown(test_long_chain, setup, test_store_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
