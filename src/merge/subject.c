/* The merge commit's subject from merge.message (docs/config.md): a template of the run's names. */
#include "merge/merge_int.h"
#include "core/id.h"
#include "core/template.h"

#include <stdio.h>
#include <string.h>

struct message_vars {
	const struct merge_subject_vars *v;
	char buf[64];
};

static const char *message_var(const char *name, void *data)
{
	struct message_vars *m = data;
	const struct merge_subject_vars *v = m->v;
	json_t *f;

	if (!strcmp(name, "run.id"))
		return v->run_id;
	if (!strcmp(name, "run.short"))
		return sl_id_short(v->run_id) ? sl_id_short(v->run_id) : "";
	if (!strcmp(name, "run.branch"))
		return v->branch ? v->branch : "";
	if (!strcmp(name, "reviewer"))
		return v->reviewer ? v->reviewer : "";
	if (strncmp(name, "work_order.", 11))
		return NULL;
	f = json_object_get(v->fields, name + 11);
	if (json_is_string(f))
		return json_string_value(f);
	if (json_is_integer(f)) {
		snprintf(m->buf, sizeof(m->buf), "%lld", (long long)json_integer_value(f));
		return m->buf;
	}
	return ""; /* a field the work order does not have, or a list */
}

int merge_subject_render(struct sl_buf *out, const char *tmpl, const struct merge_subject_vars *v,
			 struct sl_err *err)
{
	struct message_vars m = { v, { 0 } };
	int error;

	if (!tmpl || !*tmpl)
		return 0;
	if ((error = sl_template_render(out, tmpl, message_var, &m, err)) != 0)
		return error;
	while (out->len && (out->ptr[out->len - 1] == '\n' || out->ptr[out->len - 1] == ' '))
		out->ptr[--out->len] = '\0';
	return 0;
}
