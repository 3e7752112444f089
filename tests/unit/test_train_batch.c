/*
 * Batches (train/batch.c, docs/config.md "Batches"): which car of the batch
 * is tested now (train_batch_tester(), pure), and what train_decide() says
 * to the cars that wait for that test; and, over every batch of up to eight
 * cars with one culprit, that the bisection names exactly the culprit in at
 * most 1 + ceil(log2(n)) tests.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "train/train.h"

#define MAXC 8

static char TIP[] = "7777777777777777777777777777777777777777";
static char HEAD[] = "head", OWNER[] = "owner";
static char ids[MAXC][8] = { "run-0", "run-1", "run-2", "run-3",
			     "run-4", "run-5", "run-6", "run-7" };
static char commits[MAXC][41];

/* A chain of n cars, car i on car i-1 (car 0 on the tip), statuses from s ("PGRW"). */
static void chain(struct store_car *c, const char *s)
{
	size_t i, n = strlen(s);

	for (i = 0; i < n; i++) {
		memset(&commits[i], 'a' + (int)i, 40);
		commits[i][40] = '\0';
	}
	for (i = 0; i < n; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].run_id = ids[i];
		c[i].head = HEAD;
		c[i].status = s[i] == 'G' ? TRAIN_GREEN : s[i] == 'R' ? TRAIN_RED :
			      s[i] == 'C' ? TRAIN_CONFLICT : s[i] == 'W' ? TRAIN_WAITING :
			      s[i] == 'T' ? TRAIN_TESTING : TRAIN_PENDING;
		c[i].base = i ? commits[i - 1] : TIP;
		c[i].ahead = i ? ids[i - 1] : NULL;
		c[i].commit = c[i].status == TRAIN_WAITING ? NULL : commits[i];
	}
}

static size_t tester(const char *s, int batch, int filling)
{
	struct store_car c[MAXC];

	chain(c, s);
	return train_batch_tester(c, strlen(s), TIP, batch, filling);
}

static void test_tester_table(void **unused)
{
	(void)unused;
	assert_int_equal(tester("PPPP", 4, 0), 3);       /* the batch's last car */
	assert_int_equal(tester("PPPPPP", 4, 0), 3);     /* the first four only */
	assert_int_equal(tester("PP", 4, 1), 2);         /* not whole, runs to join: none */
	assert_int_equal(tester("PP", 4, 0), 1);         /* not whole, none to join: its last */
	assert_int_equal(tester("PPPP", 4, 1), 3);       /* whole: filling does not hold it */
	assert_int_equal(tester("PPPR", 4, 0), 1);       /* red last: half-way, car 2 */
	assert_int_equal(tester("PR", 4, 0), 0);         /* red second: the first */
	assert_int_equal(tester("PPR", 4, 0), 0);
	assert_int_equal(tester("GGPP", 4, 0), 4);       /* greens land first */
	assert_int_equal(tester("GGGG", 4, 0), 4);
	assert_int_equal(tester("PPRR", 4, 0), 0);       /* the first red bounds it */
	assert_int_equal(tester("PPPPPPPR", 8, 0), 3);
	assert_int_equal(tester("PPPP", 1, 0), 0);       /* batch 1: each its own */
}

/* A conflict car is no part of the chain: the cars behind are built past it. */
static void test_tester_conflict(void **unused)
{
	struct store_car c[4];

	(void)unused;
	chain(c, "PCPP");
	c[2].base = commits[0];
	c[2].ahead = ids[0];
	assert_int_equal(train_batch_tester(c, 4, TIP, 4, 0), 3);
	assert_int_equal(train_batch_tester(c, 4, TIP, 2, 0), 2);
	assert_false(train_batch_bisecting(c, 4, TIP, 4));
}

