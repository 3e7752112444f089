/*
 * core/config.c's table of settings: every key reads its default and a good
 * value, refuses a bad one, a misspelt key of each section gets a "did you
 * mean", and docs/config.md names every key.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/fs.h"

/* "a.b.c" set to value, as nested YAML; a gate gets the command it needs. */
static void yaml_of(struct sl_buf *out, const char *key, const char *value)
{
	char path[128];
	char *part, *save = NULL;
	int depth = 0, gate = !strncmp(key, "gates.", 6);

	snprintf(path, sizeof(path), "%s", key);
	for (part = strtok_r(path, ".", &save); part; part = strtok_r(NULL, ".", &save)) {
		const char *rest = save && *save ? save : NULL;
		sl_buf_addf(out, "%*s%s:", depth * 2, "", !strcmp(part, "<name>") ? "t" : part);
		if (!rest) {
			sl_buf_addf(out, strstr(value, ": ") && !strchr("[{", *value) ? " '%s'\n" : " %s\n",
			            value);
			break;
		}
		sl_buf_puts(out, "\n");
		depth++;
	}
	if (gate && strcmp(key, "gates.<name>.command") && strchr(key + 6, '.'))
		sl_buf_puts(out, "    command: [true]\n");
}

/* The problems of config text (caller frees) and their count. */
static char *check(const char *text, int *n)
{
	struct sl_buf out = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;

	*n = sl_config_parse(NULL, "config.yaml", text, strlen(text), &out, &err);
	return sl_buf_detach(&out);
}

static int parses(const char *key, const char *value, char **why)
{
	struct sl_buf y = SL_BUF_INIT;
	int n;

	yaml_of(&y, key, value);
	*why = check(sl_buf_cstr(&y), &n);
	sl_buf_release(&y);
	return n == 0;
}

/* A value the key takes when it has no default (NULL: a section, nothing to give). */
static const char *good_value(const struct sl_config_key *k, char *buf, size_t n)
{
	static const struct { const char *key, *value; } own[] = {
		{"target", "main"}, {"reviewer.url", "http://127.0.0.1:8080/"},
		{"notify.url", "http://127.0.0.1:8080/"}, {"builder.preset", "codex"},
		{"builder.agent", "codex"}, {"builder.env", "{A: b}"}, {"merge.gates", "[]"},
		{"retry", "[]"}, {"gates", "{t: [true]}"}, {"builders", "{fast: {preset: codex}}"},
	};

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (!strcmp(k->key, own[i].key))
			return own[i].value;
	if (k->def)
		return k->def;
	if (!strcmp(k->type, "number"))
		return snprintf(buf, n, "%d", k->min), buf;
	if (!strcmp(k->type, "text") || !strcmp(k->type, "word"))
		return "x";
	if (!strcmp(k->type, "argv"))
		return "[true]";
	if (!strcmp(k->type, "paths") || !strcmp(k->type, "list"))
		return "[a]";
	return NULL;
}

/* Bad values of the key's type (NULL-terminated). */
static void bad_values(const struct sl_config_key *k, const char *out[4], char *buf, size_t n)
{
	const char *t = k->type;

	memset(out, 0, 4 * sizeof(*out));
	if (!strcmp(t, "number")) {
		snprintf(buf, n, "%d", k->max + 1);
		out[0] = buf, out[1] = "many", out[2] = "-1";
	} else if (!strcmp(t, "bool")) {
		out[0] = "maybe";
	} else if (!strcmp(t, "duration")) {
		out[0] = "soon";
	} else if (!strcmp(t, "size")) {
		out[0] = "big", out[1] = "0";
	} else if (!strcmp(t, "dollars")) {
		out[0] = "-1", out[1] = "1.", out[2] = "$5";
	} else if (!strcmp(t, "minutes")) {
		out[0] = "-1", out[1] = "30m", out[2] = "1h";
	} else if (!strcmp(t, "text") || !strcmp(t, "word")) {
		out[0] = "[a, b]";
	} else if (!strcmp(t, "argv")) {
		out[0] = "make", out[1] = "[]";
	} else if (!strcmp(t, "paths")) {
		out[0] = "[../up]", out[1] = "[.git]";
	} else if (!strcmp(t, "choice")) {
		out[0] = "nonsense";
	} else {
		out[0] = "5"; /* a section, a list, a map: not a number */
	}
}

