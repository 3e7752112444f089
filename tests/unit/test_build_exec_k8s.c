/*
 * The kubernetes back end of the executor (build/exec_k8s.c): the state of
 * every recorded `kubectl get job -o json` in tests/k8s/states, the Job
 * manifest of a sample job, and kubectl's answers that are no Job (gone, not
 * installed, refused) through a kubectl stand-in that replays them.
 *
 * With SLUICE_K8S_MANIFEST_OUT set, the sample manifest is also written there.
 *
 * With arguments it is a driver for tests/cli/t1090 and t1091 (one verb of
 * the back end at a time): test_build_exec_k8s CONFIG VERB [ID], VERB one
 * of manifest, submit, poll, cancel, log; the job from SLUICE_K8S_{NAME, RUN,
 * WORK_ORDER, SCRIPT, TIMEOUT_MS, DROP}; prints the result on stdout, an
 * error on stderr (exit 1; 2 for SL_ENOTFOUND).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "executor/executor_int.h"
#include "core/buf.h"
#include "core/config.h"
#include "test_helpers.h"

#define STATES SLUICE_SOURCE_DIR "/tests/k8s/states"

static const char *state_name(enum exec_state s)
{
	static const char *const names[] = { "pending", "running", "done", "lost" };

	return (unsigned)s < 4 ? names[s] : "?";
}

/* What each recorded state must say: every file of tests/k8s/states is here. */
static const struct {
	const char *file;
	enum exec_state state;
	int exit_code;
	const char *detail;
} expected[] = {
	{ "active-pending.json", EXEC_PENDING, 0, "" },
	{ "image-pull-backoff.json", EXEC_PENDING, 0, "" },
	{ "failed-retrying.json", EXEC_PENDING, 0, "" },
	{ "active-running.json", EXEC_RUNNING, 0, "" },
	{ "succeeded.json", EXEC_DONE, 0, "Complete" },
	{ "succeeded-131.json", EXEC_DONE, 0, "Complete" },
	{ "succeeded-deleting.json", EXEC_DONE, 0, "Complete" },
	{ "backoff-limit-exceeded.json", EXEC_DONE, 1, "BackoffLimitExceeded" },
	{ "failed-131.json", EXEC_DONE, 1, "BackoffLimitExceeded" },
	{ "failure-target-131.json", EXEC_RUNNING, 0,
	  "ending (FailureTarget: BackoffLimitExceeded)" },
	{ "deadline-exceeded.json", EXEC_LOST, 0,
	  "DeadlineExceeded: Job was active longer than specified deadline" },
	{ "pod-failure-policy.json", EXEC_LOST, 0,
	  "PodFailurePolicy: Pod default/sluice-run-20260101-000000-ab12-x7k2p has condition "
	  "DisruptionTarget matching FailJob rule at index 0" },
	{ "deleting.json", EXEC_LOST, 0, "the Job is being deleted (since 2026-01-01T00:02:00Z)" },
};

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct sl_buf b = SL_BUF_INIT;
	char chunk[4096];
	size_t n;

	if (!f)
		fail_msg("cannot open %s", path);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		assert_int_equal(sl_buf_add(&b, chunk, n), 0);
	fclose(f);
	*len = b.len;
	return b.ptr ? sl_buf_detach(&b) : strdup("");
}

static void parse_file(const char *file, struct exec_status *st)
{
	struct sl_err err = SL_ERR_INIT;
	char path[1024];
	size_t len;
	char *text;

	snprintf(path, sizeof(path), "%s/%s", STATES, file);
	text = slurp(path, &len);
	if (exec_k8s_parse(text, len, st, &err) != 0)
		fail_msg("%s: %s", file, err.msg);
	free(text);
}

static void test_recorded_states(void **state)
{
	struct exec_status st;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
		parse_file(expected[i].file, &st);
		if (st.state != expected[i].state || st.exit_code != expected[i].exit_code ||
		    strcmp(st.detail, expected[i].detail) != 0)
			fail_msg("%s: %s exit %d '%s'; expected %s exit %d '%s'", expected[i].file,
				 state_name(st.state), st.exit_code, st.detail,
				 state_name(expected[i].state), expected[i].exit_code,
				 expected[i].detail);
	}
}

