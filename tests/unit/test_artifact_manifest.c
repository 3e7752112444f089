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
#include "test_helpers.h"

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

static void file_sha(struct fixture *f, const char *run, char sha[65])
{
	struct sl_err err = SL_ERR_INIT;
	char *path = sl_repo_run_path(&f->repo, run, "manifest.json");

	assert_int_equal(sl_sha256_file(sha, path, &err), 0);
	free(path);
}

static void merged(struct fixture *f, struct store *st, const char *run, const char *when)
{
	char *dir = run_dir(f, run), text[128];

	insert_run(st, run);
	snprintf(text, sizeof(text), "{\"merged_at\":\"%s\"}", when);
	put(dir, "merge.json", text);
	put(dir, "diff.patch", run);
	free(dir);
}

/* The previous link comes from the store: the earlier run folders are not read. */
static void test_previous_from_the_store(void **state)
{
	struct fixture *f = *state;
	struct store *st = NULL;
	struct store_chain_link l;
	struct artifact_chain c = ARTIFACT_CHAIN_INIT;
	struct sl_err err = SL_ERR_INIT;
	char sha1[65], sha2[65], text[512], *d1 = run_dir(f, "R1"), *d2 = run_dir(f, "R2");

	assert_int_equal(store_open(&st, f->repo.db_path, &err), 0);
	merged(f, st, "R1", "2026-01-01T00:00:01.000Z");
	assert_int_equal(artifact_manifest_write(&f->repo, st, "R1", &err), 0);
	file_sha(f, "R1", sha1);
	assert_int_equal(store_chain_get(st, "R1", &l, &err), 0);
	assert_string_equal(l.sha256, sha1); /* recorded: the bytes of the file */
	assert_string_equal(l.merged_at, "2026-01-01T00:00:01.000Z");
	assert_null(l.previous_run);
	store_chain_link_release(&l);

	/* gc: the folder goes, a tombstone takes its place; the row stays as it is */
	merged(f, st, "R2", "2026-01-01T00:00:02.000Z");
	assert_int_equal(artifact_manifest_write(&f->repo, st, "R2", &err), 0);
	file_sha(f, "R2", sha2);
	snprintf(text, sizeof(text), "{\"run\":\"R2\",\"merged_at\":\"2026-01-01T00:00:02.000Z\","
		 "\"manifest_sha256\":\"%s\",\"previous_run\":\"R1\",\"previous_manifest\":"
		 "\"%s\"}", sha2, sha1);
	put(f->repo.runs_dir, "R2.gc", text);
	assert_int_equal(sl_rm_rf(d2, &err), 0);
	/* R1's folder is unreadable: a scan would not find it, the store does */
	assert_int_equal(sl_rm_rf(d1, &err), 0);
	merged(f, st, "R3", "2026-01-01T00:00:03.000Z");
	assert_int_equal(artifact_manifest_write(&f->repo, st, "R3", &err), 0);
	assert_int_equal(store_chain_get(st, "R3", &l, &err), 0);
	assert_string_equal(l.previous_run, "R2");
	store_chain_link_release(&l);

	/* the chain on disk, as the audit reads it, holds */
	assert_int_equal(artifact_chain_load(&f->repo, NULL, &c, &err), 0);
	assert_int_equal(c.n, 2);
	assert_string_equal(c.v[0].run, "R2");
	assert_true(c.v[0].removed);
	assert_string_equal(c.v[1].run, "R3");
	assert_string_equal(c.v[1].previous_run, "R2");
	assert_string_equal(c.v[1].previous_manifest, c.v[0].sha256);
	assert_string_equal(c.v[0].previous_manifest, sha1);
	artifact_chain_release(&c);
	store_free(st);
	free(d1);
	free(d2);
}

/*
 * Killed after the link was recorded, before manifest.json: sealed again,
 * the same previous link and the same bytes; the row is replaced, not doubled.
 */
