/*
 * store: the table of run states and the name tables of the other values
 * the database checks (store/state.c), against each other and against the
 * CHECK constraints of schema/db/001_init.sql.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "test_helpers.h"

static void test_names_unique_and_round_trip(void **state)
{
	enum run_state s;
	int i, j;

	for (i = 0; i < RUN_STATE_COUNT; i++) {
		const char *name = run_state_name((enum run_state)i);
		assert_non_null(name);
		assert_true(strlen(name) > 0);
		assert_int_equal(run_state_parse(name, &s), 0);
		assert_int_equal(s, i);
		assert_true(run_state_is(name, (enum run_state)i));
		for (j = 0; j < i; j++)
			assert_string_not_equal(name, run_state_name((enum run_state)j));
	}
	for (i = 0; i < RUN_MODE_COUNT; i++) {
		enum run_mode m;
		assert_int_equal(run_mode_parse(run_mode_name((enum run_mode)i), &m), 0);
		assert_int_equal(m, i);
	}
	for (i = 0; i < WO_STATE_COUNT; i++) {
		enum wo_state w;
		assert_int_equal(wo_state_parse(wo_state_name((enum wo_state)i), &w), 0);
		assert_int_equal(w, i);
		assert_true(wo_state_is(wo_state_name((enum wo_state)i), (enum wo_state)i));
	}
	for (i = 0; i < WO_STATUS_COUNT; i++) {
		enum wo_status w;
		assert_int_equal(wo_status_parse(wo_status_name((enum wo_status)i), &w), 0);
		assert_int_equal(w, i);
	}
	(void)state;
}

static void test_unknown_names_refused(void **state)
{
	static const char *const bad[] = { "", "Queued", "queued ", "nonsense", "build" };
	enum run_state s = RUN_MERGED;
	enum wo_state w = WO_DONE;
	enum run_mode m = RUN_MODE_RESOLVE;
	size_t i;

	(void)state;
	assert_int_equal(run_state_parse(NULL, &s), -1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(run_state_parse(bad[i], &s), -1);
	assert_int_equal(s, RUN_MERGED); /* untouched */
	assert_int_equal(wo_state_parse("merged", &w), -1);
	assert_int_equal(wo_state_parse(NULL, &w), -1);
	assert_int_equal(run_mode_parse("resolution", &m), -1);
	assert_false(run_state_is(NULL, RUN_QUEUED));
	assert_false(wo_state_is(NULL, WO_READY));
	assert_false(wo_status_is(NULL, WO_STATUS_READY));
	/* out of range: a name no one can mistake, no property */
	assert_string_equal(run_state_name((enum run_state)RUN_STATE_COUNT), "?");
	assert_null(run_state_info((enum run_state)RUN_STATE_COUNT));
	assert_false(run_state_is_final((enum run_state)-1));
	assert_int_equal(run_state_step((enum run_state)99), RUN_STEP_NONE);
	assert_string_equal(wo_state_name((enum wo_state)99), "?");
}