/* A state recorded later without an expectation here fails. */
static void test_every_state_expected(void **state)
{
	DIR *d = opendir(STATES);
	struct dirent *e;
	size_t i, seen = 0;

	(void)state;
	assert_non_null(d);
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n < 5 || strcmp(e->d_name + n - 5, ".json") != 0)
			continue;
		for (i = 0; i < sizeof(expected) / sizeof(expected[0]); i++)
			if (!strcmp(expected[i].file, e->d_name))
				break;
		if (i == sizeof(expected) / sizeof(expected[0]))
			fail_msg("tests/k8s/states/%s has no expected state here", e->d_name);
		seen++;
	}
	closedir(d);
	assert_int_equal(seen, sizeof(expected) / sizeof(expected[0]));
}

static void test_parse_not_a_job(void **state)
{
	struct sl_err err = SL_ERR_INIT;
	struct exec_status st;
	static const char *const bad[] = { "", "{", "[]", "{\"kind\":\"Pod\"}", "null" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sl_err_clear(&err);
		assert_int_equal(exec_k8s_parse(bad[i], strlen(bad[i]), &st, &err), SL_EINVALID);
		assert_non_null(strstr(err.msg, "no Job"));
	}
	/* unknown condition types and False ones are not the end */
	{
		const char *j = "{\"kind\":\"Job\",\"status\":{\"active\":1,\"ready\":1,\"conditions\":"
				"[{\"type\":\"Complete\",\"status\":\"False\"},"
				"{\"type\":\"Suspended\",\"status\":\"True\"}]}}";
		assert_int_equal(exec_k8s_parse(j, strlen(j), &st, &err), 0);
		assert_int_equal(st.state, EXEC_RUNNING);
	}
}

/* ---- the manifest ---- */

static struct sl_config *k8s_config(int full)
{
	struct sl_err err = SL_ERR_INIT;
	struct sl_config *cfg = NULL;

	if (sl_config_default(&cfg, &err) != 0)
		fail_msg("%s", err.msg);
	cfg->executor.kind = SL_EXEC_KUBERNETES;
	cfg->executor.kubernetes.image = strdup("registry.example.com/sluice/job:1");
	if (full) {
		cfg->executor.kubernetes.namespace_ = strdup("builds");
		cfg->executor.kubernetes.cpu = strdup("2");
		cfg->executor.kubernetes.memory = strdup("4Gi");
		cfg->executor.kubernetes.service_account = strdup("sluice-jobs");
		cfg->executor.kubernetes.git_secret = strdup("sluice-git");
	}
	return cfg;
}

static const struct exec_job sample = {
	.name = "sluice-20260101-000000-ab12-a1-build",
	.run_id = "20260101-000000-ab12",
	.work_order_id = "WO-7",
	.script = "#!/bin/sh\nset -eu\necho 'the job script'\n",
	.timeout_ms = 3600500,
};

/* A value at a dotted path ("spec.template.spec.containers.0.name"), or NULL. */
static json_t *at(json_t *j, const char *path)
{
	char copy[256], *save = NULL, *part;

	snprintf(copy, sizeof(copy), "%s", path);
	for (part = strtok_r(copy, ".", &save); part && j; part = strtok_r(NULL, ".", &save)) {
		if (json_is_array(j))
			j = json_array_get(j, (size_t)atoi(part));
		else
			j = json_object_get(j, part);
	}
	return j;
}

/* Label keys have dots: look one up in the labels object at `path`. */
static const char *label(json_t *m, const char *path, const char *key)
{
	return json_string_value(json_object_get(at(m, path), key));
}

#define STR(m, p) json_string_value(at((m), (p)))
#define C0 "spec.template.spec.containers.0."