static void test_sealed_again_after_a_crash(void **state)
{
	struct fixture *f = *state;
	struct store *st = NULL;
	struct store_chain_link l;
	struct sl_err err = SL_ERR_INIT;
	char sha1[65], sha2[65], again[65], *path;

	assert_int_equal(store_open(&st, f->repo.db_path, &err), 0);
	merged(f, st, "R1", "2026-01-01T00:00:01.000Z");
	merged(f, st, "R2", "2026-01-01T00:00:02.000Z");
	assert_int_equal(artifact_manifest_write(&f->repo, st, "R1", &err), 0);
	assert_int_equal(artifact_manifest_write(&f->repo, st, "R2", &err), 0);
	file_sha(f, "R1", sha1);
	file_sha(f, "R2", sha2);
	path = sl_repo_run_path(&f->repo, "R2", "manifest.json");
	assert_int_equal(sl_unlink(path, &err), 0);
	assert_int_equal(artifact_manifest_write(&f->repo, st, "R2", &err), 0);
	file_sha(f, "R2", again);
	assert_string_equal(again, sha2);
	assert_int_equal(store_chain_get(st, "R2", &l, &err), 0);
	assert_string_equal(l.sha256, sha2);
	assert_string_equal(l.previous_run, "R1");
	store_chain_link_release(&l);
	assert_int_equal(query_int(st, "SELECT count(*) FROM manifest_chain"), 2);
	store_free(st);
	free(path);
}

/*
 * A database from before migration 006 (runs, manifests on disk, no rows):
 * the first manifest written reads the files once, then only the store.
 */
static void test_backfill_from_the_files(void **state)
{
	struct fixture *f = *state;
	struct store *st = NULL;
	struct store_chain_link l;
	struct sl_err err = SL_ERR_INIT;
	char sha1[65], sha2[65];
	int pending = 0;

	assert_int_equal(store_open(&st, f->repo.db_path, &err), 0);
	merged(f, st, "R1", "2026-01-01T00:00:01.000Z");
	merged(f, st, "R2", "2026-01-01T00:00:02.000Z");
	assert_int_equal(artifact_manifest_write(&f->repo, st, "R1", &err), 0);
	assert_int_equal(artifact_manifest_write(&f->repo, st, "R2", &err), 0);
	file_sha(f, "R1", sha1);
	file_sha(f, "R2", sha2);
	/* as an older sluice left it: the files, no rows, the mark of migration 006 */
	assert_int_equal(sqlite3_exec(store_db(st), "DELETE FROM manifest_chain; INSERT INTO "
				      "store_meta VALUES ('manifest_chain_backfill', 'pending')",
				      NULL, NULL, NULL), SQLITE_OK);
	merged(f, st, "R3", "2026-01-01T00:00:03.000Z");
	assert_int_equal(artifact_manifest_write(&f->repo, st, "R3", &err), 0);
	assert_int_equal(store_chain_backfill_pending(st, &pending, &err), 0);
	assert_int_equal(pending, 0);
	assert_int_equal(store_chain_get(st, "R1", &l, &err), 0);
	assert_string_equal(l.sha256, sha1);
	store_chain_link_release(&l);
	assert_int_equal(store_chain_get(st, "R3", &l, &err), 0);
	assert_string_equal(l.previous_run, "R2");
	store_chain_link_release(&l);
	assert_int_equal(query_int(st, "SELECT count(*) FROM manifest_chain"), 3);
	store_free(st);
}

/* Run folders kept from an earlier database: the first manifest of a new one links to them. */
static void test_new_database_links_to_the_files(void **state)
{
	struct fixture *f = *state;
	struct store *st = NULL;
	struct store_chain_link l;
	struct sl_err err = SL_ERR_INIT;
	char sha1[65];

	assert_int_equal(store_open(&st, f->repo.db_path, &err), 0);
	merged(f, st, "R1", "2026-01-01T00:00:01.000Z");
	assert_int_equal(artifact_manifest_write(&f->repo, st, "R1", &err), 0);
	file_sha(f, "R1", sha1);
	store_free(st);
	assert_int_equal(sl_unlink(f->repo.db_path, &err), 0);
	assert_int_equal(store_open(&st, f->repo.db_path, &err), 0);
	merged(f, st, "R2", "2026-01-01T00:00:02.000Z");
	assert_int_equal(artifact_manifest_write(&f->repo, st, "R2", &err), 0);
	assert_int_equal(store_chain_get(st, "R2", &l, &err), 0);
	assert_string_equal(l.previous_run, "R1");
	store_chain_link_release(&l);
	assert_int_equal(store_chain_get(st, "R1", &l, &err), 0);
	assert_string_equal(l.sha256, sha1);
	store_chain_link_release(&l);
	store_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_is_artifact),
		cmocka_unit_test_setup_teardown(test_hash_walks_and_skips, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chain_order_and_tombstones, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_chains, setup, teardown),
		cmocka_unit_test_setup_teardown(test_previous_from_the_store, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sealed_again_after_a_crash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backfill_from_the_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_database_links_to_the_files, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
