/*
 * The kubernetes back end of the executor (executor.h, docs/scale-out.md): one
 * batch/v1 Job a job, made, asked about, deleted and read through kubectl.
 *
 * The Job runs the job script (exec_script.c) as `sh -c SCRIPT` in one
 * container of executor.kubernetes.image, in an emptyDir at /workspace; the
 * script fetches what it needs from executor.remote and pushes back. The
 * engine never retries (backoffLimit 0: sluice's retry rules decide), and a
 * pod the cluster disrupted (node lost, preempted, evicted) fails the Job
 * with the reason PodFailurePolicy, told apart from the script's own failure
 * (BackoffLimitExceeded). Nothing of sluice's environment goes into the Job.
 */
#include "executor/executor_int.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/err.h"
#include "core/proc.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K8S_NAME_MAX 63                     /* a DNS-1123 label, a label value */
#define K8S_TTL_S 86400                     /* ttlSecondsAfterFinished */
#define K8S_OBJECT_MAX ((size_t)1536 * 1024) /* etcd's request limit, about 1.5 MB */
#define K8S_OUT_MAX ((size_t)8 << 20)       /* `get job -o json`: the script is in it */
#define K8S_ERR_MAX ((size_t)64 << 10)      /* kubectl's stderr */
#define K8S_TIMEOUT_MS 120000               /* each kubectl call */
#define K8S_LOG_NOTE 160                    /* room for the line saying a log was cut */
#define K8S_WORKSPACE "/workspace"
#define K8S_GIT_DIR "/etc/sluice-git"

/* One kubectl call: kubectl [--context C] --namespace NS ARGS... */
struct k8s_call {
	const char *ns;
	const char *const *args;   /* NULL-terminated, at most 8 */
	const char *in;            /* stdin, or NULL */
	size_t in_len;
	const char *const *drop;   /* names kept from kubectl's environment, or NULL */
	struct sl_buf *out;        /* stdout, or NULL: dropped */
	struct sl_buf errout;      /* stderr (ours, bounded) */
	struct sl_proc_result res;
};

/* 1 when s is a DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 bytes. */
static int k8s_dns_label(const char *s)
{
	size_t i, n = s ? strlen(s) : 0;

	if (n == 0 || n > K8S_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

		if (!alnum && (c != '-' || i == 0 || i == n - 1))
			return 0;
	}
	return 1;
}

/* 1 when s can be a label value: [A-Za-z0-9]([-_.A-Za-z0-9]*[A-Za-z0-9])?, at most 63. */
static int k8s_label_value(const char *s)
{
	size_t i, n = s ? strlen(s) : 0;

	if (n == 0 || n > K8S_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9');

		if (!alnum && ((c != '-' && c != '_' && c != '.') || i == 0 || i == n - 1))
			return 0;
	}
	return 1;
}

static const char *k8s_namespace(const struct sl_config *cfg)
{
	const char *ns = cfg->executor.kubernetes.namespace_;

	return ns && *ns ? ns : "default";
}

/* The labels of the Job and of its pod: a value that cannot be a label is left out. */
static json_t *k8s_labels(const struct exec_job *job)
{
	json_t *l = json_pack("{s:s}", "app.kubernetes.io/managed-by", "sluice");

	if (l && ((k8s_label_value(job->run_id) &&
		   json_object_set_new(l, "sluice.dev/run", json_string(job->run_id))) ||
		  (k8s_label_value(job->work_order_id) &&
		   json_object_set_new(l, "sluice.dev/work-order",
				       json_string(job->work_order_id))))) {
		json_decref(l);
		return NULL;
	}
	return l;
}

