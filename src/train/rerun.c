/*
 * Flaky merge gates (docs/config.md, merge.rerun_failed): a red merge gate
 * runs again on the same tree before its car is blamed. Pure: test.c runs
 * the gates and counts their red runs per tree in the store.
 */
#include "train/train.h"

#include <stdio.h>

enum train_rerun train_rerun_decide(const struct train_gate_tally *g, size_t n, int rerun_failed,
				    int *again)
{
	enum train_rerun v = TRAIN_RERUN_GREEN;
	size_t i;

	for (i = 0; i < n; i++) {
		again[i] = 0;
		if (g[i].passed)
			continue;
		if (g[i].reds > rerun_failed)
			return TRAIN_RERUN_RED; /* red on every run this tree gets: blamed */
		again[i] = 1;
		v = TRAIN_RERUN_AGAIN;
	}
	return v;
}

int train_green_stands(int greens, int reds)
{
	return greens > 0 && reds == 0;
}

void train_red_runs_words(int runs, const char *tree, char *buf, size_t n)
{
	if (runs == 2)
		snprintf(buf, n, "red on both runs of the same tree %.12s", tree ? tree : "?");
	else if (runs > 2)
		snprintf(buf, n, "red on all %d runs of the same tree %.12s", runs,
			 tree ? tree : "?");
	else
		buf[0] = '\0';
}
