/* queue/schedule.c: order, overlap, jobs, reasons. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "queue/queue.h"

static sl_strv strv(const char *a, const char *b)
{
	sl_strv v = calloc(3, sizeof(*v));

	if (a)
		v[0] = strdup(a);
	if (b)
		v[1] = strdup(b);
	return v;
}

static void item(struct queue_item *it, const char *id, const char *state, int prio,
                 const char *created, sl_strv context)
{
	memset(it, 0, sizeof(*it));
	it->id = strdup(id);
	it->state = strdup(state);
	it->reason = strdup(!strcmp(state, "ready") ? "ready" : "some reason");
	it->priority = prio;
	it->created_at = strdup(created);
	it->context = context ? context : strv(NULL, NULL);
	it->depends_on = strv(NULL, NULL);
	it->present = 1;
}

static void release(struct queue_item *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		queue_item_release(&v[i]);
}

static void test_order(void **state)
{
	struct queue_item v[7];

	(void)state;
	item(&v[0], "WO-C", "ready", 2, "2026-01-01", NULL);
	item(&v[1], "WO-B", "ready", 1, "2026-01-03", NULL);
	item(&v[2], "WO-A", "ready", 1, "2026-01-03", NULL);
	item(&v[3], "WO-D", "ready", 1, "", NULL);
	item(&v[4], "WO-E", "waiting", 1, "2025-01-01", NULL);
	item(&v[5], "WO-F", "running", 9, "", NULL);
	item(&v[6], "WO-G", "ready", 1, "2026-01-02", NULL);
	queue_sort(v, 7);
	assert_string_equal(v[0].id, "WO-F");
	assert_string_equal(v[1].id, "WO-G"); /* priority 1, earliest */
	assert_string_equal(v[2].id, "WO-A"); /* same date: by id */
	assert_string_equal(v[3].id, "WO-B");
	assert_string_equal(v[4].id, "WO-D"); /* no created_at: last of its priority */
	assert_string_equal(v[5].id, "WO-C");
	assert_string_equal(v[6].id, "WO-E");
	release(v, 7);
}

static void test_overlap_paths(void **state)
{
	(void)state;
	assert_true(queue_paths_overlap("src/a.c", "src/a.c"));
	assert_true(queue_paths_overlap("src", "src/a.c"));
	assert_true(queue_paths_overlap("src/a.c", "src"));
	assert_false(queue_paths_overlap("src", "srcx/a.c"));
	assert_false(queue_paths_overlap("src/a.c", "src/a.cc"));
	assert_true(queue_paths_overlap(".", "anything"));
	assert_false(queue_paths_overlap("docs", "src"));
}

static void test_decide(void **state)
{
	struct queue_plan_opts opts = {0, 2, NULL};
	struct sl_err err = SL_ERR_INIT;
	struct queue_item v[5];

	(void)state;
	item(&v[0], "WO-R", "running", 1, "", strv("src/a.c", NULL));
	item(&v[1], "WO-1", "ready", 1, "2026-01-01", strv("src", NULL));
	item(&v[2], "WO-2", "ready", 1, "2026-01-02", strv("docs/x.md", NULL));
	item(&v[3], "WO-3", "ready", 2, "2026-01-01", strv("docs", NULL));
	item(&v[4], "WO-4", "ready", 3, "2026-01-01", strv("lib", NULL));
	queue_sort(v, 5);
	assert_int_equal(queue_decide(v, 5, &opts, &err), 0);
	assert_false(v[1].may_start);
	assert_string_equal(v[1].explain, "overlaps WO-R on src/a.c (running)");
	assert_true(v[2].may_start);
	assert_string_equal(v[2].explain, "ready: starts now");
	assert_false(v[3].may_start);
	assert_string_equal(v[3].explain, "overlaps WO-2 on docs/x.md (starting now)");
	assert_false(v[4].may_start);
	assert_string_equal(v[4].explain, "ready; waits for a free job (queue.jobs is 2)");
	assert_string_equal(v[0].explain, "running: some reason");

	opts.allow_overlap = 1;
	opts.jobs = 0;
	assert_int_equal(queue_decide(v, 5, &opts, &err), 0);
	assert_true(v[1].may_start && v[2].may_start && v[3].may_start && v[4].may_start);

	/* a hold (the repository's budget): no ready one starts, each says why */
	opts.held = "the day's budget is spent";
	assert_int_equal(queue_decide(v, 5, &opts, &err), 0);
	assert_false(v[1].may_start || v[2].may_start || v[3].may_start || v[4].may_start);
	assert_string_equal(v[2].explain, "ready; the day's budget is spent");
	assert_string_equal(v[0].explain, "running: some reason");
	release(v, 5);
}

static void test_no_context_never_overlaps(void **state)
{
	struct queue_plan_opts opts = {0, 0, NULL};
	struct sl_err err = SL_ERR_INIT;
	struct queue_item v[2];

	(void)state;
	item(&v[0], "WO-1", "running", 1, "", NULL);
	item(&v[1], "WO-2", "ready", 1, "", NULL);
	assert_int_equal(queue_decide(v, 2, &opts, &err), 0);
	assert_true(v[1].may_start);
	release(v, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_order),
	        cmocka_unit_test(test_overlap_paths),
	        cmocka_unit_test(test_decide),
	        cmocka_unit_test(test_no_context_never_overlaps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
