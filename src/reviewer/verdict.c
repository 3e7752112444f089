/* Verdicts: schema/review-response.schema.json, validated by hand. */
#include "reviewer/reviewer.h"
#include "reviewer/reviewer_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const verdicts[] = {"approve", "request_changes", "reject", NULL};

static int known_verdict(const char *s)
{
	size_t i;

	for (i = 0; verdicts[i]; i++)
		if (!strcmp(s, verdicts[i]))
			return 1;
	return 0;
}

static int optional_string(const char **out, json_t *v, const char *key, struct sl_err *err)
{
	json_t *s = json_object_get(v, key);

	*out = "";
	if (!s || json_is_null(s))
		return 0;
	if (!json_is_string(s))
		return sl_err_set(err, SL_EINVALID, "reviewer verdict: '%s' is not a string", key);
	*out = json_string_value(s);
	return 0;
}

int reviewer__check_name(const char *name, size_t len, struct sl_err *err)
{
	char snip[64];
	size_t k;
	int why = sl_reviewer_name_check(name, len);

	if (why == SL_NAME_OK)
		return 0;
	/* shown with every control byte as '?' (the snippet would make a newline a space) */
	for (k = 0; k < len && k < 48; k++)
		snip[k] = (unsigned char)name[k] < 0x20 || name[k] == 0x7f ? '?' : name[k];
	while (k < len && k && ((unsigned char)name[k] & 0xc0) == 0x80)
		k--; /* cut at a character boundary: the message stays UTF-8 */
	snprintf(snip + k, sizeof(snip) - k, "%s", k < len ? "..." : "");
	return sl_err_set(err, SL_EINVALID,
	                  "reviewer name '%s' %s; it becomes the Reviewed-by: trailer of the merge",
	                  snip,
	                  why == SL_NAME_CONTROL
	                          ? "holds a control character (a newline, a tab, an escape)"
	                          : "is longer than " SL_STR(SL_REVIEWER_NAME_MAX) " characters");
}

static int check_verdict(json_t *v, const char *tree, struct sl_err *err)
{
	json_t *verdict = json_object_get(v, "verdict");
	const char *comments, *t;
	char snip[64];
	int error;

	if (!json_is_string(verdict))
		return sl_err_set(err, SL_EINVALID, "reviewer verdict has no 'verdict' string");
	if (!known_verdict(json_string_value(verdict))) {
		reviewer__snippet(snip, sizeof(snip), json_string_value(verdict),
		                  json_string_length(verdict));
		return sl_err_set(err, SL_EINVALID,
		                  "reviewer verdict '%s' is not approve, request_changes or reject",
		                  snip);
	}
	if ((error = optional_string(&comments, v, "comments", err)) < 0 ||
	    (error = optional_string(&t, v, "reviewer", err)) < 0 ||
	    (error = reviewer__check_name(t, strlen(t), err)) < 0 ||
	    (error = optional_string(&t, v, "tree", err)) < 0)
		return error;
	if (!*comments && strcmp(json_string_value(verdict), "approve"))
		return sl_err_set(err, SL_EINVALID,
		                  "reviewer verdict '%s' has no comments; a verdict other than "
		                  "approve must say why",
		                  json_string_value(verdict));
	if (*t && strcmp(t, tree)) {
		reviewer__snippet(snip, sizeof(snip), t, strlen(t));
		return sl_err_set(
		        err, SL_EINVALID,
		        "reviewer verdict is for tree '%.40s', not the tree under review '%s'", snip,
		        tree);
	}
	return 0;
}

static int check_criterion(json_t *c, size_t i, int approve, struct sl_err *err)
{
	json_t *name = json_object_get(c, "criterion"), *met = json_object_get(c, "met");
	json_t *note = json_object_get(c, "note");

	if (!json_is_object(c))
		return sl_err_set(err, SL_EINVALID,
		                  "reviewer verdict: criteria[%zu] is not an object", i);
	if (!json_is_string(name) || !json_string_length(name))
		return sl_err_set(err, SL_EINVALID,
		                  "reviewer verdict: criteria[%zu] does not name its criterion", i);
	if (!json_is_boolean(met))
		return sl_err_set(err, SL_EINVALID,
		                  "reviewer verdict: criteria[%zu].met is not true or false", i);
	if (note && !json_is_null(note) && !json_is_string(note))
		return sl_err_set(err, SL_EINVALID,
		                  "reviewer verdict: criteria[%zu].note is not a string", i);
	if (approve && json_is_false(met))
		return sl_err_set(err, SL_EINVALID,
		                  "reviewer verdict approves but says criteria[%zu] is not met; "
		                  "an approval must not contradict itself",
		                  i);
	return 0;
}

