/*
 * The reviewer over real HTTP on loopback, against tests/reviewer/fake_reviewer.c
 * started as a child process. Every fault must give an error, never an approval.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/fs.h"
#include "reviewer/reviewer.h"

#define TOKEN "tok-Zq8x1-SECRET-7781"
#define TREE "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

static const char script[] =
        "{\"r-changes\": [{\"verdict\":\"request_changes\",\"comments\":\"add a test\","
        "   \"criteria\":[{\"criterion\":\"c1\",\"met\":false,\"note\":\"no test\"}]}],"
        " \"r-reject\": [{\"verdict\":\"reject\",\"comments\":\"out of "
        "scope\",\"reviewer\":\"alice\"}],"
        " \"r-slow\": [{\"delay_ms\":3000}],"
        " \"r-503-then-ok\": [{\"status\":503,\"retry_after\":1}, {\"verdict\":\"approve\"}],"
        " \"r-503\": [{\"status\":503}],"
        " \"r-503-long\": [{\"status\":503,\"retry_after\":5}],"
        " \"r-401\": [{\"status\":401}],"
        " \"r-garbage\": [{\"garbage\":true}],"
        " \"r-close\": [{\"close\":true}],"
        " \"r-oversize\": [{\"oversize\":true,\"bytes\":200000}],"
        " \"r-schema\": [{\"verdict\":\"approve\",\"criteria\":\"all of them\"}],"
        " \"r-unknown\": [{\"verdict\":\"lgtm\",\"comments\":\"ship it\"}],"
        " \"r-othertree\": [{\"verdict\":\"approve\",\"tree\":\"0000000000\"}],"
        " \"r-echo\": [{\"verdict\":\"request_changes\",\"echo_auth\":true}],"
        " \"r-echo-401\": [{\"status\":401,\"echo_auth\":true}],"
        " \"r-fence\": [{\"fence\":true,\"verdict\":\"approve\",\"comments\":\"fine\"}],"
        " \"r-prose\": [{\"content\":\"I cannot decide.\"}],"
        " \"WO-BY-ID\": [{\"verdict\":\"reject\",\"comments\":\"by work order\"}]}";

static struct {
	char dir[64];
	char rec[128];
	pid_t pid;
	int port;
	char url[128];
} fx;

static void fake_path(char *out, size_t n)
{
	char exe[PATH_MAX];
	const char *env = getenv("FAKE_REVIEWER");
	ssize_t k;

	if (env && *env) {
		snprintf(out, n, "%s", env);
		return;
	}
	k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(k > 0);
	exe[k] = '\0';
	snprintf(out, n, "%s/fake-reviewer", dirname(exe));
}

static int read_port(const char *path)
{
	struct sl_buf b = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	int port = 0;

	if (sl_read_file(&b, path, 64, &err) == 0)
		port = atoi(sl_buf_cstr(&b));
	sl_buf_release(&b);
	return port;
}

static int start_fake(void **state)
{
	char fake[PATH_MAX], portf[128], scriptf[128];
	struct sl_err err = SL_ERR_INIT;
	struct timespec ts = {0, 10000000L};
	int i;

	snprintf(fx.dir, sizeof(fx.dir), "/tmp/sl-rvw-http-XXXXXX");
	assert_non_null(mkdtemp(fx.dir));
	snprintf(fx.rec, sizeof(fx.rec), "%s/rec", fx.dir);
	snprintf(portf, sizeof(portf), "%s/port", fx.dir);
	snprintf(scriptf, sizeof(scriptf), "%s/script.json", fx.dir);
	assert_int_equal(sl_mkdir_p(fx.rec, &err), 0);
	assert_int_equal(sl_write_file(scriptf, script, strlen(script), &err), 0);
	fake_path(fake, sizeof(fake));
	fx.pid = fork();
	assert_true(fx.pid >= 0);
	if (fx.pid == 0) {
		execl(fake, fake, "--port", "0", "--port-file", portf, "--record", fx.rec,
		      "--script", scriptf, "--max-seconds", "3600", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 30000 && !(fx.port = read_port(portf)); i++)
		nanosleep(&ts, NULL);
	assert_true(fx.port > 0);
	snprintf(fx.url, sizeof(fx.url), "http://127.0.0.1:%d/review", fx.port);
	setenv("SL_TEST_REVIEWER_TOKEN", TOKEN, 1);
	/* Loopback must not go through a proxy of the environment. */
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	return 0;
}