static void test_properties_agree(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < RUN_STATE_COUNT; i++) {
		enum run_state s = (enum run_state)i;
		const struct run_state_info *in = run_state_info(s);
		assert_non_null(in);
		if (in->final) {
			assert_false(in->active);
			assert_false(in->runnable);
			assert_false(in->needs_person);
			assert_false(in->waits);
		}
		if (in->needs_person)
			assert_false(in->runnable);
		/* a step exactly where a tick or a working process moves the run on */
		if (in->active || in->runnable)
			assert_int_not_equal(in->step, RUN_STEP_NONE);
		else
			assert_int_equal(in->step, RUN_STEP_NONE);
		/* staying (a new reason) is always allowed */
		assert_true(run_state_can_move(s, s));
		/* every unfinished state may be abandoned by a person */
		if (s != RUN_ABANDONED)
			assert_int_equal(run_state_can_move(s, RUN_ABANDONED), !in->final);
	}
	/* the states the runner and the CLI rely on */
	assert_true(run_state_is_final(RUN_MERGED));
	assert_true(run_state_is_final(RUN_ABANDONED));
	assert_false(run_state_is_final(RUN_INTERRUPTED));
	assert_true(run_state_is_active(RUN_RESOLVING));
	assert_true(run_state_is_runnable(RUN_RESOLVING));
	assert_false(run_state_is_active(RUN_QUEUED));
	assert_true(run_state_needs_person(RUN_AWAITING_REVIEW));
	assert_true(run_state_needs_person(RUN_MERGE_CONFLICT));
	assert_int_equal(run_states_where(run_state_is_runnable),
			 RUN_SET(RUN_QUEUED) | RUN_SET(RUN_REVIEWING) | RUN_SET(RUN_APPROVED) |
				 RUN_SET(RUN_RESOLVING));
	assert_int_equal(run_states_where(run_state_waits),
			 RUN_SET(RUN_AWAITING_REVIEW) | RUN_SET(RUN_REVIEWING) |
				 RUN_SET(RUN_APPROVED) | RUN_SET(RUN_MERGE_CONFLICT));
	assert_int_equal(run_states_where(run_state_is_final),
			 RUN_SET(RUN_MERGED) | RUN_SET(RUN_REJECTED) | RUN_SET(RUN_FAILED) |
				 RUN_SET(RUN_ABANDONED) | RUN_SET(RUN_REPORTED));
	/* a report run ends reported from its review, by the reviewer or a person, and stays */
	assert_true(run_state_can_move(RUN_REVIEWING, RUN_REPORTED));
	assert_true(run_state_can_move(RUN_AWAITING_REVIEW, RUN_REPORTED));
	assert_true(run_state_can_move(RUN_BUILDING, RUN_REVIEWING));
	assert_false(run_state_can_move(RUN_REPORTED, RUN_QUEUED));
	assert_false(run_state_can_move(RUN_REPORTED, RUN_APPROVED));
	assert_false(run_state_can_move(RUN_APPROVED, RUN_REPORTED));
}

static void test_moves(void **state)
{
	int i;

	(void)state;
	/* merged and abandoned are never left; failed and rejected only by a person's retry */
	for (i = 0; i < RUN_STATE_COUNT; i++) {
		if (i == RUN_MERGED || i == RUN_ABANDONED)
			continue;
		assert_false(run_state_can_move(RUN_MERGED, (enum run_state)i));
		assert_false(run_state_can_move(RUN_ABANDONED, (enum run_state)i));
		if (i != RUN_QUEUED && i != RUN_FAILED)
			assert_false(run_state_can_move(RUN_FAILED, (enum run_state)i));
	}
	assert_true(run_state_can_move(RUN_FAILED, RUN_QUEUED));
	assert_true(run_state_can_move(RUN_REJECTED, RUN_QUEUED));
	assert_false(run_state_can_move(RUN_QUEUED, RUN_MERGED));
	assert_false(run_state_can_move(RUN_AWAITING_REVIEW, RUN_MERGING));
	assert_true(run_state_can_move(RUN_INTERRUPTED, RUN_RESOLVING));
	assert_false(run_state_can_move(RUN_QUEUED, (enum run_state)RUN_STATE_COUNT));
}

static void test_state_list(void **state)
{
	char buf[STORE_STATE_LIST_MAX], want[STORE_STATE_LIST_MAX];
	int i;

	(void)state;
	assert_string_equal(store__state_list(buf, 0), ",,");
	assert_string_equal(store__state_list(buf, RUN_SET(RUN_QUEUED) | RUN_SET(RUN_MERGED)),
			    ",queued,merged,");
	/* every name fits */
	store__state_list(buf, RUN_STATES_ALL);
	for (i = 0; i < RUN_STATE_COUNT; i++) {
		snprintf(want, sizeof(want), ",%s,", run_state_name((enum run_state)i));
		assert_non_null(strstr(buf, want));
	}
}

