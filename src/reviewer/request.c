/* The review package: schema/review-request.schema.json. */
#include "reviewer/reviewer.h"
#include "core/buf.h"
#include "core/fs.h"
#include "core/utf8.h"

#include <stdlib.h>
#include <string.h>

/*
 * A JSON string of the first n bytes of s, with invalid UTF-8 (and NUL)
 * replaced by U+FFFD. *lossy is set when anything was replaced.
 */
static json_t *utf8_string(const char *s, size_t n, int *lossy)
{
	struct sl_buf b;
	json_t *j = NULL;
	size_t i = 0, k;

	sl_buf_init(&b, n * 3 + 1);
	while (i < n) {
		k = s[i] ? sl_utf8_seq((const unsigned char *)s + i, n - i, NULL) : 0;
		if (k) {
			if (sl_buf_add(&b, s + i, k) < 0)
				goto out;
			i += k;
			continue;
		}
		*lossy = 1;
		if (sl_buf_add(&b, "\xef\xbf\xbd", 3) < 0)
			goto out;
		i++;
	}
	j = json_stringn(sl_buf_cstr(&b), b.len);
out:
	sl_buf_release(&b);
	return j;
}

static json_t *str_or_empty(const char *s, int *lossy)
{
	return utf8_string(s ? s : "", s ? strlen(s) : 0, lossy);
}

static json_t *ref_or(json_t *v, json_t *dflt)
{
	if (!v)
		return dflt;
	json_decref(dflt);
	return json_incref(v);
}

static json_t *criteria_array(const char *const *criteria, int *lossy)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && criteria && criteria[i]; i++)
		json_array_append_new(a, str_or_empty(criteria[i], lossy));
	return a;
}

static json_t *work_order(const struct reviewer_input *in, int *lossy)
{
	json_t *wo = json_object();
	json_t *id = in->wo_fields ? json_object_get(in->wo_fields, "id") : NULL;
	json_t *title = in->wo_fields ? json_object_get(in->wo_fields, "title") : NULL;

	if (!wo)
		return NULL;
	json_object_set_new(wo, "id", json_is_string(id) ? json_incref(id) : json_string(""));
	json_object_set_new(wo, "title",
	                    json_is_string(title) ? json_incref(title) : json_string(""));
	json_object_set_new(wo, "fields", ref_or(in->wo_fields, json_object()));
	json_object_set_new(wo, "body", str_or_empty(in->wo_body, lossy));
	json_object_set_new(wo, "acceptance_criteria", criteria_array(in->criteria, lossy));
	return wo;
}

/* n, or less so that a cut at n does not split a UTF-8 sequence (only the bytes before n are read). */
static size_t char_boundary(const char *s, size_t n)
{
	size_t i = n, cont = 0, need;
	unsigned char c;

	while (i > 0 && cont < 3 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
		i--, cont++;
	if (!i)
		return n;
	c = (unsigned char)s[i - 1];
	need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 1;
	return need > cont + 1 && need <= 4 ? i - 1 : n;
}

static int set_diff(json_t *req, const struct reviewer_input *in)
{
	size_t max = in->diff_max ? in->diff_max : REVIEWER_DIFF_MAX_DEFAULT;
	size_t n = in->diff_len < max ? in->diff_len : max;
	int lossy = 0;
	json_t *d;

	if (in->diff && n < in->diff_len)
		n = char_boundary(in->diff, n); /* a cut is no reason to call the diff lossy */
	if (!(d = utf8_string(in->diff ? in->diff : "", in->diff ? n : 0, &lossy)))
		return SL_ERROR;
	json_object_set_new(req, "diff", d);
	json_object_set_new(req, "diff_bytes", json_integer((json_int_t)in->diff_len));
	json_object_set_new(req, "diff_truncated", json_boolean(n < in->diff_len));
	json_object_set_new(req, "diff_lossy", json_boolean(lossy));
	if (n < in->diff_len)
		json_object_set_new(
		        req, "diff_note",
		        json_sprintf("the diff is %zu bytes; only the first %zu are included here. "
		                     "Review what is shown and say in your comments that the rest "
		                     "was not seen.",
		                     in->diff_len, n));
	return 0;
}

static int check_input(const struct reviewer_input *in, int other, struct sl_err *err)
{
	if (!in->run_id || !*in->run_id)
		return sl_err_set(err, SL_EINVALID, "review request without a run id");
	if (!in->tree || !*in->tree)
		return sl_err_set(err, SL_EINVALID, "review request for run '%s' without a tree id",
		                  in->run_id);
	if (!in->kind || (strcmp(in->kind, "build") && !other))
		return sl_err_set(err, SL_EINVALID,
		                  "review request for run '%s' has unknown kind '%s'; use build, "
		                  "resolution or report",
		                  in->run_id, in->kind ? in->kind : "");
	return 0;
}

static void set_resolution(json_t *req, const struct reviewer_input *in, int *lossy)
{
	json_object_set_new(req, "rival_run_id", str_or_empty(in->rival_run_id, lossy));
	json_object_set_new(req, "conflict", ref_or(in->conflict, json_object()));
}

/* A read-only or none run's report: the report in place of the diff. */
static void set_report(json_t *req, const struct reviewer_input *in, int *lossy)
{
	json_object_set_new(req, "report", str_or_empty(in->report, lossy));
	json_object_set_new(req, "worktree", str_or_empty(in->worktree, lossy));
}

int reviewer_request_new(json_t **out, const struct reviewer_input *in, struct sl_err *err)
{
	int resolution = in->kind && !strcmp(in->kind, "resolution");
	int report = in->kind && !strcmp(in->kind, "report");
	int error, lossy = 0;
	json_t *req = NULL;

	*out = NULL;
	if ((error = check_input(in, resolution || report, err)) < 0)
		return error;
	if (!(req = json_object()))
		goto oom;
	json_object_set_new(req, "protocol", json_string(REVIEWER_PROTOCOL));
	json_object_set_new(req, "run_id", str_or_empty(in->run_id, &lossy));
	json_object_set_new(req, "kind", json_string(in->kind));
	json_object_set_new(req, "attempt", json_integer(in->attempt > 0 ? in->attempt : 1));
	json_object_set_new(req, "work_order", work_order(in, &lossy));
	json_object_set_new(req, "base", str_or_empty(in->base, &lossy));
	json_object_set_new(req, "head", str_or_empty(in->head, &lossy));
	json_object_set_new(req, "tree", str_or_empty(in->tree, &lossy));
	if (report)
		set_report(req, in, &lossy);
	else if (set_diff(req, in) < 0)
		goto oom;
	json_object_set_new(req, "files_changed", ref_or(in->files_changed, json_array()));
	json_object_set_new(req, "builder_summary", str_or_empty(in->builder_summary, &lossy));
	json_object_set_new(req, "gates", ref_or(in->gates, json_array()));
	if (resolution)
		set_resolution(req, in, &lossy);
	/* json_object_set_new() drops a NULL value (out of memory): count the keys. */
	if (json_object_size(req) < (resolution ? 17u : report ? 13u : 15u))
		goto oom;
	*out = req;
	return 0;
oom:
	json_decref(req);
	return sl_err_set(err, SL_ERROR, "out of memory building the review request of run '%s'",
	                  in->run_id);
}