static int stop_fake(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	int status;

	kill(fx.pid, SIGTERM);
	waitpid(fx.pid, &status, 0);
	sl_rm_rf(fx.dir, &err);
	return 0;
}

static void config(struct sl_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->reviewer.mode = SL_REVIEWER_HTTP;
	cfg->reviewer.protocol = SL_PROTOCOL_SLUICE;
	cfg->reviewer.url = fx.url;
	cfg->reviewer.token_env = (char *)"SL_TEST_REVIEWER_TOKEN";
	cfg->reviewer.timeout_ms = 10000;
	cfg->reviewer.connect_timeout_ms = 10000;
	cfg->reviewer.retries = 0;
	cfg->reviewer.max_reply = 64 * 1024;
}

static const char *const criteria[] = {"c1", "c2", NULL};

static json_t *request(const char *run_id)
{
	json_t *fields = json_pack("{s:s, s:s}", "id", "WO-7", "title", "a title");
	struct sl_err err = SL_ERR_INIT;
	struct reviewer_input in;
	json_t *req;

	memset(&in, 0, sizeof(in));
	in.run_id = run_id;
	in.kind = "build";
	in.wo_fields = fields;
	in.wo_body = "body text";
	in.criteria = criteria;
	in.base = "b";
	in.head = "h";
	in.tree = TREE;
	in.diff = "diff --git a/f b/f\n+UNIQUE-DIFF-LINE\n";
	in.diff_len = strlen(in.diff);
	assert_int_equal(reviewer_request_new(&req, &in, &err), 0);
	json_decref(fields);
	return req;
}

/* Review run_id; returns the code. The verdict is released unless out is given. */
static int review(const struct sl_config *cfg, const char *run_id, struct reviewer_verdict *out,
                  struct reviewer_log *log, struct sl_err *err)
{
	struct reviewer_verdict v;
	json_t *req = request(run_id);
	int error;

	sl_err_clear(err);
	error = reviewer_review(cfg, req, &v, log, err);
	json_decref(req);
	assert_null(strstr(err->msg, TOKEN));
	if (getenv("SL_TEST_VERBOSE"))
		print_message("%d: %s\n", error, err->msg);
	if (error < 0) {
		/* Fail closed: an error never carries a verdict. */
		assert_null(v.verdict);
		assert_false(reviewer_verdict_approves_tree(&v, TREE));
		assert_true(err->msg[0]);
	}
	if (out)
		*out = v;
	else
		reviewer_verdict_release(&v);
	return error;
}

/* Review a request whose diff is `diff`. */
static int review_diff(const struct sl_config *cfg, const char *run_id, const char *diff,
                       struct sl_err *err)
{
	struct reviewer_verdict v;
	struct reviewer_input in;
	json_t *req;
	int error;

	memset(&in, 0, sizeof(in));
	in.run_id = run_id;
	in.kind = "build";
	in.tree = TREE;
	in.diff = diff;
	in.diff_len = strlen(diff);
	assert_int_equal(reviewer_request_new(&req, &in, err), 0);
	error = reviewer_review(cfg, req, &v, NULL, err);
	reviewer_verdict_release(&v);
	json_decref(req);
	return error;
}

/* The last recorded request whose body holds `needle`: body and headers into the buffers. */
static int recorded(const char *needle, struct sl_buf *body, struct sl_buf *headers)
{
	struct sl_err err = SL_ERR_INIT;
	char path[256];
	int n, found = 0;

	for (n = 1; n < 10000; n++) {
		struct sl_buf b = SL_BUF_INIT;

		snprintf(path, sizeof(path), "%s/%04d.body", fx.rec, n);
		if (sl_read_file(&b, path, 0, &err) < 0) {
			sl_buf_release(&b);
			break;
		}
		if (strstr(sl_buf_cstr(&b), needle)) {
			sl_buf_reset(body);
			sl_buf_reset(headers);
			sl_buf_add(body, b.ptr, b.len);
			snprintf(path, sizeof(path), "%s/%04d.headers", fx.rec, n);
			sl_read_file(headers, path, 0, &err);
			found++;
		}
		sl_buf_release(&b);
	}
	return found;
}