static void test_every_key(void **state)
{
	struct sl_config_key k;
	char buf[32], *why;
	const char *bad[4];

	(void)state;
	for (size_t i = 0; sl_config_key(i, &k) == 0; i++) {
		const char *good = good_value(&k, buf, sizeof(buf));
		if (good && !parses(k.key, good, &why))
			fail_msg("%s: %s refused: %s", k.key, good, why);
		if (good)
			free(why);
		why = NULL;
		bad_values(&k, bad, buf, sizeof(buf));
		for (int j = 0; bad[j]; j++) {
			if (!strcmp(k.key, "gates.<name>.worktree") && j)
				continue;
			if (parses(k.key, bad[j], &why))
				fail_msg("%s: %s taken", k.key, bad[j]);
			free(why);
		}
	}
}

/* The sections a key can be misspelt in, and the key to misspell (their first). */
static void test_did_you_mean(void **state)
{
	static const char *const keys[] = {
		"target", "queue.inbox", "builder.command", "worktree.share", "gates.<name>.command",
		"reviewer.mode", "merge.resolver", "commit.name", "gc.keep_last", "notify.command",
		"executor.kind", "executor.slurm.partition", "executor.kubernetes.namespace",
	};
	struct sl_buf y = SL_BUF_INIT;
	char wrong[96], want[128], *why;
	int n;

	(void)state;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		size_t len;
		snprintf(wrong, sizeof(wrong), "%s", keys[i]);
		len = strlen(wrong);
		wrong[len - 1] = keys[i][len - 2], wrong[len - 2] = keys[i][len - 1];
		sl_buf_reset(&y);
		yaml_of(&y, wrong, strstr(wrong, "command") ? "[true]" : "x");
		why = check(sl_buf_cstr(&y), &n);
		snprintf(want, sizeof(want), "did you mean '%s'?", strrchr(keys[i], '.') ?
		         strrchr(keys[i], '.') + 1 : keys[i]);
		if (n == 0 || !strstr(why, want))
			fail_msg("%s: no \"%s\" in: %s", wrong, want, why);
		free(why);
	}
	sl_buf_release(&y);
}

/* docs/config.md names each key: `key`, or `.leaf` on a row of its section's keys. */
static void test_documented(void **state)
{
	struct sl_buf doc = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	struct sl_config_key k;
	char *path = sl_path_join(SLUICE_SOURCE_DIR, "docs/config.md");
	char want[128];

	(void)state;
	assert_int_equal(sl_read_file(&doc, path, 1 << 20, &err), 0);
	for (size_t i = 0; sl_config_key(i, &k) == 0; i++) {
		const char *leaf = strrchr(k.key, '.');
		if (!strcmp(k.type, "section"))
			continue; /* named by its keys */
		snprintf(want, sizeof(want), "`%s`", k.key);
		if (strstr(sl_buf_cstr(&doc), want))
			continue;
		snprintf(want, sizeof(want), "`%s:`", k.key);
		if (strstr(sl_buf_cstr(&doc), want))
			continue;
		snprintf(want, sizeof(want), "`%s`", leaf ? leaf : "");
		if (!leaf || !strstr(sl_buf_cstr(&doc), want))
			fail_msg("docs/config.md does not name %s", k.key);
	}
	sl_buf_release(&doc);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_every_key),
	        cmocka_unit_test(test_did_you_mean),
	        cmocka_unit_test(test_documented),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
