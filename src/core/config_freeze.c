/* merge.freeze: windows when the target lands nothing (docs/config.md; core/config.c). */
#include "core/config_int.h"
#include "core/time.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "HH:MM" (to: up to "24:00") into minutes of the day; -1 when not. */
static int freeze_minute(const char *s, int upto)
{
	int h, m;
	char end;

	if (!s || strlen(s) != 5 || sscanf(s, "%2d:%2d%c", &h, &m, &end) != 2 ||
	    !isdigit((unsigned char)s[0]) || !isdigit((unsigned char)s[3]) || m > 59 ||
	    h * 60 + m > upto)
		return -1;
	return h * 60 + m;
}

/* days: [mon, tue, ...] into w->days. */
static void freeze_days(struct ctx *c, yaml_node_t *v, struct sl_freeze_window *w)
{
	static const char *const names[] = { "sun", "mon", "tue", "wed", "thu", "fri", "sat" };
	yaml_node_item_t *it;
	int d;

	if (!v || v->type != YAML_SEQUENCE_NODE) {
		config__problem(c, v, "'merge.freeze' days must be a list of mon, tue, wed, thu, fri, sat, sun");
		return;
	}
	if (v->data.sequence.items.start == v->data.sequence.items.top)
		config__problem(c, v, "'merge.freeze' days must name at least one day");
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(c->doc, *it);
		const char *s = config__scalar(item);
		for (d = 0; s && d < 7 && strcmp(s, names[d]); d++)
			;
		if (!s || d == 7)
			config__problem(c, item, "unknown day '%s' in 'merge.freeze'; use mon, tue, wed, thu, "
			        "fri, sat or sun", s ? s : "(a list or mapping)");
		else
			w->days |= 1u << d;
	}
}

/* One key of a window. */
static void freeze_key(struct ctx *c, struct sl_freeze_window *w, yaml_node_t *k, yaml_node_t *v,
		       int *from_to)
{
	const char *key = config__scalar(k), *s = config__scalar(v);

	if (!strcmp(key, "days"))
		freeze_days(c, v, w), *from_to |= 4;
	else if (!strcmp(key, "from") || !strcmp(key, "to")) {
		int to = key[0] == 't', m = freeze_minute(s, to ? 1440 : 1439);
		if (m < 0)
			config__problem(c, v, "'merge.freeze' %s must be a time of day \"HH:MM\"%s, not '%s'",
			        key, to ? " up to \"24:00\"" : "", s ? s : "(a list or mapping)");
		else
			*(to ? &w->to_min : &w->from_min) = m, *from_to |= to ? 2 : 1;
	} else if (!strcmp(key, "tz")) {
		if (config__get_str(c, v, &w->tz, "merge.freeze tz") == 0 && !sl_tz_known(w->tz))
			config__problem(c, v, "unknown time zone '%.100s' in 'merge.freeze'; use a name of the "
			        "tz database such as Europe/Berlin or UTC", w->tz);
	} else if (!strcmp(key, "reason"))
		config__get_str(c, v, &w->reason, "merge.freeze reason");
	else if (!strcmp(key, "allow_urgent"))
		config__get_bool(c, v, &w->allow_urgent, "merge.freeze allow_urgent");
	else
		config__unknown(c, k, "merge.freeze", "days, from, to, tz, reason, allow_urgent");
}

/* One window: a mapping with days, from and to (from before to). */
static void freeze_window(struct ctx *c, yaml_node_t *v, struct sl_freeze_window *w)
{
	yaml_node_pair_t *p;
	int from_to = 0;

	if (v->type != YAML_MAPPING_NODE) {
		config__problem(c, v, "each entry of 'merge.freeze' must be a mapping with days, from and to");
		return;
	}
	for (p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		if (config__scalar(k))
			freeze_key(c, w, k, yaml_document_get_node(c->doc, p->value), &from_to);
	}
	if (from_to != 7)
		config__problem(c, v, "each entry of 'merge.freeze' needs days, from and to, e.g. "
		        "{days: [sat, sun], from: \"00:00\", to: \"24:00\", tz: UTC}");
	else if (w->from_min >= w->to_min)
		config__problem(c, v, "'merge.freeze' from must be before to; write a window over midnight "
		        "as two windows");
	if ((!w->tz && !(w->tz = strdup("UTC"))) || (!w->reason && !(w->reason = strdup("merge.freeze"))))
		config__oom(c);
}

void config__read_freeze(struct ctx *c, const struct setting *row, yaml_node_t *v, void *at)
{
	struct sl_config *cfg = c->cfg;
	yaml_node_item_t *it;

	if (config__is_null(v))
		return;
	if (v->type != YAML_SEQUENCE_NODE) {
		config__problem(c, v, "'merge.freeze' must be a list of windows, e.g. [{days: [sat, sun], "
		        "from: \"00:00\", to: \"24:00\", tz: Europe/Berlin, reason: weekend}]");
		return;
	}
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		struct sl_freeze_window *n = realloc(cfg->merge.freeze,
						     (cfg->merge.nfreeze + 1) * sizeof(*n));
		if (!n) {
			config__oom(c);
			return;
		}
		cfg->merge.freeze = n;
		memset(&n[cfg->merge.nfreeze], 0, sizeof(*n));
		freeze_window(c, yaml_document_get_node(c->doc, *it), &n[cfg->merge.nfreeze++]);
	}
}

void config__freeze_free(struct sl_config *cfg)
{
	for (size_t i = 0; i < cfg->merge.nfreeze; i++) {
		free(cfg->merge.freeze[i].tz);
		free(cfg->merge.freeze[i].reason);
	}
	free(cfg->merge.freeze);
}
