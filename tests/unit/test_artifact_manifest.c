/* Manifests: which files are artifacts, their hashes, the chain order, the write. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs.h"
#include "core/sha256.h"
#include "artifact/artifact.h"
#include "store/store.h"

struct fixture {
	char root[256];
	struct sl_repo repo;
};

static void put(const char *dir, const char *rel, const char *text)
{
	char path[1024], *slash;
	struct sl_err err = SL_ERR_INIT;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	slash = strrchr(path, '/');
	*slash = 0;
	assert_int_equal(sl_mkdir_p(path, &err), 0);
	*slash = '/';
	assert_int_equal(sl_write_file(path, text, strlen(text), &err), 0);
}

static char *run_dir(struct fixture *f, const char *run)
{
	return sl_repo_run_path(&f->repo, run, NULL);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char tmpl[] = "/tmp/test-manifest.XXXXXX";

	assert_non_null(mkdtemp(tmpl));
	snprintf(f->root, sizeof(f->root), "%s", tmpl);
	f->repo.root = strdup(f->root);
	f->repo.runs_dir = sl_path_join(f->root, "runs");
	f->repo.db_path = sl_path_join(f->root, "sluice.db");
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

static void test_is_artifact(void **state)
{
	(void)state;
	assert_true(artifact_manifest_is_artifact("diff.patch"));
	assert_true(artifact_manifest_is_artifact("attempts/1/prompt.md"));
	assert_true(artifact_manifest_is_artifact("gates/test.log"));
	assert_false(artifact_manifest_is_artifact("lock"));
	assert_false(artifact_manifest_is_artifact("manifest.json"));
	assert_false(artifact_manifest_is_artifact("worktree"));
	assert_false(artifact_manifest_is_artifact("worktree/a.c"));
	assert_false(artifact_manifest_is_artifact("review.json.tmp.1234"));
	assert_true(artifact_manifest_is_artifact("gates/worktree"));
}

static void test_hash_walks_and_skips(void **state)
{
	struct fixture *f = *state;
	struct artifact_hashes h = ARTIFACT_HASHES_INIT;
	struct sl_err err = SL_ERR_INIT;
	char *dir = run_dir(f, "R1"), want[65];

	put(dir, "diff.patch", "patch");
	put(dir, "attempts/1/prompt.md", "prompt");
	put(dir, "lock", "");
	put(dir, "manifest.json", "{}");
	put(dir, "worktree/src/a.c", "code");
	put(dir, "merge.json.tmp.99", "half");
	assert_int_equal(artifact_hash_files(dir, &h, &err), 0);
	assert_int_equal(h.n, 2);
	assert_string_equal(h.v[0].path, "attempts/1/prompt.md");
	assert_string_equal(h.v[1].path, "diff.patch");
	sl_sha256_hex(want, "patch", 5);
	assert_string_equal(h.v[1].sha256, want);
	assert_int_equal(h.v[1].size, 5);
	artifact_hashes_release(&h);
	assert_int_equal(artifact_hash_files("/nonexistent/run", &h, &err), SL_ENOTFOUND);
	free(dir);
}

static void test_chain_order_and_tombstones(void **state)
{
	struct fixture *f = *state;
	struct artifact_chain c = ARTIFACT_CHAIN_INIT;
	struct sl_err err = SL_ERR_INIT;
	char *b = run_dir(f, "B"), *a = run_dir(f, "A");

	/* B merged first (its merge.json says so), A second; Z was gc'd before both */
	put(b, "manifest.json", "{\"run\":\"B\",\"previous_run\":\"Z\",\"previous_manifest\":\"zz\"}");
	put(b, "merge.json", "{\"merged_at\":\"2026-01-01T00:00:01.000Z\"}");
	put(a, "manifest.json", "{\"run\":\"A\",\"previous_run\":\"B\"}");
	put(a, "merge.json", "{\"merged_at\":\"2026-01-01T00:00:02.000Z\"}");
	put(f->repo.runs_dir, "Z.gc", "{\"run\":\"Z\",\"merged_at\":\"2026-01-01T00:00:00.000Z\","
				      "\"manifest_sha256\":\"zz\"}");
	put(f->repo.runs_dir, "F.gc", "{\"run\":\"F\",\"merged_at\":null}"); /* not merged */
	put(f->repo.runs_dir, "C/summary.md", "no manifest");
	assert_int_equal(artifact_chain_load(&f->repo, NULL, &c, &err), 0);
	assert_int_equal(c.n, 3);
	assert_string_equal(c.v[0].run, "Z");
	assert_true(c.v[0].removed);
	assert_string_equal(c.v[0].sha256, "zz");
	assert_string_equal(c.v[1].run, "B");
	assert_string_equal(c.v[1].previous_run, "Z");
	assert_string_equal(c.v[2].run, "A");
	assert_null(c.v[2].previous_manifest);
	artifact_chain_release(&c);
	assert_int_equal(artifact_chain_load(&f->repo, "A", &c, &err), 0);
	assert_int_equal(c.n, 2);
	artifact_chain_release(&c);
	free(b);
	free(a);
}

