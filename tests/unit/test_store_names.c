/* store: the names of a run (store_run_resolve): id, prefix, branch suffix, branch, work order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "test_helpers.h"

static int put_wo(struct store *st, const char *id)
{
	struct sl_err err = SL_ERR_INIT;
	struct store_wo wo = STORE_WO_INIT;

	wo.id = (char *)id;
	wo.path = (char *)"work_orders/x.md";
	wo.content_hash = (char *)"h1";
	wo.fields_json = (char *)"{}";
	wo.body = (char *)"";
	wo.title = (char *)"t";
	wo.created_at = (char *)"";
	wo.status = (char *)"ready";
	wo.state = (char *)"ready";
	wo.reason = (char *)"ready";
	wo.present = 1;
	return store_begin(st, &err) || store_wo_put_tx(st, &wo, "b", 1, &err) ||
	       store_commit(st, &err);
}

/* A run of work order `wo` (made ready again first), then failed. */
static void run(struct store *st, const char *wo, const char *id)
{
	struct sl_err err = SL_ERR_INIT;
	struct store_run r;
	char branch[128];

	memset(&r, 0, sizeof(r));
	snprintf(branch, sizeof(branch), "run/%s-%s", wo, id + 16);
	r.id = (char *)id;
	r.work_order_id = (char *)wo;
	r.wo_content_hash = (char *)"h1";
	r.target = (char *)"refs/heads/main";
	r.branch_name = branch;
	assert_int_equal(store_wo_set_state(st, wo, WO_READY, "again", &err), 0);
	assert_int_equal(store_run_claim(st, &r, &err), 0);
	assert_int_equal(store_run_transition(st, id, RUN_QUEUED, RUN_FAILED, "x", 0, &err), 0);
}

static int setup(void **state)
{
	struct test_store *f;

	if (test_store_setup(state, "/tmp/sluice-test-names.XXXXXX"))
		return -1;
	f = *state;
	return put_wo(f->st, "W1") || put_wo(f->st, "W2");
}

static void expect(struct store *st, const char *name, const char *id)
{
	struct sl_err err = SL_ERR_INIT;
	char got[64];

	assert_int_equal(store_run_resolve(st, name, got, sizeof(got), &err), 0);
	assert_string_equal(got, id);
}

static void test_names(void **state)
{
	struct test_store *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct store_run r;
	char got[64];

	run(f->st, "W1", "20260101-000000-aaaaaaaa");
	run(f->st, "W1", "20260101-000001-bbbbbbbb");
	run(f->st, "W2", "20260101-000002-cccccccc");
	expect(f->st, "20260101-000000-aaaaaaaa", "20260101-000000-aaaaaaaa");
	expect(f->st, "20260101-000001", "20260101-000001-bbbbbbbb");
	expect(f->st, "aaaaaaaa", "20260101-000000-aaaaaaaa");          /* the branch's suffix */
	expect(f->st, "run/W2-cccccccc", "20260101-000002-cccccccc");   /* the branch */
	expect(f->st, "W2-cccccccc", "20260101-000002-cccccccc");
	expect(f->st, "W1", "20260101-000001-bbbbbbbb");                /* the latest run */
	/* several: refused, each listed with its work order and state */
	assert_int_equal(store_run_resolve(f->st, "2026", got, sizeof(got), &err), SL_EAMBIGUOUS);
	assert_non_null(strstr(err.msg, "20260101-000000-aaaaaaaa (W1, failed)"));
	assert_non_null(strstr(err.msg, "20260101-000002-cccccccc (W2, failed)"));
	assert_string_equal(got, "");
	sl_err_clear(&err);
	/* a part of the suffix is no name; nor a pattern */
	assert_int_equal(store_run_resolve(f->st, "aaaa", got, sizeof(got), &err), SL_ENOTFOUND);
	sl_err_clear(&err);
	assert_int_equal(store_run_resolve(f->st, "%", got, sizeof(got), &err), SL_ENOTFOUND);
	sl_err_clear(&err);
	assert_int_equal(store_run_resolve(f->st, "", got, sizeof(got), &err), SL_EINVALID);
	sl_err_clear(&err);
	/* store_run_get takes every name */
	assert_int_equal(store_run_get(f->st, "cccccccc", &r, &err), 0);
	assert_string_equal(r.id, "20260101-000002-cccccccc");
	store_run_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_names, setup, test_store_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
