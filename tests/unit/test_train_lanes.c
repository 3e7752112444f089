/*
 * Lanes (train/lanes.c, docs/config.md "Lanes"): the path globs
 * (sl_path_glob()), a path's lanes under a config, which cars share a lane,
 * a car's place in its lanes' line (train_locate()), and what
 * train_decide() says: a lane's front car lands past another lane's car
 * still under test; a car across lanes waits, naming them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "train/train.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/fs.h"

static void test_glob_table(void **unused)
{
	static const struct {
		const char *pat, *path;
		int want;
	} t[] = {
		{ "web/**", "web/a.txt", 1 },
		{ "web/**", "web/a/b/c.txt", 1 },
		{ "web/**", "web", 0 },           /* the folder itself is no file of it */
		{ "web/**", "webby/a.txt", 0 },
		{ "web/**", "api/web/a.txt", 0 },
		{ "**/*.md", "README.md", 1 },    /* the '/' after a double star may stand for nothing */
		{ "**/*.md", "docs/a/b.md", 1 },
		{ "**/*.md", "docs/a/b.mdx", 0 },
		{ "a/**/b", "a/b", 1 },
		{ "a/**/b", "a/x/y/b", 1 },
		{ "a/**/b", "a/xb", 0 },
		{ "*.c", "main.c", 1 },
		{ "*.c", "src/main.c", 0 },       /* a single star stays in one folder */
		{ "src/*.c", "src/main.c", 1 },
		{ "src/?.c", "src/a.c", 1 },
		{ "src/?.c", "src/ab.c", 0 },
		{ "src/??c", "src/a/c", 0 },      /* '?' is no '/' */
		{ "Makefile", "Makefile", 1 },
		{ "Makefile", "src/Makefile", 0 },
		{ "**", "anything/at/all", 1 },
		{ "", "", 1 },
		{ "", "a", 0 },
	};
	size_t i;

	(void)unused;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (sl_path_glob(t[i].pat, t[i].path) != t[i].want)
			fail_msg("glob '%s' on '%s': want %d", t[i].pat, t[i].path, t[i].want);
}

static struct sl_config *lanes_config(void)
{
	static const char yaml[] =
		"gates:\n  web-test: [x]\n  api-test: [x]\n  unit: [x]\n"
		"merge:\n  lanes:\n"
		"    - {name: web, paths: [\"web/**\", \"shared/ui/**\"], gates: [web-test]}\n"
		"    - {name: api, paths: [\"api/**\", \"shared/**\"], gates: [api-test, unit]}\n";
	struct sl_config *cfg = NULL;
	struct sl_buf problems = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;

	if (sl_config_parse(&cfg, "config.yaml", yaml, strlen(yaml), &problems, &err) != 0)
		fail_msg("config: %s%s", problems.ptr ? problems.ptr : "", err.msg);
	sl_buf_release(&problems);
	return cfg;
}

static void test_lanes_of_path(void **unused)
{
	struct sl_config *cfg = lanes_config();
	char words[64];

	(void)unused;
	assert_int_equal(cfg->merge.nlanes, 2);
	assert_int_equal(train_lanes_of_path(cfg, "web/a.js"), 1);
	assert_int_equal(train_lanes_of_path(cfg, "api/b.c"), 2);
	assert_int_equal(train_lanes_of_path(cfg, "shared/ui/c.css"), 3); /* in both */
	assert_int_equal(train_lanes_of_path(cfg, "shared/lib.c"), 2);
	assert_int_equal(train_lanes_of_path(cfg, "README.md"), 0);       /* in none */
	train_lane_words(cfg, 3, words, sizeof(words));
	assert_string_equal(words, "web, api");
	train_lane_words(cfg, 0, words, sizeof(words));
	assert_string_equal(words, "every lane");
	sl_config_free(cfg);
}

/* A wide car's config is the config itself; a lane car's merge gates its lanes' only. */
static void test_lane_cfg(void **unused)
{
	struct sl_config *cfg = lanes_config();
	struct sl_ctx ctx = SL_CTX_INIT;
	struct train_lane_cfg lc;
	char names[128];

	(void)unused;
	ctx.cfg = cfg;
	assert_int_equal(train_lane_cfg(&ctx, 0, &lc), 0);
	train_lane_cfg_release(&lc);
	assert_int_equal(train_lane_cfg(&ctx, 1, &lc), 1);
	train_gate_names(lc.ctx.cfg, names, sizeof(names));
	assert_string_equal(names, "web-test");
	train_lane_cfg_release(&lc);
	assert_int_equal(train_lane_cfg(&ctx, 3, &lc), 1);
	train_gate_names(lc.ctx.cfg, names, sizeof(names));
	assert_string_equal(names, "web-test, api-test, unit");
	train_lane_cfg_release(&lc);
	sl_config_free(cfg);
}