static void insert_run(struct store *st, const char *id)
{
	struct store_run r;
	struct sl_err err = SL_ERR_INIT;

	memset(&r, 0, sizeof(r));
	r.id = (char *)id;
	r.work_order_id = (char *)"WO-1";
	r.wo_content_hash = (char *)"h";
	r.target = (char *)"refs/heads/main";
	r.base_commit = (char *)"1111111111111111111111111111111111111111";
	assert_int_equal(store_begin(st, &err), 0);
	assert_int_equal(store_run_insert(st, &r, &err), 0);
	assert_int_equal(store_commit(st, &err), 0);
}

static void test_write_chains(void **state)
{
	struct fixture *f = *state;
	struct store *st = NULL;
	struct sl_err err = SL_ERR_INIT;
	struct sl_buf b = SL_BUF_INIT;
	char *d1 = run_dir(f, "R1"), *d2 = run_dir(f, "R2"), path[1024], sha1[65];

	assert_int_equal(store_open(&st, f->repo.db_path, &err), 0);
	insert_run(st, "R1");
	insert_run(st, "R2");
	put(d1, "merge.json", "{\"merged_at\":\"2026-01-01T00:00:01.000Z\",\"merge_commit\":"
			      "\"2222222222222222222222222222222222222222\"}");
	put(d1, "lock", "");
	assert_int_equal(artifact_manifest_write(&f->repo, st, "R2", &err), SL_ENOTFOUND);
	sl_err_clear(&err);
	assert_int_equal(artifact_manifest_write(&f->repo, st, "R1", &err), 0);
	snprintf(path, sizeof(path), "%s/manifest.json", d1);
	assert_int_equal(sl_sha256_file(sha1, path, &err), 0);
	assert_int_equal(sl_read_file(&b, path, 0, &err), 0);
	assert_non_null(strstr(b.ptr, "\"previous_run\": null"));
	assert_non_null(strstr(b.ptr, "\"merge.json\": \""));
	assert_null(strstr(b.ptr, "\"lock\""));
	assert_non_null(strstr(b.ptr, "\"merge_commit\": \"2222222222222222222222222222222222222222\""));
	assert_non_null(strstr(b.ptr, "\"base\": \"1111111111111111111111111111111111111111\""));
	sl_buf_reset(&b);
	put(d2, "merge.json", "{\"merged_at\":\"2026-01-01T00:00:02.000Z\"}");
	assert_int_equal(artifact_manifest_write(&f->repo, st, "R2", &err), 0);
	snprintf(path, sizeof(path), "%s/manifest.json", d2);
	assert_int_equal(sl_read_file(&b, path, 0, &err), 0);
	assert_non_null(strstr(b.ptr, "\"previous_run\": \"R1\""));
	assert_non_null(strstr(b.ptr, sha1));
	sl_buf_release(&b);
	store_free(st);
	free(d1);
	free(d2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_is_artifact),
		cmocka_unit_test_setup_teardown(test_hash_walks_and_skips, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chain_order_and_tombstones, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_chains, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