static void test_approve_and_request(void **state)
{
	struct sl_buf body = SL_BUF_INIT, hdr = SL_BUF_INIT;
	struct reviewer_verdict v;
	struct reviewer_log log;
	struct sl_err err = SL_ERR_INIT;
	struct sl_config cfg;
	json_t *req;

	config(&cfg);
	assert_int_equal(review(&cfg, "r-approve", &v, &log, &err), 0);
	assert_string_equal(v.verdict, "approve");
	assert_true(reviewer_verdict_approves_tree(&v, TREE));
	assert_false(reviewer_verdict_approves_tree(&v, "ffff"));
	assert_string_equal(v.reviewer, "fake-reviewer");
	assert_int_equal(log.tries, 1);
	assert_int_equal(log.http_status, 200);
	reviewer_verdict_release(&v);

	assert_int_equal(recorded("r-approve", &body, &hdr), 1);
	assert_non_null(strstr(sl_buf_cstr(&hdr), "POST /review"));
	assert_non_null(strstr(sl_buf_cstr(&hdr), "Authorization: Bearer " TOKEN));
	assert_non_null(strstr(sl_buf_cstr(&hdr), "Content-Type: application/json"));
	req = json_loads(sl_buf_cstr(&body), 0, NULL);
	assert_non_null(req);
	assert_string_equal(json_string_value(json_object_get(req, "protocol")),
	                    "sluice.review.v1");
	assert_string_equal(json_string_value(json_object_get(req, "tree")), TREE);
	assert_non_null(
	        strstr(json_string_value(json_object_get(req, "diff")), "UNIQUE-DIFF-LINE"));
	assert_string_equal(
	        json_string_value(json_array_get(
	                json_object_get(json_object_get(req, "work_order"), "acceptance_criteria"),
	                1)),
	        "c2");
	json_decref(req);
	sl_buf_release(&body);
	sl_buf_release(&hdr);
}

static void test_changes_and_reject(void **state)
{
	struct reviewer_verdict v;
	struct sl_err err = SL_ERR_INIT;
	struct sl_config cfg;

	config(&cfg);
	cfg.reviewer.name = (char *)"configured-name";
	assert_int_equal(review(&cfg, "r-changes", &v, NULL, &err), 0);
	assert_string_equal(v.verdict, "request_changes");
	assert_string_equal(v.comments, "add a test");
	assert_string_equal(v.reviewer, "configured-name");
	assert_int_equal(v.ncriteria, 1);
	assert_string_equal(v.criteria[0].note, "no test");
	assert_false(reviewer_verdict_approves_tree(&v, TREE));
	reviewer_verdict_release(&v);
	assert_int_equal(review(&cfg, "r-reject", &v, NULL, &err), 0);
	assert_string_equal(v.verdict, "reject");
	assert_string_equal(v.reviewer, "alice");
	reviewer_verdict_release(&v);
}

static void test_matches_work_order_id(void **state)
{
	struct sl_buf body = SL_BUF_INIT, hdr = SL_BUF_INIT;
	struct reviewer_verdict v;
	struct sl_err err = SL_ERR_INIT;
	struct sl_config cfg;
	json_t *fields = json_pack("{s:s}", "id", "WO-BY-ID"), *req;
	struct reviewer_input in;

	config(&cfg);
	memset(&in, 0, sizeof(in));
	in.run_id = "r-by-wo";
	in.kind = "resolution";
	in.wo_fields = fields;
	in.tree = TREE;
	in.rival_run_id = "r-rival";
	assert_int_equal(reviewer_request_new(&req, &in, &err), 0);
	assert_int_equal(reviewer_review(&cfg, req, &v, NULL, &err), 0);
	assert_string_equal(v.verdict, "reject");
	reviewer_verdict_release(&v);
	assert_int_equal(recorded("r-by-wo", &body, &hdr), 1);
	assert_non_null(strstr(sl_buf_cstr(&body), "\"kind\":\"resolution\""));
	assert_non_null(strstr(sl_buf_cstr(&body), "\"rival_run_id\":\"r-rival\""));
	json_decref(req);
	json_decref(fields);
	sl_buf_release(&body);
	sl_buf_release(&hdr);
}

static int closed_port(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0), port;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
	port = ntohs(a.sin_port);
	close(s); /* bound, never listened: connections are refused */
	return port;
}

static void test_refused(void **state)
{
	struct reviewer_log log;
	struct sl_err err = SL_ERR_INIT;
	struct sl_config cfg;
	char url[64];

	config(&cfg);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/review", closed_port());
	cfg.reviewer.url = url;
	cfg.reviewer.retries = 1;
	assert_int_equal(review(&cfg, "r-refused", NULL, &log, &err), SL_ETRANSIENT);
	assert_int_equal(log.tries, 2);
	assert_non_null(strstr(err.msg, "unreachable"));
	assert_non_null(strstr(err.msg, "after 2 tries"));
}

