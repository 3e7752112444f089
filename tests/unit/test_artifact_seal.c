/*
 * artifact_unsealed_newest(): the newest merged run, when a killed merge
 * left it without manifest.json (and gc left no tombstone), is the one to
 * seal; an older merged run without one is never picked (it is a finding
 * for sluice audit).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs.h"
#include "artifact/artifact.h"
#include "store/store.h"

struct fixture {
	char root[256];
	struct sl_repo repo;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char tmpl[] = "/tmp/test-seal.XXXXXX";

	assert_non_null(mkdtemp(tmpl));
	snprintf(f->root, sizeof(f->root), "%s", tmpl);
	f->repo.root = strdup(f->root);
	f->repo.runs_dir = sl_path_join(f->root, "runs");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	struct sl_err err = SL_ERR_INIT;

	sl_rm_rf(f->root, &err);
	sl_repo_release(&f->repo);
	free(f);
	return 0;
}

static void put(const char *path)
{
	struct sl_err err = SL_ERR_INIT;
	char *dir = strdup(path);

	*strrchr(dir, '/') = 0;
	assert_int_equal(sl_mkdir_p(dir, &err), 0);
	assert_int_equal(sl_write_file(path, "{}", 2, &err), 0);
	free(dir);
}

static void manifest(struct fixture *f, const char *run)
{
	char *path = sl_repo_run_path(&f->repo, run, "manifest.json");

	put(path);
	free(path);
}

static void test_newest_merged_without_manifest(void **state)
{
	struct fixture *f = *state;
	struct store_run runs[4];
	char *tomb;

	memset(runs, 0, sizeof(runs));
	runs[0] = (struct store_run){ .id = (char *)"R1", .state = RUN_MERGED, .finished_ms = 10 };
	runs[1] = (struct store_run){ .id = (char *)"R2", .state = RUN_MERGED, .finished_ms = 30 };
	runs[2] = (struct store_run){ .id = (char *)"R3", .state = RUN_FAILED, .finished_ms = 40 };
	runs[3] = (struct store_run){ .id = (char *)"R4", .state = RUN_MERGED, .finished_ms = 20 };
	assert_null(artifact_unsealed_newest(&f->repo, runs, 0));
	/* R2 is the newest merged one (R3 is later but failed): no manifest, so it */
	assert_string_equal(artifact_unsealed_newest(&f->repo, runs, 4), "R2");
	/* sealed: nothing, though R1 and R4 have none (the audit says so, not this) */
	manifest(f, "R2");
	assert_null(artifact_unsealed_newest(&f->repo, runs, 4));
	/* without R2, R4 is the newest */
	assert_string_equal(artifact_unsealed_newest(&f->repo, runs + 2, 2), "R4");
	/* a tombstone of gc: gone on purpose, nothing to seal */
	tomb = artifact_tombstone_path(&f->repo, "R4");
	put(tomb);
	assert_null(artifact_unsealed_newest(&f->repo, runs + 2, 2));
	free(tomb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_newest_merged_without_manifest, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
