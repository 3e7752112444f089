/* core/json: bounded reads that never follow a link, one byte format, atomic writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/sha256.h"

static char root[] = "/tmp/sluice-test-json.XXXXXX";

/* root/rel, a new string */
static char *at(const char *rel)
{
	char *p = sl_path_join(root, rel);

	assert_non_null(p);
	return p;
}

static void put(const char *rel, const char *text)
{
	char *p = at(rel);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(p);
}

static char *slurp(const char *rel)
{
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	char *p = at(rel);

	assert_int_equal(sl_read_file(&b, p, 0, &err), 0);
	free(p);
	return sl_buf_detach(&b);
}

static int entries(const char *rel)
{
	char *p = at(rel);
	DIR *d = opendir(p);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	free(p);
	return n;
}

static int setup(void **state)
{
	char *p;
	int rc;

	(void)state;
	if (!mkdtemp(root))
		return -1;
	p = sl_path_fmt("mkdir -p '%s/.system/runs/A' '%s/outside' && "
			"ln -s '%s/outside' '%s/.system/runs/R'", root, root, root, root);
	rc = p ? system(p) : -1;
	free(p);
	if (rc != 0)
		return -1;
	p = at(".system");
	rc = sl_fs_guard(p);
	free(p);
	return rc;
}

static int teardown(void **state)
{
	char *cmd = sl_path_fmt("rm -rf '%s'", root);
	int rc = cmd ? system(cmd) : -1;

	(void)state;
	sl_fs_guard(NULL);
	free(cmd);
	return rc;
}

static void test_over_the_bound_refused(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char *p = at(".system/runs/A/review.json");
	json_t *j = (json_t *)1;

	(void)state;
	put(".system/runs/A/review.json", "{\"comments\": \"0123456789\"}"); /* 26 bytes */
	assert_int_equal(sl_json_read(p, 25, &j, &err), SL_ETOOBIG);
	assert_null(j);
	assert_non_null(strstr(err.msg, p));
	assert_non_null(strstr(err.msg, "over the limit of 25"));
	sl_err_clear(&err);
	assert_int_equal(sl_json_read(p, 26, &j, &err), 0);
	assert_string_equal(json_string_value(json_object_get(j, "comments")), "0123456789");
	json_decref(j);
	free(p);
}

static void test_malformed_refused_with_line(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char *p = at(".system/runs/A/gates.json");
	json_t *j = (json_t *)1;

	(void)state;
	put(".system/runs/A/gates.json", "[\n  {\"name\": \"test\"},\n  oops\n]\n");
	assert_int_equal(sl_json_read(p, SL_JSON_MAX, &j, &err), SL_EINVALID);
	assert_null(j);
	assert_non_null(strstr(err.msg, p));
	assert_non_null(strstr(err.msg, "not valid JSON (line 3, column"));
	sl_err_clear(&err);
	put(".system/runs/A/gates.json", "");
	assert_int_equal(sl_json_read(p, SL_JSON_MAX, &j, &err), SL_EINVALID);
	sl_err_clear(&err);
	/* missing: not found, said which */
	assert_int_equal(sl_json_read("/nonexistent/x.json", SL_JSON_MAX, &j, &err), SL_ENOTFOUND);
	assert_non_null(strstr(err.msg, "/nonexistent/x.json"));
	free(p);
}

static void test_links_and_fifos_refused(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char *secret = at("outside/review.json"), *name = at(".system/runs/A/merge.json");
	char *via = at(".system/runs/R/review.json"), *fifo = at(".system/runs/A/fifo.json");
	json_t *j = (json_t *)1;

	(void)state;
	put("outside/review.json", "{\"comments\": \"from outside\"}");
	/* a link at the name */
	assert_int_equal(symlink(secret, name), 0);
	assert_int_equal(sl_json_read(name, SL_JSON_MAX, &j, &err), SL_EINVALID);
	assert_null(j);
	assert_non_null(strstr(err.msg, "symbolic link"));
	sl_err_clear(&err);
	/* the run folder R is a link: nothing is read through it */
	assert_int_equal(sl_json_read(via, SL_JSON_MAX, &j, &err), SL_EINVALID);
	assert_null(j);
	sl_err_clear(&err);
	/* a FIFO where a file should be: refused, never waited on */
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(sl_json_read(fifo, SL_JSON_MAX, &j, &err), SL_EINVALID);
	assert_non_null(strstr(err.msg, "not a regular file"));
	unlink(name);
	unlink(fifo);
	free(secret);
	free(name);
	free(via);
	free(fifo);
}

static void test_one_byte_format_round_trip(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char *p = at(".system/runs/A/merge.json"), *first, *second, sha[65], want[65];
	json_t *j = json_pack("{s:s, s:i, s:[s, b], s:n}", "zeta", "\xc3\xa9t\xc3\xa9", "alpha", 1,
			      "mid", "x", 1, "empty"), *back = NULL;

	(void)state;
	assert_non_null(j);
	assert_int_equal(sl_json_write(p, j, &err), 0);
	first = slurp(".system/runs/A/merge.json");
	/* two-space indent, keys sorted whatever the order they were set in, one final newline */
	assert_string_equal(first, "{\n  \"alpha\": 1,\n  \"empty\": null,\n  \"mid\": [\n"
				   "    \"x\",\n    true\n  ],\n  \"zeta\": \"\xc3\xa9t\xc3\xa9\"\n}\n");
	assert_int_equal(sl_json_read_sha(p, SL_JSON_MAX, &back, sha, &err), 0);
	sl_sha256_hex(want, first, strlen(first));
	assert_string_equal(sha, want);
	assert_true(json_equal(j, back));
	/* what was read, written again: the same bytes, so the same hash in manifest.json */
	assert_int_equal(sl_json_write(p, back, &err), 0);
	second = slurp(".system/runs/A/merge.json");
	assert_string_equal(first, second);
	{
		char *text = sl_json_format(back);
		assert_string_equal(text, first);
		free(text);
	}
	json_decref(j);
	json_decref(back);
	free(first);
	free(second);
	free(p);
}

static void test_atomic_write_leaves_no_temporary(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	char *dir = at(".system/runs/B"), *p = at(".system/runs/B/gates.json");
	char *secret = at("outside/gates.json"), *bad = at(".system/runs/B/none/gates.json");
	json_t *j = json_pack("[{s:b}]", "passed", 1);
	struct stat st;

	(void)state;
	assert_int_equal(mkdir(dir, 0777), 0);
	/* a link planted at the name is replaced, never written through */
	assert_int_equal(symlink(secret, p), 0);
	assert_int_equal(sl_json_write(p, j, &err), 0);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(access(secret, F_OK), -1);
	assert_int_equal(sl_json_write(p, j, &err), 0);
	assert_int_equal(entries(".system/runs/B"), 1);
	/* a failed write leaves nothing behind either */
	assert_int_not_equal(sl_json_write(bad, j, &err), 0);
	assert_int_equal(entries(".system/runs/B"), 1);
	json_decref(j);
	free(dir);
	free(p);
	free(secret);
	free(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_over_the_bound_refused),
		cmocka_unit_test(test_malformed_refused_with_line),
		cmocka_unit_test(test_links_and_fifos_refused),
		cmocka_unit_test(test_one_byte_format_round_trip),
		cmocka_unit_test(test_atomic_write_leaves_no_temporary),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