static int check_criteria(json_t *v, struct sl_err *err)
{
	json_t *a = json_object_get(v, "criteria");
	int approve = !strcmp(json_string_value(json_object_get(v, "verdict")), "approve");
	size_t i;
	int error;

	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a))
		return sl_err_set(err, SL_EINVALID, "reviewer verdict: 'criteria' is not an array");
	for (i = 0; i < json_array_size(a); i++)
		if ((error = check_criterion(json_array_get(a, i), i, approve, err)) < 0)
			return error;
	return 0;
}

static char *dup_field(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return strdup(s ? s : "");
}

static int fill_criteria(struct reviewer_verdict *out, json_t *a)
{
	size_t i, n = json_is_array(a) ? json_array_size(a) : 0;

	if (!n)
		return 0;
	if (!(out->criteria = calloc(n, sizeof(*out->criteria))))
		return SL_ERROR;
	for (i = 0; i < n; i++) {
		json_t *c = json_array_get(a, i);
		struct reviewer_criterion *rc = &out->criteria[out->ncriteria++];

		rc->met = json_is_true(json_object_get(c, "met"));
		rc->criterion = dup_field(c, "criterion");
		rc->note = dup_field(c, "note");
		if (!rc->criterion || !rc->note)
			return SL_ERROR;
	}
	return 0;
}

static int fill(struct reviewer_verdict *out, json_t *v, const char *tree)
{
	out->verdict = dup_field(v, "verdict");
	out->comments = dup_field(v, "comments");
	out->reviewer = dup_field(v, "reviewer");
	out->tree = strdup(tree);
	out->raw = json_deep_copy(v);
	if (!out->verdict || !out->comments || !out->reviewer || !out->tree || !out->raw)
		return SL_ERROR;
	return fill_criteria(out, json_object_get(v, "criteria"));
}

int reviewer_verdict_from_json(struct reviewer_verdict *out, json_t *v, const char *tree,
                               struct sl_err *err)
{
	int error;

	*out = (struct reviewer_verdict)REVIEWER_VERDICT_INIT;
	if (!tree || !*tree)
		return sl_err_set(err, SL_EINVALID,
		                  "reviewer verdict without a tree to bind it to");
	if (!json_is_object(v))
		return sl_err_set(err, SL_EINVALID, "reviewer reply is not a JSON object");
	if ((error = check_verdict(v, tree, err)) < 0 || (error = check_criteria(v, err)) < 0)
		return error;
	if (fill(out, v, tree) < 0) {
		reviewer_verdict_release(out);
		return sl_err_set(err, SL_ERROR, "out of memory reading the reviewer verdict");
	}
	return 0;
}

int reviewer_verdict_parse(struct reviewer_verdict *out, const char *text, size_t len,
                           const char *tree, struct sl_err *err)
{
	json_error_t jerr;
	json_t *v;
	int error;

	*out = (struct reviewer_verdict)REVIEWER_VERDICT_INIT;
	if (!(v = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr)))
		return sl_err_set(err, SL_EINVALID,
		                  "reviewer reply is not valid JSON: %s at line %d column %d",
		                  jerr.text, jerr.line, jerr.column);
	error = reviewer_verdict_from_json(out, v, tree, err);
	json_decref(v);
	return error;
}

json_t *reviewer_verdict_to_json(const struct reviewer_verdict *v)
{
	json_t *o = json_object(), *a = json_array();
	size_t i;

	if (!o || !a) {
		json_decref(o);
		json_decref(a);
		return NULL;
	}
	for (i = 0; i < v->ncriteria; i++)
		json_array_append_new(
		        a, json_pack("{s:s, s:b, s:s}", "criterion", v->criteria[i].criterion,
		                     "met", v->criteria[i].met, "note", v->criteria[i].note));
	json_object_set_new(o, "verdict", json_string(v->verdict ? v->verdict : ""));
	json_object_set_new(o, "comments", json_string(v->comments ? v->comments : ""));
	json_object_set_new(o, "reviewer", json_string(v->reviewer ? v->reviewer : ""));
	json_object_set_new(o, "tree", json_string(v->tree ? v->tree : ""));
	json_object_set_new(o, "criteria", a);
	return o;
}

int reviewer_verdict_approves_tree(const struct reviewer_verdict *v, const char *tree)
{
	return v && v->verdict && v->tree && tree && *tree && !strcmp(v->verdict, "approve") &&
	       !strcmp(v->tree, tree);
}

void reviewer_verdict_release(struct reviewer_verdict *v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < v->ncriteria; i++) {
		free(v->criteria[i].criterion);
		free(v->criteria[i].note);
	}
	free(v->criteria);
	free(v->verdict);
	free(v->comments);
	free(v->reviewer);
	free(v->tree);
	json_decref(v->raw);
	*v = (struct reviewer_verdict)REVIEWER_VERDICT_INIT;
}