static void check_common(json_t *m)
{
	assert_string_equal(STR(m, "apiVersion"), "batch/v1");
	assert_string_equal(STR(m, "kind"), "Job");
	assert_string_equal(STR(m, "metadata.name"), sample.name);
	assert_string_equal(label(m, "metadata.labels", "app.kubernetes.io/managed-by"), "sluice");
	assert_string_equal(label(m, "metadata.labels", "sluice.dev/run"), sample.run_id);
	assert_string_equal(label(m, "spec.template.metadata.labels", "sluice.dev/run"),
			    sample.run_id);
	assert_int_equal(json_integer_value(at(m, "spec.backoffLimit")), 0);
	assert_true(json_is_integer(at(m, "spec.backoffLimit")));
	assert_int_equal(json_integer_value(at(m, "spec.ttlSecondsAfterFinished")), 86400);
	assert_string_equal(STR(m, "spec.template.spec.restartPolicy"), "Never");
	assert_int_equal(json_array_size(at(m, "spec.template.spec.containers")), 1);
	assert_string_equal(STR(m, C0 "name"), "job");
	assert_string_equal(STR(m, C0 "image"), "registry.example.com/sluice/job:1");
	assert_int_equal(json_array_size(at(m, C0 "command")), 3);
	assert_string_equal(STR(m, C0 "command.0"), "sh");
	assert_string_equal(STR(m, C0 "command.1"), "-c");
	assert_string_equal(STR(m, C0 "command.2"), sample.script);
	assert_null(at(m, C0 "args"));
	assert_string_equal(STR(m, C0 "workingDir"), "/workspace");
	assert_string_equal(STR(m, C0 "env.0.name"), "TMPDIR");
	assert_string_equal(STR(m, C0 "env.0.value"), "/workspace");
	assert_string_equal(STR(m, C0 "volumeMounts.0.name"), "workspace");
	assert_string_equal(STR(m, C0 "volumeMounts.0.mountPath"), "/workspace");
	assert_string_equal(STR(m, "spec.template.spec.volumes.0.name"), "workspace");
	assert_true(json_is_object(at(m, "spec.template.spec.volumes.0.emptyDir")));
	assert_string_equal(STR(m, "spec.podFailurePolicy.rules.0.action"), "FailJob");
	assert_true(json_is_false(at(m, "spec.template.spec.enableServiceLinks")));
}

static void write_if_asked(json_t *m)
{
	const char *path = getenv("SLUICE_K8S_MANIFEST_OUT");

	if (path && *path)
		assert_int_equal(json_dump_file(m, path, JSON_INDENT(2)), 0);
}

static void test_manifest_plain(void **state)
{
	struct sl_config *cfg = k8s_config(0);
	json_t *m = exec_k8s_manifest(cfg, &sample);
	char *text;

	(void)state;
	assert_non_null(m);
	check_common(m);
	assert_string_equal(STR(m, "metadata.namespace"), "default");
	assert_string_equal(label(m, "metadata.labels", "sluice.dev/work-order"), "WO-7");
	/* 3600.5 s: ceil */
	assert_int_equal(json_integer_value(at(m, "spec.activeDeadlineSeconds")), 3601);
	assert_int_equal(json_array_size(at(m, C0 "env")), 1);
	assert_int_equal(json_array_size(at(m, C0 "volumeMounts")), 1);
	assert_int_equal(json_array_size(at(m, "spec.template.spec.volumes")), 1);
	assert_null(at(m, C0 "resources"));
	assert_null(at(m, "spec.template.spec.serviceAccountName"));
	assert_true(json_is_false(at(m, "spec.template.spec.automountServiceAccountToken")));
	/* nothing of ours: no SLUICE_ variable, no token, whatever our environment holds */
	text = json_dumps(m, 0);
	assert_null(strstr(text, "SLUICE_"));
	assert_null(strstr(text, "TOKEN"));
	free(text);
	write_if_asked(m);
	json_decref(m);
	sl_config_free(cfg);
}