/* The container's env and mounts: TMPDIR, and the git credentials when there are any. */
static int k8s_env_mounts(const struct sl_config *cfg, json_t *c)
{
	json_t *env = json_pack("[{s:s, s:s}]", "name", "TMPDIR", "value", K8S_WORKSPACE);
	json_t *mounts = json_pack("[{s:s, s:s}]", "name", "workspace", "mountPath", K8S_WORKSPACE);

	int bad = !env || !mounts;

	if (!bad && cfg->executor.kubernetes.git_secret)
		bad = json_array_append_new(env, json_pack("{s:s, s:s}", "name", "GIT_CONFIG_GLOBAL",
							   "value", K8S_GIT_DIR "/gitconfig")) ||
		      json_array_append_new(mounts, json_pack("{s:s, s:s, s:b}", "name",
							      "git-credentials", "mountPath",
							      K8S_GIT_DIR, "readOnly", 1));
	if (bad) {
		json_decref(env);
		json_decref(mounts);
		return -1;
	}
	return json_object_set_new(c, "env", env) | json_object_set_new(c, "volumeMounts", mounts);
}

/* The one container, "job": sh -c SCRIPT in /workspace. */
static json_t *k8s_container(const struct sl_config *cfg, const struct exec_job *job)
{
	const char *cpu = cfg->executor.kubernetes.cpu, *mem = cfg->executor.kubernetes.memory;
	json_t *req, *c = json_pack("{s:s, s:s, s:[s, s, s], s:s}", "name", "job", "image",
			      cfg->executor.kubernetes.image, "command", "sh", "-c", job->script,
			      "workingDir", K8S_WORKSPACE);

	if (!c || k8s_env_mounts(cfg, c) != 0)
		goto fail;
	if (!cpu && !mem)
		return c;
	/* not json_pack's "s*": it leaves out a string it could not make, as if NULL */
	if (!(req = json_object()) ||
	    json_object_set_new(c, "resources", json_pack("{s:o}", "requests", req)) ||
	    (cpu && json_object_set_new(req, "cpu", json_string(cpu))) ||
	    (mem && json_object_set_new(req, "memory", json_string(mem))))
		goto fail;
	return c;
fail:
	json_decref(c);
	return NULL;
}

/* The pod: the container, its volumes, no restart, no API token unless a service account is named. */
static json_t *k8s_pod(const struct sl_config *cfg, const struct exec_job *job)
{
	const char *sa = cfg->executor.kubernetes.service_account;
	const char *secret = cfg->executor.kubernetes.git_secret;
	json_t *p = json_pack("{s:s, s:b, s:b, s:[o], s:[{s:s, s:{}}]}", "restartPolicy", "Never",
			      "enableServiceLinks", 0, "automountServiceAccountToken", sa != NULL,
			      "containers", k8s_container(cfg, job), "volumes", "name",
			      "workspace", "emptyDir");

	if (p && sa && json_object_set_new(p, "serviceAccountName", json_string(sa)) != 0)
		goto fail;
	if (p && secret &&
	    json_array_append_new(json_object_get(p, "volumes"),
				  json_pack("{s:s, s:{s:s}}", "name", "git-credentials", "secret",
					    "secretName", secret)) != 0)
		goto fail;
	return p;
fail:
	json_decref(p);
	return NULL;
}

/*
 * The Job's spec: no retry by the engine; a pod the cluster disrupted
 * (DisruptionTarget: preempted, evicted, its node not ready) fails the Job
 * with a reason of its own, PodFailurePolicy.
 */
static json_t *k8s_spec(const struct sl_config *cfg, const struct exec_job *job)
{
	json_t *s = json_pack("{s:i}", "backoffLimit", 0);

	if (s && ((job->timeout_ms > 0 &&
		   json_object_set_new(s, "activeDeadlineSeconds",
				       json_integer((job->timeout_ms + 999) / 1000))) ||
		  json_object_set_new(s, "ttlSecondsAfterFinished", json_integer(K8S_TTL_S)) ||
		  json_object_set_new(s, "podFailurePolicy",
				      json_pack("{s:[{s:s, s:[{s:s, s:s}]}]}", "rules", "action",
						"FailJob", "onPodConditions", "type",
						"DisruptionTarget", "status", "True")) ||
		  json_object_set_new(s, "template", json_pack("{s:{s:o}, s:o}", "metadata",
				"labels", k8s_labels(job), "spec", k8s_pod(cfg, job))))) {
		json_decref(s);
		return NULL;
	}
	return s;
}