static void test_timeout(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	struct sl_config cfg;

	config(&cfg);
	cfg.reviewer.timeout_ms = 300;
	assert_int_equal(review(&cfg, "r-slow", NULL, NULL, &err), SL_ETRANSIENT);
	assert_non_null(strstr(err.msg, "imeout"));
}

static void test_503_retry_after(void **state)
{
	struct reviewer_verdict v;
	struct reviewer_log log;
	struct sl_err err = SL_ERR_INIT;
	struct sl_config cfg;

	config(&cfg);
	cfg.reviewer.retries = 1;
	assert_int_equal(review(&cfg, "r-503-then-ok", &v, &log, &err), 0);
	assert_int_equal(log.tries, 2);
	assert_true(log.elapsed_ms >= 1000); /* it waited for Retry-After; not a timing bound */
	assert_true(reviewer_verdict_approves_tree(&v, TREE));
	reviewer_verdict_release(&v);
	assert_int_equal(review(&cfg, "r-503", NULL, &log, &err), SL_ETRANSIENT);
	assert_non_null(strstr(err.msg, "reviewer HTTP 503"));
	assert_non_null(strstr(err.msg, "after 2 tries"));
	/* A Retry-After past reviewer.timeout ends the tries instead of hanging the tick. */
	cfg.reviewer.retries = 3;
	cfg.reviewer.timeout_ms = 2000;
	assert_int_equal(review(&cfg, "r-503-long", NULL, &log, &err), SL_ETRANSIENT);
	assert_int_equal(log.tries, 1);
}

static void test_http_errors_and_bad_replies(void **state)
{
	static const struct {
		const char *run;
		int code;
		const char *msg;
	} cases[] = {
	        {"r-401", SL_EINVALID, "reviewer HTTP 401"},
	        {"r-garbage", SL_EINVALID, "not valid JSON"},
	        {"r-close", SL_ETRANSIENT, "unreachable"},
	        {"r-oversize", SL_EINVALID, "max_reply"},
	        {"r-schema", SL_EINVALID, "'criteria' is not an array"},
	        {"r-unknown", SL_EINVALID, "'lgtm'"},
	        {"r-othertree", SL_EINVALID, "not the tree under review"},
	};
	struct reviewer_log log;
	struct sl_err err = SL_ERR_INIT;
	struct sl_config cfg;
	size_t i;

	config(&cfg);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(review(&cfg, cases[i].run, NULL, &log, &err), cases[i].code);
		if (!strstr(err.msg, cases[i].msg))
			fail_msg("%s: '%s' does not say '%s'", cases[i].run, err.msg, cases[i].msg);
	}
}

static void test_token_redacted(void **state)
{
	struct sl_buf body = SL_BUF_INIT, hdr = SL_BUF_INIT;
	struct reviewer_verdict v;
	struct sl_err err = SL_ERR_INIT;
	struct sl_config cfg;
	json_t *j;
	char *dump;

	config(&cfg);
	assert_int_equal(review(&cfg, "r-echo", &v, NULL, &err), 0);
	assert_non_null(strstr(v.comments, "Bearer [redacted]"));
	j = reviewer_verdict_to_json(&v);
	dump = json_dumps(j, 0);
	assert_null(strstr(dump, TOKEN));
	dump = (free(dump), json_dumps(v.raw, 0));
	assert_null(strstr(dump, TOKEN));
	free(dump);
	json_decref(j);
	reviewer_verdict_release(&v);
	assert_int_equal(review(&cfg, "r-echo-401", NULL, NULL, &err), SL_EINVALID);
	assert_int_equal(review_diff(&cfg, "r-token-in-diff", "+key = " TOKEN "\n", &err), 0);
	assert_int_equal(recorded("r-token-in-diff", &body, &hdr), 1);
	assert_non_null(strstr(sl_buf_cstr(&body), "+key = [redacted]"));
	assert_non_null(strstr(err.msg, "[redacted]"));
	/* The server got the token in the header only, never in a body. */
	assert_int_equal(recorded("r-echo", &body, &hdr), 2);
	assert_null(strstr(sl_buf_cstr(&body), TOKEN));
	assert_non_null(strstr(sl_buf_cstr(&hdr), TOKEN));
	sl_buf_release(&body);
	sl_buf_release(&hdr);
}

