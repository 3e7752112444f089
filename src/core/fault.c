/* Named fault points for crash tests: see fault.h. */
#include "core/fault.h"
#include "core/log.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAULT_MAX 16
#define FAULT_NAME_MAX 64

struct fault {
	char name[FAULT_NAME_MAX];
	long nth;  /* die on this visit (1: the first) */
	long seen; /* visits so far */
};

static struct fault faults[FAULT_MAX];
static size_t nfaults;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Parse SLUICE_FAULT once; malformed entries are ignored (tests see the point not fire). */
static void parse(void)
{
	const char *v = getenv("SLUICE_FAULT"), *p = v, *end, *colon;
	size_t len;

	while (p && *p && nfaults < FAULT_MAX) {
		end = strchr(p, ',');
		len = end ? (size_t)(end - p) : strlen(p);
		colon = memchr(p, ':', len);
		if ((colon ? (size_t)(colon - p) : len) < FAULT_NAME_MAX) {
			struct fault *f = &faults[nfaults];
			memcpy(f->name, p, colon ? (size_t)(colon - p) : len);
			f->nth = colon ? strtol(colon + 1, NULL, 10) : 1;
			if (f->name[0] && f->nth > 0)
				nfaults++;
			else
				memset(f, 0, sizeof(*f));
		}
		p = end ? end + 1 : NULL;
	}
}

/* 1 when a sluice process leads this process group (started with setsid): ours to kill. */
static int group_is_ours(void)
{
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/comm", (long)getpgrp());
	if (!(f = fopen(path, "r")))
		return 0;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return !strcmp(comm, "sluice\n");
}

/* 1 when SLUICE_FAULT names `name` and this is its n-th visit. */
static int fires(const char *name)
{
	size_t i;
	int hit = 0;

	if (!name)
		return 0;
	pthread_once(&once, parse);
	for (i = 0; i < nfaults; i++)
		if (!strcmp(faults[i].name, name) && ++faults[i].seen == faults[i].nth)
			hit = 1;
	return hit;
}

int sl_fault_fail(const char *name)
{
	if (!fires(name))
		return 0;
	sl_log(SL_LOG_ERROR, "fault point '%s' reached (SLUICE_FAULT): failing here", name);
	return 1;
}

void sl_fault(const char *name)
{
	if (fires(name)) {
		sl_log(SL_LOG_ERROR, "fault point '%s' reached (SLUICE_FAULT): killing this process",
		       name);
		fflush(stderr); /* only the line above: other output dies with us */
		if (getenv("SLUICE_FAULT_GROUP") && group_is_ours())
			kill(0, SIGKILL);
		raise(SIGKILL);
	}
}

void sl_fault_checkout_progress(const char *path, size_t completed, size_t total, void *payload)
{
	(void)payload;
	if (path && completed >= 1 && completed < total)
		sl_fault("merge.mid_checkout");
}