json_t *exec_k8s_manifest(const struct sl_config *cfg, const struct exec_job *job)
{
	if (!job->name || !job->script || !cfg->executor.kubernetes.image)
		return NULL;
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:o}, s:o}", "apiVersion", "batch/v1", "kind",
			 "Job", "metadata", "name", job->name, "namespace", k8s_namespace(cfg),
			 "labels", k8s_labels(job), "spec", k8s_spec(cfg, job));
}

/* ---- the state of a Job ---- */

/*
 * 1 when `conds` holds the Job's end (Complete or Failed, status True): *st
 * says which. 2 when it is ending (SuccessCriteriaMet or FailureTarget, from
 * 1.31: its pods are ending, the end comes next). 0 when neither.
 */
static int k8s_ended(json_t *conds, struct exec_status *st)
{
	size_t i;
	json_t *c;
	int ending = 0;

	json_array_foreach(conds, i, c) {
		const char *type = json_string_value(json_object_get(c, "type"));
		const char *status = json_string_value(json_object_get(c, "status"));
		const char *reason = json_string_value(json_object_get(c, "reason"));
		const char *msg = json_string_value(json_object_get(c, "message"));

		if (!type || !status || strcmp(status, "True") != 0)
			continue;
		if (!strcmp(type, "Complete")) {
			st->state = EXEC_DONE;
			st->exit_code = 0;
			snprintf(st->detail, sizeof(st->detail), "Complete");
			return 1;
		}
		if (!strcmp(type, "SuccessCriteriaMet") || !strcmp(type, "FailureTarget")) {
			ending = 1;
			snprintf(st->detail, sizeof(st->detail), "ending (%s%s%s)", type,
				 reason ? ": " : "", reason ? reason : "");
		}
		if (strcmp(type, "Failed") != 0)
			continue;
		if (reason && !strcmp(reason, "BackoffLimitExceeded")) {
			st->state = EXEC_DONE; /* its container failed: the exit status is the pod's */
			st->exit_code = 1;
			snprintf(st->detail, sizeof(st->detail), "BackoffLimitExceeded");
			return 1;
		}
		st->state = EXEC_LOST;
		snprintf(st->detail, sizeof(st->detail), "%s%s%s", reason ? reason : "Failed",
			 msg ? ": " : "", msg ? msg : "");
		return 1;
	}
	return ending ? 2 : 0;
}

/* A Job not over: running when its pod runs (ready, or active on a server without `ready`). */
static void k8s_going(json_t *status, struct exec_status *st)
{
	json_t *ready = json_object_get(status, "ready");
	json_int_t active = json_integer_value(json_object_get(status, "active"));

	st->state = active > 0 && (!ready || json_integer_value(ready) > 0) ? EXEC_RUNNING
									    : EXEC_PENDING;
}

int exec_k8s_parse(const char *json, size_t len, struct exec_status *st, struct sl_err *err)
{
	json_error_t je;
	json_t *j = json_loadb(json, len, 0, &je), *meta, *status;
	const char *kind = json_string_value(json_object_get(j, "kind"));
	const char *deleting;
	int error = 0, ended;

	memset(st, 0, sizeof(*st));
	if (!json_is_object(j) || !kind || strcmp(kind, "Job") != 0) {
		error = sl_err_set(err, SL_EINVALID, "kubectl printed no Job%s%s; is "
				   "executor.kubernetes.kubectl kubectl?", j ? "" : ": ",
				   j ? "" : je.text);
		goto out;
	}
	meta = json_object_get(j, "metadata");
	status = json_object_get(j, "status");
	ended = k8s_ended(json_object_get(status, "conditions"), st);
	if (ended == 1)
		goto out; /* also when deleted since (ttlSecondsAfterFinished): it ended first */
	deleting = json_string_value(json_object_get(meta, "deletionTimestamp"));
	if (deleting) {
		st->state = EXEC_LOST;
		snprintf(st->detail, sizeof(st->detail), "the Job is being deleted (since %.64s)",
			 deleting);
	} else if (ended == 2)
		st->state = EXEC_RUNNING;
	else
		k8s_going(status, st);
out:
	json_decref(j);
	return error;
}