static void test_token_env_unset(void **state)
{
	struct reviewer_log log;
	struct sl_err err = SL_ERR_INIT;
	struct sl_config cfg;

	config(&cfg);
	cfg.reviewer.token_env = (char *)"SL_TEST_NO_SUCH_TOKEN_VAR";
	assert_int_equal(review(&cfg, "r-notoken", NULL, &log, &err), SL_EINVALID);
	assert_int_equal(log.tries, 0);
	assert_non_null(strstr(err.msg, "SL_TEST_NO_SUCH_TOKEN_VAR"));
}

static void test_manual_mode_never_reviews(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	struct sl_config cfg;

	config(&cfg);
	cfg.reviewer.mode = SL_REVIEWER_MANUAL;
	assert_int_equal(review(&cfg, "r-manual", NULL, NULL, &err), SL_EINVALID);
}

static void openai_config(struct sl_config *cfg, char *url, size_t n)
{
	config(cfg);
	snprintf(url, n, "http://127.0.0.1:%d/v1/", fx.port);
	cfg->reviewer.url = url;
	cfg->reviewer.protocol = SL_PROTOCOL_OPENAI;
	cfg->reviewer.model = (char *)"test-model";
}

static void test_openai(void **state)
{
	struct sl_buf body = SL_BUF_INIT, hdr = SL_BUF_INIT;
	struct reviewer_verdict v;
	struct sl_err err = SL_ERR_INIT;
	struct sl_config cfg;
	char url[96];
	json_t *chat, *req;

	openai_config(&cfg, url, sizeof(url));
	assert_int_equal(review(&cfg, "r-openai", &v, NULL, &err), 0);
	assert_true(reviewer_verdict_approves_tree(&v, TREE));
	reviewer_verdict_release(&v);
	assert_int_equal(recorded("r-openai", &body, &hdr), 1);
	assert_non_null(strstr(sl_buf_cstr(&hdr), "POST /v1/chat/completions"));
	assert_non_null(strstr(sl_buf_cstr(&hdr), "Authorization: Bearer " TOKEN));
	chat = json_loads(sl_buf_cstr(&body), 0, NULL);
	assert_string_equal(json_string_value(json_object_get(chat, "model")), "test-model");
	assert_string_equal(json_string_value(json_object_get(
	                            json_object_get(chat, "response_format"), "type")),
	                    "json_object");
	assert_int_equal(json_integer_value(json_object_get(chat, "temperature")), 0);
	req = json_loads(json_string_value(json_object_get(
	                         json_array_get(json_object_get(chat, "messages"), 1), "content")),
	                 0, NULL);
	assert_string_equal(json_string_value(json_object_get(req, "tree")), TREE);
	json_decref(req);
	json_decref(chat);
	sl_buf_release(&body);
	sl_buf_release(&hdr);
}

static void test_openai_fence_and_faults(void **state)
{
	struct reviewer_verdict v;
	struct sl_err err = SL_ERR_INIT;
	struct sl_config cfg;
	char url[96];

	openai_config(&cfg, url, sizeof(url));
	assert_int_equal(review(&cfg, "r-fence", &v, NULL, &err), 0);
	assert_string_equal(v.verdict, "approve");
	assert_string_equal(v.comments, "fine");
	assert_string_equal(v.reviewer, "test-model");
	reviewer_verdict_release(&v);
	assert_int_equal(review(&cfg, "r-prose", NULL, NULL, &err), SL_EINVALID);
	assert_int_equal(review(&cfg, "r-unknown", NULL, NULL, &err), SL_EINVALID);
	assert_int_equal(review(&cfg, "r-garbage", NULL, NULL, &err), SL_EINVALID);
	assert_int_equal(review(&cfg, "r-503", NULL, NULL, &err), SL_ETRANSIENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_approve_and_request),
	        cmocka_unit_test(test_changes_and_reject),
	        cmocka_unit_test(test_matches_work_order_id),
	        cmocka_unit_test(test_refused),
	        cmocka_unit_test(test_timeout),
	        cmocka_unit_test(test_503_retry_after),
	        cmocka_unit_test(test_http_errors_and_bad_replies),
	        cmocka_unit_test(test_token_redacted),
	        cmocka_unit_test(test_token_env_unset),
	        cmocka_unit_test(test_manual_mode_never_reviews),
	        cmocka_unit_test(test_openai),
	        cmocka_unit_test(test_openai_fence_and_faults),
	};

	return cmocka_run_group_tests(tests, start_fake, stop_fake);
}