/* The others wait for the tester, naming it; it tests. */
static void test_decide_waits(void **unused)
{
	struct store_car c[4];
	struct train_state st;
	struct train_decision d;
	int alive[4] = { 0, 0, 0, 1 };

	(void)unused;
	chain(c, "PPPT");
	c[3].tester = OWNER;
	memset(&st, 0, sizeof(st));
	st.cars = c;
	st.n = 4;
	st.alive = alive;
	st.tip = TIP;
	st.holds = 1;
	st.target = "main";
	st.train_depth = 4;
	st.batch = 4;
	st.me = ids[0];
	st.my_ahead_name = st.line_ahead_name = "main";
	assert_int_equal(train_decide(&st, &d), 0);
	assert_int_equal(d.action, TRAIN_DO_WAIT); /* car 4's tester is alive */
	assert_string_equal(d.why, "in the train: car 1 of 4, in a batch of 4; waits for the "
			    "batch's test: car 4 tests it");
	alive[3] = 0;
	st.me = ids[1];
	assert_int_equal(train_decide(&st, &d), 0);
	assert_int_equal(d.action, TRAIN_DO_STOP); /* its tester is gone: a later look */
	st.me = ids[3];
	assert_int_equal(train_decide(&st, &d), 0);
	assert_int_equal(d.action, TRAIN_DO_TEST); /* the tester, its process gone: again */

	chain(c, "PPPR");
	st.me = ids[0];
	assert_int_equal(train_decide(&st, &d), 0);
	assert_int_equal(d.action, TRAIN_DO_STOP);
	assert_string_equal(d.why, "in the train: car 1 of 4, in a batch of 4; bisecting a red "
			    "batch: car 2 tests it");
	st.me = ids[1];
	assert_int_equal(train_decide(&st, &d), 0);
	assert_int_equal(d.action, TRAIN_DO_TEST);

	{
		struct store_car w[5];

		chain(w, "PPPPW");
		st.cars = w;
		st.n = 5;
		st.me = ids[4];
		st.depth_key = "merge.batch";
		assert_int_equal(train_decide(&st, &d), 0);
		assert_string_equal(d.why, "in the train: car 5 of 5, waits for a place (merge.batch 4)");
		st.cars = c;
	}

	chain(c, "PP");
	st.n = 2;
	st.filling = 1;
	st.me = ids[1];
	assert_int_equal(train_decide(&st, &d), 0);
	assert_int_equal(d.action, TRAIN_DO_STOP);
	assert_string_equal(d.why, "in the train: car 2 of 2, in a batch of up to 4; waits for "
			    "the approved runs to join it");
}

/*
 * Every batch of n = 1..8 cars, culprit k (or none): the green-and-red
 * outcome of a test of car i is "red when i >= k". Play the bisection with
 * train_batch_tester(), cars green up to a green test (covered), landing
 * (leaving the chain) once at the front, until the culprit is red at the
 * front: it is exactly k, in at most 1 + ceil(log2(n)) tests.
 */
static void test_bisection_exhaustive(void **unused)
{
	int n, k;

	(void)unused;
	for (n = 1; n <= MAXC; n++)
		for (k = 0; k <= n; k++) { /* k == n: no culprit */
			char s[MAXC + 1];
			int first = 0, tests = 0, bound = 1, found = -1;

			while ((1 << (bound - 1)) < n)
				bound++;
			memset(s, 'P', (size_t)n);
			s[n] = '\0';
			while (first < n && tests <= bound + 1) {
				struct store_car c[MAXC];
				size_t t;
				int i;

				while (first < n && s[first] == 'G')
					first++; /* the greens at the front land */
				if (first == n)
					break;
				if (s[first] == 'R') { /* red at the front: its verdict holds */
					found = first;
					break;
				}
				chain(c, s + first);
				t = train_batch_tester(c, (size_t)(n - first), TIP, n, 0);
				assert_true(t < (size_t)(n - first));
				tests++;
				if ((int)t + first >= k) {
					s[first + (int)t] = 'R';
				} else {
					for (i = first; i <= first + (int)t; i++)
						s[i] = 'G';
				}
			}
			if (k < n)
				assert_int_equal(found, k);
			else
				assert_int_equal(found, -1);
			assert_true(tests <= bound);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tester_table),
		cmocka_unit_test(test_tester_conflict),
		cmocka_unit_test(test_decide_waits),
		cmocka_unit_test(test_bisection_exhaustive),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