/* ---- kubectl ---- */

/* The last line of kubectl's stderr (into out), for a message. */
static const char *k8s_last_line(const struct sl_buf *b, char *out, size_t n)
{
	sl_buf_last_line(b, out, n);
	return *out ? out : "(nothing on stderr)";
}

static const char *k8s_kubectl_name(const struct sl_config *cfg)
{
	const char *k = cfg->executor.kubernetes.kubectl;

	return k && *k ? k : "kubectl";
}

/* Run the call: 0 when kubectl ran (whatever its exit status: see c->res). */
static int k8s_run(const struct sl_config *cfg, struct k8s_call *c, struct sl_err *err)
{
	struct sl_proc_opts o = SL_PROC_OPTS_INIT;
	struct sl_err e = SL_ERR_INIT;
	const char *argv[16];
	size_t n = 0, i;
	int error;

	argv[n++] = k8s_kubectl_name(cfg);
	if (cfg->executor.kubernetes.context) {
		argv[n++] = "--context";
		argv[n++] = cfg->executor.kubernetes.context;
	}
	argv[n++] = "--namespace";
	argv[n++] = c->ns;
	for (i = 0; c->args[i] && n < sizeof(argv) / sizeof(argv[0]) - 1; i++)
		argv[n++] = c->args[i];
	argv[n] = NULL;
	sl_buf_init(&c->errout, K8S_ERR_MAX);
	o.argv = argv;
	o.env_drop = c->drop;
	o.stdin_data = c->in;
	o.stdin_len = c->in_len;
	o.out = c->out;
	o.errout = &c->errout;
	o.timeout_ms = K8S_TIMEOUT_MS;
	error = sl_proc_run(&o, &c->res, &e);
	if (error == SL_ENOTFOUND)
		return sl_err_set(err, SL_ENOTFOUND, "'%s' not found; install kubectl or set "
				  "executor.kubernetes.kubectl", argv[0]);
	if (error)
		return sl_err_set(err, error, "%s", e.msg);
	if (c->res.timed_out)
		error = sl_err_set(err, SL_ETIMEOUT, "'%s %s' did not answer in %ds; is the "
				   "cluster reachable?", argv[0], c->args[0], K8S_TIMEOUT_MS / 1000);
	return error;
}

/* Why kubectl failed, as an error of `code`: "<what> failed (exit N): <its last line>". */
static int k8s_failed(struct k8s_call *c, int code, const char *what, const char *id,
		      struct sl_err *err)
{
	char line[512];

	return sl_err_set(err, code, "kubectl %s '%s' failed (exit %d): %s", what, id,
			  c->res.exit_code, k8s_last_line(&c->errout, line, sizeof(line)));
}

/* "<namespace>/<name>" into its parts; both must be DNS-1123 labels (never an option). */
static int k8s_split(const char *id, char ns[K8S_NAME_MAX + 1], char name[K8S_NAME_MAX + 1],
		     struct sl_err *err)
{
	const char *slash = strchr(id, '/');

	if (slash && (size_t)(slash - id) <= K8S_NAME_MAX) {
		memcpy(ns, id, (size_t)(slash - id));
		ns[slash - id] = '\0';
		snprintf(name, K8S_NAME_MAX + 1, "%s", slash + 1);
		if (k8s_dns_label(ns) && k8s_dns_label(name) && !strcmp(name, slash + 1))
			return 0;
	}
	return sl_err_set(err, SL_EINVALID, "'%.100s' names no kubernetes Job "
			  "(<namespace>/<name>, each a DNS-1123 label)", id);
}