static void test_manifest_full(void **state)
{
	struct sl_config *cfg = k8s_config(1);
	json_t *m = exec_k8s_manifest(cfg, &sample);

	(void)state;
	assert_non_null(m);
	check_common(m);
	assert_string_equal(STR(m, "metadata.namespace"), "builds");
	assert_int_equal(json_array_size(at(m, C0 "env")), 2);
	assert_string_equal(STR(m, C0 "env.1.name"), "GIT_CONFIG_GLOBAL");
	assert_string_equal(STR(m, C0 "env.1.value"), "/etc/sluice-git/gitconfig");
	assert_string_equal(STR(m, C0 "volumeMounts.1.name"), "git-credentials");
	assert_string_equal(STR(m, C0 "volumeMounts.1.mountPath"), "/etc/sluice-git");
	assert_true(json_is_true(at(m, C0 "volumeMounts.1.readOnly")));
	assert_string_equal(STR(m, "spec.template.spec.volumes.1.name"), "git-credentials");
	assert_string_equal(STR(m, "spec.template.spec.volumes.1.secret.secretName"), "sluice-git");
	assert_string_equal(STR(m, C0 "resources.requests.cpu"), "2");
	assert_string_equal(STR(m, C0 "resources.requests.memory"), "4Gi");
	assert_null(at(m, C0 "resources.limits"));
	assert_string_equal(STR(m, "spec.template.spec.serviceAccountName"), "sluice-jobs");
	assert_true(json_is_true(at(m, "spec.template.spec.automountServiceAccountToken")));
	json_decref(m);

	/* one of cpu/memory: only that one */
	free(cfg->executor.kubernetes.cpu);
	cfg->executor.kubernetes.cpu = NULL;
	m = exec_k8s_manifest(cfg, &sample);
	assert_null(at(m, C0 "resources.requests.cpu"));
	assert_string_equal(STR(m, C0 "resources.requests.memory"), "4Gi");
	json_decref(m);
	sl_config_free(cfg);
}

static void test_manifest_edges(void **state)
{
	struct sl_config *cfg = k8s_config(0);
	struct exec_job job = sample;
	json_t *m;

	(void)state;
	job.timeout_ms = 0; /* no deadline */
	job.work_order_id = "-not-a-label"; /* a label value starts with a letter or digit */
	m = exec_k8s_manifest(cfg, &job);
	assert_null(at(m, "spec.activeDeadlineSeconds"));
	assert_null(label(m, "metadata.labels", "sluice.dev/work-order"));
	assert_string_equal(label(m, "metadata.labels", "sluice.dev/run"), sample.run_id);
	json_decref(m);
	job.work_order_id = "W1234567890123456789012345678901234567890123456789012345678901234";
	job.timeout_ms = 1;
	m = exec_k8s_manifest(cfg, &job);
	assert_null(label(m, "metadata.labels", "sluice.dev/work-order")); /* 65 > 63 */
	assert_int_equal(json_integer_value(at(m, "spec.activeDeadlineSeconds")), 1);
	json_decref(m);
	free(cfg->executor.kubernetes.image);
	cfg->executor.kubernetes.image = NULL;
	assert_null(exec_k8s_manifest(cfg, &job));
	sl_config_free(cfg);
}

/* jansson's n-th allocation fails (counted from 0; -1: none fails): the manifest is whole or NULL */
static long alloc_count, alloc_fail = -1;

static void *failing_malloc(size_t n)
{
	return alloc_count++ == alloc_fail ? NULL : malloc(n);
}

static json_t *manifest_failing(const struct sl_config *cfg, long fail)
{
	json_t *m;

	alloc_count = 0;
	alloc_fail = fail;
	json_set_alloc_funcs(failing_malloc, free);
	m = exec_k8s_manifest(cfg, &sample);
	json_set_alloc_funcs(malloc, free);
	return m;
}

static void test_manifest_oom(void **state)
{
	struct sl_config *cfg = k8s_config(1);
	json_t *m = manifest_failing(cfg, -1);
	long n, total = alloc_count, whole = 0;

	(void)state;
	assert_non_null(m);
	json_decref(m);
	assert_true(total > 20);
	for (n = 0; n < total; n++) {
		if (!(m = manifest_failing(cfg, n)))
			continue;
		whole++; /* an allocation jansson could do without (a hash table's growth) */
		check_common(m);
		assert_string_equal(STR(m, C0 "env.1.name"), "GIT_CONFIG_GLOBAL");
		assert_string_equal(STR(m, C0 "volumeMounts.1.name"), "git-credentials");
		assert_string_equal(STR(m, "spec.template.spec.volumes.1.secret.secretName"),
				    "sluice-git");
		assert_string_equal(STR(m, C0 "resources.requests.memory"), "4Gi");
		assert_string_equal(STR(m, "spec.template.spec.serviceAccountName"), "sluice-jobs");
		assert_string_equal(label(m, "metadata.labels", "sluice.dev/work-order"), "WO-7");
		assert_int_equal(json_integer_value(at(m, "spec.activeDeadlineSeconds")), 3601);
		json_decref(m);
	}
	assert_true(whole < total);
	sl_config_free(cfg);
}