static char TIP[] = "7777777777777777777777777777777777777777";
static char HEAD[] = "head";
static char ids[4][8] = { "run-0", "run-1", "run-2", "run-3" };
static char commits[4][41];

/* Car i: lanes l, status s, built on the car `on` (-1: the tip). */
static void car(struct store_car *c, int i, int64_t l, enum train_status s, int on)
{
	memset(commits[i], 'a' + i, 40);
	commits[i][40] = '\0';
	memset(c, 0, sizeof(*c));
	c->run_id = ids[i];
	c->head = HEAD;
	c->lanes = l;
	c->status = s;
	c->base = on < 0 ? TIP : commits[on];
	c->ahead = on < 0 ? NULL : ids[on];
	c->commit = s == TRAIN_WAITING ? NULL : commits[i];
	c->started_ms = 1000;
	c->tested_ms = 2000;
}

/* web car 0 under test, api car 1 green on the tip, web car 2 on car 0, a wide car 3. */
static void test_locate_by_lane(void **unused)
{
	struct store_car c[4];
	struct train_where w;

	(void)unused;
	car(&c[0], 0, 1, TRAIN_TESTING, -1);
	car(&c[1], 1, 2, TRAIN_GREEN, -1);
	car(&c[2], 2, 1, TRAIN_PENDING, 0);
	car(&c[3], 3, 0, TRAIN_WAITING, -1);
	train_locate(c, 4, NULL, TIP, "run-1", &w);
	assert_int_equal(w.pos, 1); /* the api line: car 1, then the wide car */
	assert_int_equal(w.total, 2);
	assert_int_equal(w.ahead, 4);
	train_locate(c, 4, NULL, TIP, "run-2", &w);
	assert_int_equal(w.pos, 2);
	assert_int_equal(w.total, 3);
	assert_int_equal(w.ahead, 0);
	train_locate(c, 4, NULL, TIP, "run-3", &w);
	assert_int_equal(w.pos, 4); /* a wide car is in every line */
	assert_int_equal(w.total, 4);
	assert_true(train_shares(&c[0], &c[3]));
	assert_false(train_shares(&c[0], &c[1]));
}

static void test_decide_by_lane(void **unused)
{
	struct store_car c[4];
	struct train_state st;
	struct train_decision d;
	char tail[128];

	(void)unused;
	car(&c[0], 0, 1, TRAIN_TESTING, -1);
	car(&c[1], 1, 2, TRAIN_GREEN, -1);
	car(&c[2], 2, 3, TRAIN_WAITING, -1);
	memset(&st, 0, sizeof(st));
	st.cars = c;
	st.n = 3;
	st.tip = TIP;
	st.me = "run-1";
	st.holds = 1;
	st.target = "main";
	st.train_depth = 3;
	/* the api car lands while the web car ahead of it in the train is still tested */
	assert_int_equal(train_decide(&st, &d), 0);
	assert_int_equal(d.action, TRAIN_DO_LAND);
	/* the car across both lanes waits for them, saying so */
	st.me = "run-2";
	st.lanes_ahead = "web, api";
	assert_int_equal(train_decide(&st, &d), 0);
	assert_int_equal(d.action, TRAIN_DO_STOP);
	assert_non_null(strstr(d.why, "car 3 of 3, waits for the cars ahead in web, api "
				      "(merge.lanes: a car across lanes goes behind"));
	/* its retold tail keeps the worker's words; beyond the depth, the depth's */
	train_car_tail(&c[2], 3, 3, NULL, NULL, tail, sizeof(tail));
	assert_string_equal(tail, "");
	train_car_tail(&c[2], 4, 3, NULL, NULL, tail, sizeof(tail));
	assert_string_equal(tail, ", waits for a place (merge.train_depth 3)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_glob_table),
		cmocka_unit_test(test_lanes_of_path),
		cmocka_unit_test(test_lane_cfg),
		cmocka_unit_test(test_locate_by_lane),
		cmocka_unit_test(test_decide_by_lane),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