/* The names kept from kubectl's environment: `more`, and the reviewer token's. A new array. */
static const char **k8s_drop(const struct sl_config *cfg, const char *const *more)
{
	size_t n = 0, i;
	const char **v;

	while (more && more[n])
		n++;
	v = calloc(n + 2, sizeof(*v));
	if (!v)
		return NULL;
	for (i = 0; i < n; i++)
		v[i] = more[i];
	v[n] = cfg->reviewer.token_env;
	return v;
}

static int k8s_check_job(const struct sl_config *cfg, const struct exec_job *job,
			 struct sl_err *err)
{
	if (!k8s_dns_label(job->name))
		return sl_err_set(err, SL_EINVALID, "'%.100s' cannot name a kubernetes Job: a "
				  "DNS-1123 label is at most 63 of a-z, 0-9 and '-', starting and "
				  "ending with a letter or digit", job->name ? job->name : "");
	if (!k8s_dns_label(k8s_namespace(cfg)))
		return sl_err_set(err, SL_EINVALID, "executor.kubernetes.namespace '%.100s' is "
				  "not a namespace name (a DNS-1123 label)", k8s_namespace(cfg));
	if (!cfg->executor.kubernetes.image)
		return sl_err_set(err, SL_EINVALID, "executor.kubernetes.image is not set; name "
				  "the container image of the jobs");
	return 0;
}

/* The manifest as kubectl reads it: compact JSON (a new string, or NULL with *error and err). */
static char *k8s_manifest_text(const struct sl_config *cfg, const struct exec_job *job,
			       int *error, struct sl_err *err)
{
	json_t *m = exec_k8s_manifest(cfg, job);
	char *text = m ? json_dumps(m, JSON_COMPACT) : NULL;

	json_decref(m);
	if (!text)
		*error = sl_err_set(err, SL_ERROR, "cannot write the Job manifest of '%s' (out "
				    "of memory, or a script that is not UTF-8)", job->name);
	else if (strlen(text) > K8S_OBJECT_MAX) {
		*error = sl_err_set(err, SL_ETOOBIG, "the Job manifest of '%s' is %zu bytes, over the "
			   "API server's limit (about 1.5 MB); its script is too big", job->name,
			   strlen(text));
		free(text);
		text = NULL;
	}
	return text;
}

/* Run `kubectl ... ARGS` about a Job of namespace `ns`, the reviewer token's name dropped. */
static int k8s_job_call(const struct sl_config *cfg, const char *ns, const char *const *args,
			struct k8s_call *c, struct sl_err *err)
{
	const char *drop[2] = { cfg->reviewer.token_env, NULL };

	c->ns = ns;
	c->args = args;
	c->drop = drop;
	return k8s_run(cfg, c, err);
}

/* `kubectl create -f -` of the manifest: 0, SL_EEXISTS (a Job of the name is there), or an error. */
static int k8s_create(const struct sl_config *cfg, const char *name, const char *text,
		      const char *const *drop, struct sl_err *err)
{
	static const char *const args[] = { "create", "-f", "-", "-o", "name", NULL };
	struct k8s_call c = { .ns = k8s_namespace(cfg), .args = args, .in = text,
			      .in_len = strlen(text), .drop = drop };
	int error;

	if ((error = k8s_run(cfg, &c, err)) == 0 && c.res.exit_code != 0)
		error = k8s_failed(&c, strstr(sl_buf_cstr(&c.errout), "(AlreadyExists)") ?
				   SL_EEXISTS : SL_ERROR, "create job", name, err);
	sl_buf_release(&c.errout);
	return error;
}