/* ---- submit refusals that never reach kubectl; kubectl missing ---- */

static void test_submit_refused(void **state)
{
	static const char *const names[] = { "", "Upper", "-dash", "dash-", "a_b", "a.b",
		"x234567890123456789012345678901234567890123456789012345678901234" };
	struct sl_config *cfg = k8s_config(0);
	struct sl_err err = SL_ERR_INIT;
	struct exec_job job = sample;
	char id[EXEC_HANDLE_MAX];
	size_t i;

	(void)state;
	cfg->executor.kubernetes.kubectl = strdup("/nonexistent/kubectl");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		job.name = names[i];
		sl_err_clear(&err);
		assert_int_equal(exec_k8s_submit(cfg, &job, id, sizeof(id), &err), SL_EINVALID);
		assert_non_null(strstr(err.msg, "DNS-1123"));
	}
	/* over the API server's object limit (about 1.5 MB): refused before kubectl */
	{
		char *big = malloc(1600 * 1024 + 1);

		memset(big, '#', 1600 * 1024);
		big[1600 * 1024] = '\0';
		job.name = sample.name;
		job.script = big;
		sl_err_clear(&err);
		assert_int_equal(exec_k8s_submit(cfg, &job, id, sizeof(id), &err), SL_ETOOBIG);
		assert_non_null(strstr(err.msg, "over the API server's limit"));
		job.script = sample.script;
		free(big);
	}
	job.name = sample.name; /* a good name: now kubectl is looked for */
	sl_err_clear(&err);
	assert_int_equal(exec_k8s_submit(cfg, &job, id, sizeof(id), &err), SL_ENOTFOUND);
	assert_non_null(strstr(err.msg, "install kubectl or set executor.kubernetes.kubectl"));
	sl_err_clear(&err);
	assert_int_equal(exec_k8s_poll(cfg, "default/x", &(struct exec_status){ 0 }, &err),
			 SL_ENOTFOUND);
	sl_err_clear(&err);
	assert_int_equal(exec_k8s_poll(cfg, "default/--all", &(struct exec_status){ 0 }, &err),
			 SL_EINVALID);
	sl_config_free(cfg);
}

/* ---- poll through a kubectl that replays a recorded answer ---- */

struct fake {
	char dir[PATH_MAX];
	struct sl_config *cfg;
};

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v ? v : def;
}

/* <dir>/<name> holding text: K8S_ERR names it, K8S_STATUS is status. */
static void answer_err(const struct fake *f, const char *name, const char *text,
		       const char *status)
{
	char path[PATH_MAX + 64];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	setenv("K8S_OUT", "", 1);
	setenv("K8S_ERR", path, 1);
	setenv("K8S_STATUS", status, 1);
}

static int fake_setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	char path[PATH_MAX + 16];
	FILE *fp;

	snprintf(f->dir, sizeof(f->dir), "%s/sluice-k8s-XXXXXX", env_or("TMPDIR", "/tmp"));
	assert_non_null(mkdtemp(f->dir));
	snprintf(path, sizeof(path), "%s/kubectl", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	/* answers with the files K8S_OUT, K8S_ERR and the status K8S_STATUS */
	fputs("#!/bin/sh\nprintf '%s\\n' \"$*\" >>\"$K8S_ARGV\"\n"
	      "[ -z \"${K8S_OUT:-}\" ] || cat \"$K8S_OUT\"\n"
	      "[ -z \"${K8S_ERR:-}\" ] || cat \"$K8S_ERR\" >&2\nexit \"${K8S_STATUS:-0}\"\n", fp);
	fclose(fp);
	chmod(path, 0755);
	f->cfg = k8s_config(0);
	f->cfg->executor.kubernetes.kubectl = strdup(path);
	snprintf(path, sizeof(path), "%s/argv", f->dir);
	setenv("K8S_ARGV", path, 1);
	*state = f;
	return 0;
}

