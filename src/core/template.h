#ifndef SL_CORE_TEMPLATE_H
#define SL_CORE_TEMPLATE_H
/*
 * Prompt templates (the Gump failure-handling seed): text with variables in
 * braces, `{work_order.title}`, `{error}`, `{diff}`, `{gate.test.output}`,
 * `{review.comments}`, `{attempt}`. `{{` and `}}` are literal braces. A
 * variable name is [A-Za-z0-9_.-]+; anything else in braces is kept as text.
 */
#include "core/buf.h"
#include "core/err.h"

/*
 * Look a variable up: return its value (borrowed; "" for known-but-empty),
 * or NULL when the name is unknown.
 */
typedef const char *(*sl_template_lookup)(const char *name, void *data);

/* Render into out; an unknown variable is SL_EINVALID naming it. */
int sl_template_render(struct sl_buf *out, const char *tmpl, sl_template_lookup lookup, void *data,
		       struct sl_err *err);

/*
 * Check every variable of tmpl with is_known(name, data) (non-zero: known);
 * the first unknown one is SL_EINVALID: "unknown variable '{x}' in <where>;
 * known variables: ...".
 */
typedef int (*sl_template_known)(const char *name, void *data);
int sl_template_check(const char *tmpl, sl_template_known is_known, void *data, const char *where,
		      struct sl_err *err);

/*
 * Strict brace check, for text where a stray brace is a mistake (the merge
 * commit message): every '{' or '}' not doubled must belong to a
 * "{name}" variable. SL_EINVALID names the first one: "unterminated
 * variable '{work_order.title' in <where>" or "'{' at column N of <where> ...".
 */
int sl_template_check_braces(const char *tmpl, const char *where, struct sl_err *err);

/*
 * The variable names sluice itself knows in prompt templates, given the
 * configured gate names: work_order.<any field>, error, diff, attempt,
 * review.comments, gate.<name>.output, gate.<name>.exit. For sl_template_check.
 */
int sl_template_prompt_var_known(const char *name, void *gate_names /* sl_strv-like char ** */);

#endif