/*
 * A Job of the name is there already: an earlier submission of it (the train
 * tests a car again under the same attempt; a tick killed after submitting).
 * One that has ended is deleted (its log with it), so that the new one can
 * take the name; one still going is left alone: SL_EEXISTS.
 */
static int k8s_replace_ended(const struct sl_config *cfg, const char *name, struct sl_err *err)
{
	const char *ns = k8s_namespace(cfg);
	const char *args[] = { "delete", "job", name, "--ignore-not-found", "--cascade=background",
			       "--timeout=60s", NULL };
	char id[2 * K8S_NAME_MAX + 2];
	struct k8s_call c = { 0 };
	struct exec_status st;
	int error;

	snprintf(id, sizeof(id), "%s/%s", ns, name);
	if ((error = exec_k8s_poll(cfg, id, &st, err)) != 0)
		return error;
	if (st.state != EXEC_DONE && st.state != EXEC_LOST)
		return sl_err_set(err, SL_EEXISTS, "the kubernetes Job '%s' is there already and "
				  "has not ended; it is left alone (delete it, or wait for its end)",
				  id);
	if ((error = k8s_job_call(cfg, ns, args, &c, err)) == 0 && c.res.exit_code != 0)
		error = k8s_failed(&c, SL_ERROR, "delete job", id, err);
	sl_buf_release(&c.errout);
	return error;
}

int exec_k8s_submit(const struct sl_config *cfg, const struct exec_job *job, char *id, size_t n,
		    struct sl_err *err)
{
	struct sl_err e = SL_ERR_INIT;
	const char **drop = NULL;
	char *text = NULL;
	int error;

	if ((error = k8s_check_job(cfg, job, err)) != 0)
		goto out;
	if (!(text = k8s_manifest_text(cfg, job, &error, err)))
		goto out;
	if (!(drop = k8s_drop(cfg, job->env_drop))) {
		error = sl_err_set(err, SL_ERROR, "out of memory");
		goto out;
	}
	error = k8s_create(cfg, job->name, text, drop, &e);
	if (error == SL_EEXISTS && (error = k8s_replace_ended(cfg, job->name, err)) == 0)
		error = k8s_create(cfg, job->name, text, drop, err);
	else if (error)
		sl_err_set(err, error, "%s", e.msg);
	if (!error && (size_t)snprintf(id, n, "%s/%s", k8s_namespace(cfg), job->name) >= n)
		error = sl_err_set(err, SL_ETOOBIG, "the handle of '%s' does not fit", job->name);
out:
	free(drop);
	free(text);
	return error;
}

int exec_k8s_poll(const struct sl_config *cfg, const char *id, struct exec_status *st,
		  struct sl_err *err)
{
	char ns[K8S_NAME_MAX + 1], name[K8S_NAME_MAX + 1];
	const char *args[] = { "get", "job", name, "-o", "json", NULL };
	struct k8s_call c = { 0 };
	struct sl_buf out = SL_BUF_INIT;
	int error;

	sl_buf_init(&out, K8S_OUT_MAX);
	c.out = &out;
	if ((error = k8s_split(id, ns, name, err)) != 0 ||
	    (error = k8s_job_call(cfg, ns, args, &c, err)) != 0)
		goto out;
	if (c.res.exit_code == 0 && c.res.out_truncated)
		error = sl_err_set(err, SL_ETOOBIG, "kubectl get job '%s' printed more than %zu "
				   "bytes", id, K8S_OUT_MAX);
	else if (c.res.exit_code == 0)
		error = exec_k8s_parse(out.ptr ? out.ptr : "", out.len, st, err);
	else if (strstr(sl_buf_cstr(&c.errout), "(NotFound)")) {
		memset(st, 0, sizeof(*st));
		st->state = EXEC_LOST;
		snprintf(st->detail, sizeof(st->detail),
			 "the Job is gone (deleted, or removed after its ttl)");
	} else
		error = k8s_failed(&c, SL_ERROR, "get job", id, err);
out:
	sl_buf_release(&c.errout);
	sl_buf_release(&out);
	return error;
}