static int fake_teardown(void **state)
{
	struct fake *f = *state;

	sl_config_free(f->cfg);
	sh("rm -rf '%s'", f->dir);
	free(f);
	unsetenv("K8S_OUT");
	unsetenv("K8S_ERR");
	unsetenv("K8S_STATUS");
	return 0;
}

static void answer(const char *out, const char *errfile, const char *status)
{
	char a[1024], b[1024];

	snprintf(a, sizeof(a), "%s/%s", STATES, out ? out : "");
	snprintf(b, sizeof(b), "%s/%s", STATES, errfile ? errfile : "");
	setenv("K8S_OUT", out ? a : "", 1);
	setenv("K8S_ERR", errfile ? b : "", 1);
	setenv("K8S_STATUS", status, 1);
}

static void test_poll_answers(void **state)
{
	struct fake *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct exec_status st;

	answer("deadline-exceeded.json", NULL, "0");
	assert_int_equal(exec_k8s_poll(f->cfg, "default/sluice-x", &st, &err), 0);
	assert_int_equal(st.state, EXEC_LOST);
	assert_non_null(strstr(st.detail, "DeadlineExceeded"));
	/* states/deleted.*: exit 1, NotFound */
	answer(NULL, "deleted.stderr", "1");
	assert_int_equal(exec_k8s_poll(f->cfg, "default/sluice-x", &st, &err), 0);
	assert_int_equal(st.state, EXEC_LOST);
	assert_string_equal(st.detail, "the Job is gone (deleted, or removed after its ttl)");
	/* cannot ask: an error naming kubectl's last line */
	answer_err(f, "unreachable", "E1125 00:00:00.000000 memcache.go:265] couldn't get current "
		   "server API group list\nUnable to connect to the server: dial tcp 10.0.0.1:6443: "
		   "i/o timeout\n\n", "1");
	assert_int_equal(exec_k8s_poll(f->cfg, "default/sluice-x", &st, &err), SL_ERROR);
	assert_string_equal(err.msg, "kubectl get job 'default/sluice-x' failed (exit 1): Unable "
			    "to connect to the server: dial tcp 10.0.0.1:6443: i/o timeout");
	/* a Job that is no Job (another program at executor.kubernetes.kubectl) */
	sl_err_clear(&err);
	answer("deleted.stderr", NULL, "0");
	assert_int_equal(exec_k8s_poll(f->cfg, "default/sluice-x", &st, &err), SL_EINVALID);
}

static void test_submit_answers(void **state)
{
	struct fake *f = *state;
	struct sl_err err = SL_ERR_INIT;
	char id[EXEC_HANDLE_MAX];

	answer(NULL, NULL, "0");
	assert_int_equal(exec_k8s_submit(f->cfg, &sample, id, sizeof(id), &err), 0);
	assert_string_equal(id, "default/sluice-20260101-000000-ab12-a1-build");
	/* AlreadyExists: the Job there is asked about (replaced when it has ended: t1091);
	 * this kubectl answers every call so, so it cannot be asked */
	answer_err(f, "exists", "Error from server (AlreadyExists): error when creating \"STDIN\": "
		   "jobs.batch \"sluice-20260101-000000-ab12-a1-build\" already exists\n", "1");
	assert_int_equal(exec_k8s_submit(f->cfg, &sample, id, sizeof(id), &err), SL_ERROR);
	assert_non_null(strstr(err.msg, "kubectl get job 'default/sluice-20260101-000000-ab12-a1-"
				   "build' failed (exit 1): Error from server (AlreadyExists)"));
	/* a handle that does not fit */
	sl_err_clear(&err);
	answer(NULL, NULL, "0");
	assert_int_equal(exec_k8s_submit(f->cfg, &sample, id, 10, &err), SL_ETOOBIG);
}