/*
 * The quoted names of `col IN (...)` in the CREATE TABLE `table` of the
 * first migration, as ",a,b,".
 */
static void check_list(const char *sql, const char *table, const char *col, char *out, size_t n)
{
	char marker[128];
	const char *p, *end;
	size_t len = 0;

	snprintf(marker, sizeof(marker), "CREATE TABLE %s ", table);
	p = strstr(sql, marker);
	assert_non_null(p);
	snprintf(marker, sizeof(marker), "%s IN (", col);
	p = strstr(p, marker);
	assert_non_null(p);
	p += strlen(marker);
	end = strchr(p, ')');
	assert_non_null(end);
	out[len++] = ',';
	for (; p < end; p++) {
		const char *q;
		if (*p != '\'')
			continue;
		q = strchr(p + 1, '\'');
		assert_true(q && q < end && len + (size_t)(q - p) + 2 < n);
		memcpy(out + len, p + 1, (size_t)(q - p - 1));
		len += (size_t)(q - p - 1);
		out[len++] = ',';
		p = q;
	}
	out[len] = '\0';
}

/* Every name of the table is in the list and the list holds no other. */
static void same_names(const char *list, const char *(*name)(int), int count)
{
	char want[64];
	int i, commas = 0;
	const char *p;

	for (i = 0; i < count; i++) {
		snprintf(want, sizeof(want), ",%s,", name(i));
		assert_non_null(strstr(list, want));
	}
	for (p = list; *p; p++)
		commas += *p == ',';
	assert_int_equal(commas - 1, count);
}

static const char *run_name(int i)
{
	return run_state_name((enum run_state)i);
}
static const char *mode_name(int i)
{
	return run_mode_name((enum run_mode)i);
}
static const char *merge_name(int i)
{
	return run_merge_status_name((enum run_merge_status)i);
}
static const char *wo_name(int i)
{
	return wo_state_name((enum wo_state)i);
}

static void test_schema_agrees(void **state)
{
	struct sl_buf sql = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	char list[512];

	(void)state;
	assert_int_equal(sl_read_file(&sql, SLUICE_SOURCE_DIR "/schema/db/001_init.sql",
				      (size_t)1 << 20, &err), 0);
	check_list(sl_buf_cstr(&sql), "runs", "mode", list, sizeof(list));
	same_names(list, mode_name, RUN_MODE_COUNT);
	check_list(sl_buf_cstr(&sql), "runs", "merge_status", list, sizeof(list));
	same_names(list, merge_name, RUN_MERGE_STATUS_COUNT);
	check_list(sl_buf_cstr(&sql), "work_orders", "state", list, sizeof(list));
	same_names(list, wo_name, WO_STATE_COUNT);
	sl_buf_release(&sql);
	/* the runs table as migration 008 made it again, with the state reported */
	assert_int_equal(sl_read_file(&sql, SLUICE_SOURCE_DIR "/schema/db/008_reported.sql",
				      (size_t)1 << 20, &err), 0);
	check_list(sl_buf_cstr(&sql), "runs", "state", list, sizeof(list));
	same_names(list, run_name, RUN_STATE_COUNT);
	check_list(sl_buf_cstr(&sql), "runs", "mode", list, sizeof(list));
	same_names(list, mode_name, RUN_MODE_COUNT);
	check_list(sl_buf_cstr(&sql), "runs", "merge_status", list, sizeof(list));
	same_names(list, merge_name, RUN_MERGE_STATUS_COUNT);
	sl_buf_release(&sql);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_unique_and_round_trip),
		cmocka_unit_test(test_unknown_names_refused),
		cmocka_unit_test(test_properties_agree),
		cmocka_unit_test(test_moves),
		cmocka_unit_test(test_state_list),
		cmocka_unit_test(test_schema_agrees),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