int exec_k8s_cancel(const struct sl_config *cfg, const char *id, struct sl_err *err)
{
	char ns[K8S_NAME_MAX + 1], name[K8S_NAME_MAX + 1], full[2 * K8S_NAME_MAX + 2];
	const char *args[] = { "delete", "job", name, "--ignore-not-found", "--wait=false",
			       "--cascade=background", NULL };
	struct k8s_call c = { 0 };
	int error;

	if (id[0] == '?') { /* a pending handle (exec_pending): the Job of the name */
		snprintf(full, sizeof(full), "%s/%.*s", k8s_namespace(cfg), K8S_NAME_MAX, id + 1);
		id = full;
	}
	if ((error = k8s_split(id, ns, name, err)) != 0 ||
	    (error = k8s_job_call(cfg, ns, args, &c, err)) != 0)
		goto out;
	if (c.res.exit_code != 0)
		error = k8s_failed(&c, SL_ERROR, "delete job", id, err);
out:
	sl_buf_release(&c.errout);
	return error;
}

/* Room in `out` for the log, less the line that says it was cut. */
/* The Job of the name in executor.kubernetes.namespace, whatever its state: 1 and *id when there. */
int exec_k8s_find(const struct sl_config *cfg, const char *name, char *id, size_t n,
		  struct sl_err *err)
{
	char full[2 * K8S_NAME_MAX + 2];
	struct exec_status st;
	int error;

	if (!k8s_dns_label(name))
		return 0; /* never submitted under that name */
	snprintf(full, sizeof(full), "%s/%s", k8s_namespace(cfg), name);
	if ((error = exec_k8s_poll(cfg, full, &st, err)) != 0)
		return error;
	if (st.state == EXEC_LOST && strstr(st.detail, "the Job is gone"))
		return 0;
	if ((size_t)snprintf(id, n, "%s", full) >= n)
		return sl_err_set(err, SL_ETOOBIG, "the handle of '%s' does not fit", name);
	return 1;
}

static size_t k8s_log_room(const struct sl_buf *out)
{
	size_t max = out->max ? out->max : SL_BUF_DEFAULT_MAX;
	size_t room = max > out->len ? max - out->len : 0;

	return room > K8S_LOG_NOTE ? room - K8S_LOG_NOTE : 1;
}

int exec_k8s_log(const struct sl_config *cfg, const char *id, struct sl_buf *out,
		 struct sl_err *err)
{
	char ns[K8S_NAME_MAX + 1], name[K8S_NAME_MAX + 1], target[K8S_NAME_MAX + 8];
	const char *args[] = { "logs", target, "--tail=-1", NULL };
	struct k8s_call c = { 0 };
	struct sl_buf log = SL_BUF_INIT;
	int error;

	sl_buf_init(&log, k8s_log_room(out));
	c.out = &log;
	if ((error = k8s_split(id, ns, name, err)) != 0)
		goto out;
	snprintf(target, sizeof(target), "job/%s", name);
	if ((error = k8s_job_call(cfg, ns, args, &c, err)) != 0)
		goto out;
	if (c.res.exit_code != 0) {
		error = k8s_failed(&c, strstr(sl_buf_cstr(&c.errout), "(NotFound)") ?
				   SL_ENOTFOUND : SL_ERROR, "logs job", id, err);
		goto out;
	}
	(void)sl_buf_add(out, log.ptr ? log.ptr : "", log.len); /* fits: sized by its room */
	if (c.res.out_truncated)
		(void)sl_buf_addf(out, "%s[sluice: log cut at %zu of its %zu bytes]\n",
				  log.len && log.ptr[log.len - 1] != '\n' ? "\n" : "", log.len,
				  c.res.out_bytes);
out:
	sl_buf_release(&c.errout);
	sl_buf_release(&log);
	return error;
}
