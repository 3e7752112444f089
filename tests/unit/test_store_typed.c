/*
 * store/typed.c: a work order's fields and a run's gate results, written
 * through a real SQLite store and read back as structs; bad stored JSON is
 * an error naming the work order or run (docs/ARCHITECTURE.md, The store).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs.h"
#include "store/store_int.h"
#include "test_helpers.h"

static int setup(void **state)
{
	return test_store_setup(state, "/tmp/sluice-test-typed.XXXXXX");
}

static void put_wo(struct store *st, const char *id, const char *fields)
{
	struct store_wo wo = STORE_WO_INIT;
	struct sl_err err = SL_ERR_INIT;

	wo.id = (char *)id;
	wo.path = (char *)"work_orders/x.md";
	wo.content_hash = (char *)"h";
	wo.fields_json = (char *)fields;
	wo.title = (char *)"A title";
	wo.state = (char *)"ready";
	wo.reason = (char *)"because";
	wo.present = 1;
	assert_int_equal(store_begin(st, &err), 0);
	assert_int_equal(store_wo_put_tx(st, &wo, "x", 1, &err), 0);
	assert_int_equal(store_commit(st, &err), 0);
}

static void fields_of(struct store *st, const char *id, struct store_wo_fields *f, int want,
		      struct sl_err *err)
{
	struct store_wo wo = STORE_WO_INIT;

	assert_int_equal(store_wo_get(st, id, &wo, err), 0);
	assert_int_equal(store_wo_fields_parse(wo.id, wo.fields_json, f, err), want);
	store_wo_release(&wo);
}

static void test_fields_round_trip(void **state)
{
	struct test_store *t = *state;
	struct store_wo_fields f;
	struct sl_err err = SL_ERR_INIT;

	put_wo(t->st, "WO-1", "{\"title\": \"Add x\", \"worktree\": \"read-only\", "
			      "\"acceptance_criteria\": [\"a\", 3, \"b\"], "
			      "\"depends_on\": [\"WO-0\"], \"priority\": 2}");
	fields_of(t->st, "WO-1", &f, 0, &err);
	assert_non_null(f.all);
	assert_string_equal(json_string_value(json_object_get(f.all, "title")), "Add x");
	assert_string_equal(f.worktree, "read-only");
	assert_string_equal(f.criteria[0], "a");
	assert_string_equal(f.criteria[1], "b");
	assert_null(f.criteria[2]);
	assert_string_equal(f.depends_on[0], "WO-0");
	assert_null(f.depends_on[1]);
	store_wo_fields_release(&f);

	/* no fields stored: an empty object, empty lists */
	assert_int_equal(store_wo_fields_parse("WO-2", NULL, &f, &err), 0);
	assert_true(json_is_object(f.all) && json_object_size(f.all) == 0);
	assert_null(f.worktree);
	assert_null(f.criteria[0]);
	assert_null(f.depends_on[0]);
	store_wo_fields_release(&f);
}

static void test_fields_bad(void **state)
{
	struct test_store *t = *state;
	struct store_wo_fields f;
	struct sl_err err = SL_ERR_INIT;

	put_wo(t->st, "WO-7", "{\"depends_on\": [\"WO-1\"");
	fields_of(t->st, "WO-7", &f, SL_EINVALID, &err);
	assert_non_null(strstr(err.msg, "'WO-7'"));
	assert_non_null(strstr(err.msg, "fields"));
	assert_null(f.all);
	assert_null(f.depends_on[0]);
	store_wo_fields_release(&f);

	sl_err_clear(&err);
	put_wo(t->st, "WO-8", "[1, 2]");
	fields_of(t->st, "WO-8", &f, SL_EINVALID, &err);
	assert_non_null(strstr(err.msg, "'WO-8'"));
	store_wo_fields_release(&f);
}

static void put_run(struct store *st, const char *id)
{
	struct store_run r;
	struct sl_err err = SL_ERR_INIT;

	memset(&r, 0, sizeof(r));
	r.id = (char *)id;
	r.work_order_id = (char *)"WO-1";
	r.wo_content_hash = (char *)"h";
	r.target = (char *)"refs/heads/main";
	assert_int_equal(store_begin(st, &err), 0);
	assert_int_equal(store_run_insert(st, &r, &err), 0);
	assert_int_equal(store_commit(st, &err), 0);
}

static void gates_of(struct store *st, const char *run, const char *json,
		     struct store_gates *g, int want, struct sl_err *err)
{
	struct store_conflict c = { 0 };

	put_run(st, run);
	assert_int_equal(store_conflict_set_semantic(st, run, "tip", "head", json, err), 0);
	assert_int_equal(store_conflict_get(st, run, &c, err), 0);
	assert_int_equal(store_gates_parse(run, c.gates_json, g, err), want);
	store_conflict_release(&c);
}

static void test_gates_round_trip(void **state)
{
	struct test_store *t = *state;
	struct store_gates g;
	struct sl_err err = SL_ERR_INIT;

	gates_of(t->st, "r1",
		 "[{\"name\": \"test\", \"passed\": false, \"exit_code\": 2, \"duration_ms\": 40, "
		 "\"log\": \"gates/test.log\", \"output\": \"FAIL\"}, "
		 "{\"name\": \"lint\", \"passed\": true, \"exit_code\": 0}, {}]",
		 &g, 0, &err);
	assert_int_equal(g.n, 3);
	assert_true(json_is_array(g.all));
	assert_string_equal(g.v[0].name, "test");
	assert_false(g.v[0].passed);
	assert_true(g.v[0].has_exit_code);
	assert_int_equal(g.v[0].exit_code, 2);
	assert_int_equal(g.v[0].duration_ms, 40);
	assert_string_equal(g.v[0].log, "gates/test.log");
	assert_string_equal(g.v[0].output, "FAIL");
	assert_ptr_equal(g.v[0].json, json_array_get(g.all, 0));
	assert_true(g.v[1].passed);
	assert_null(g.v[2].name);
	assert_false(g.v[2].has_exit_code);
	store_gates_release(&g);

	/* none stored */
	assert_int_equal(store_gates_parse("r0", NULL, &g, &err), 0);
	assert_null(g.all);
	assert_int_equal(g.n, 0);
}

static void test_gates_bad(void **state)
{
	struct test_store *t = *state;
	struct store_gates g;
	struct sl_err err = SL_ERR_INIT;

	gates_of(t->st, "r-bad", "[{\"name\": \"test\"", &g, SL_EINVALID, &err);
	assert_non_null(strstr(err.msg, "'r-bad'"));
	assert_non_null(strstr(err.msg, "gate results"));
	assert_null(g.all);
	assert_int_equal(g.n, 0);
	store_gates_release(&g);

	sl_err_clear(&err);
	gates_of(t->st, "r-obj", "{\"name\": \"test\"}", &g, SL_EINVALID, &err);
	assert_non_null(strstr(err.msg, "'r-obj'"));
	sl_err_clear(&err);
	gates_of(t->st, "r-item", "[{\"name\": \"test\"}, 7]", &g, SL_EINVALID, &err);
	assert_non_null(strstr(err.msg, "'r-item'"));
	assert_int_equal(g.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fields_round_trip, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_fields_bad, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_gates_round_trip, setup, test_store_teardown),
		cmocka_unit_test_setup_teardown(test_gates_bad, setup, test_store_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