static void test_log_cut(void **state)
{
	struct fake *f = *state;
	struct sl_err err = SL_ERR_INIT;
	struct sl_buf out = SL_BUF_INIT;

	sl_buf_init(&out, 1000);
	answer("succeeded.json", NULL, "0"); /* some bytes: several kB */
	assert_int_equal(exec_k8s_log(f->cfg, "default/sluice-x", &out, &err), 0);
	assert_true(out.len <= 1000);
	assert_non_null(strstr(out.ptr, "[sluice: log cut at "));
	assert_int_equal(strncmp(out.ptr, "{", 1), 0);
	sl_buf_release(&out);
	sl_buf_init(&out, 0);
	assert_int_equal(exec_k8s_log(f->cfg, "default/sluice-x", &out, &err), 0);
	assert_null(strstr(out.ptr, "[sluice: log cut"));
	assert_int_equal(out.ptr[out.len - 1], '\n');
	sl_buf_release(&out);
	answer(NULL, "deleted.stderr", "1");
	assert_int_equal(exec_k8s_log(f->cfg, "default/sluice-x", &out, &err), SL_ENOTFOUND);
	sl_buf_release(&out);
}

/* ---- the driver for the CLI tests ---- */

static int drive_verb(const struct sl_config *cfg, const char *verb, const char *id,
		      struct sl_err *err)
{
	const char *drop[2] = { getenv("SLUICE_K8S_DROP"), NULL };
	struct exec_job job = { env_or("SLUICE_K8S_NAME", sample.name),
				env_or("SLUICE_K8S_RUN", sample.run_id),
				env_or("SLUICE_K8S_WORK_ORDER", sample.work_order_id),
				env_or("SLUICE_K8S_SCRIPT", sample.script),
				atoll(env_or("SLUICE_K8S_TIMEOUT_MS", "3600000")), drop };
	struct exec_status st = { 0 };
	struct sl_buf out = SL_BUF_INIT;
	char handle[EXEC_HANDLE_MAX];
	json_t *m;
	int error = 0;

	if (!strcmp(verb, "manifest")) {
		if (!(m = exec_k8s_manifest(cfg, &job)))
			return sl_err_set(err, SL_ERROR, "no manifest");
		json_dumpf(m, stdout, JSON_INDENT(2));
		json_decref(m);
		printf("\n");
	} else if (!strcmp(verb, "submit") && !(error = exec_k8s_submit(cfg, &job, handle,
									 sizeof(handle), err)))
		printf("%s\n", handle);
	else if (!strcmp(verb, "poll") && !(error = exec_k8s_poll(cfg, id, &st, err)))
		printf("%s %d %s\n", state_name(st.state), st.exit_code, st.detail);
	else if (!strcmp(verb, "cancel"))
		error = exec_k8s_cancel(cfg, id, err);
	else if (!strcmp(verb, "log") && !(error = exec_k8s_log(cfg, id, &out, err)))
		fwrite(sl_buf_cstr(&out), 1, out.len, stdout);
	sl_buf_release(&out);
	return error;
}

static int drive(int argc, char **argv)
{
	struct sl_err err = SL_ERR_INIT;
	struct sl_config *cfg = NULL;
	int error;

	if (argc < 2) {
		fprintf(stderr, "usage: test_build_exec_k8s CONFIG VERB [ID]\n");
		return 2;
	}
	error = sl_config_load(&cfg, argv[0], &err);
	if (!error)
		error = drive_verb(cfg, argv[1], argc > 2 ? argv[2] : "", &err);
	sl_config_free(cfg);
	if (error)
		fprintf(stderr, "error: %s\n", err.msg);
	return error == SL_ENOTFOUND ? 2 : error ? 1 : 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded_states),
		cmocka_unit_test(test_every_state_expected),
		cmocka_unit_test(test_parse_not_a_job),
		cmocka_unit_test(test_manifest_plain),
		cmocka_unit_test(test_manifest_full),
		cmocka_unit_test(test_manifest_edges),
		cmocka_unit_test(test_manifest_oom),
		cmocka_unit_test(test_submit_refused),
		cmocka_unit_test_setup_teardown(test_poll_answers, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_submit_answers, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_log_cut, fake_setup, fake_teardown),
	};

	if (argc > 1)
		return drive(argc - 1, argv + 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
