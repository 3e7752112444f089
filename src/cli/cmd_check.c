/* sluice check: validate the config and every work order; run nothing. */
#include "cli/cli.h"
#include "core/buf.h"
#include "core/repo.h"
#include "runner/runner.h"
#include "system/system.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
        "usage: sluice check [--json] [-C DIR]\n"
        "\n"
        "Validate .system/config.yaml and every work order of the inbox without\n"
        "running anything: YAML syntax, every key and value of the config (retry\n"
        "rules need an 'exit' entry, 'not:' must name a configured gate, prompt\n"
        "templates may only use known variables), and every work order's front\n"
        "matter, ids, dependencies (unknown ids, cycles) and duplicates.\n"
        "\n"
        "Each problem is printed on its own line as 'path:line:col: message', and\n"
        "each warning (what sluice accepts but changes, such as 'session: keep'\n"
        "with a rule that switches the agent, or a program it would start here that\n"
        "is not on PATH: a builder preset's CLI, a builder or reviewer command) as\n"
        "'path:line:col: warning: ...'.\n"
        "\n"
        "options:\n"
        "  --json       print {\"ok\", \"problems\": [...], \"warnings\": [...],\n"
        "               \"work_orders\": N} instead\n"
        "  -C DIR       run as if started in DIR\n"
        "  -h, --help   show this help\n"
        "\n"
        "exit status: 0 when everything is valid, 1 when a problem was found,\n"
        "2 on a usage error.\n"
        "\n"
        "examples:\n"
        "  sluice check\n"
        "  sluice check --json | jq -r '.problems[]'\n";

static int print_json(const char *problems, int count, size_t nwo)
{
	json_t *doc = json_object(), *list = json_array(), *warnings = json_array();
	const char *p;

	for (p = problems; *p; p += strcspn(p, "\n") + 1) {
		size_t len = strcspn(p, "\n");
		const char *w = strstr(p, ": warning: "); /* sl_config_warnings() */
		json_array_append_new(w && w < p + len ? warnings : list, json_stringn(p, len));
	}
	json_object_set_new(doc, "ok", json_boolean(count == 0));
	json_object_set_new(doc, "problems", list);
	json_object_set_new(doc, "warnings", warnings);
	json_object_set_new(doc, "work_orders", json_integer((json_int_t)nwo));
	json_dumpf(doc, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(doc);
	return count ? CLI_FAIL : CLI_OK;
}

int cmd_check(struct cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {CLI_COMMON_LONGOPTS, {NULL, 0, NULL, 0}};
	struct sl_repo repo = SL_REPO_INIT;
	struct sl_err err = SL_ERR_INIT;
	struct sl_buf problems = SL_BUF_INIT;
	size_t nwo = 0;
	int opt, n = 0, rc;

	optind = 0;
	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		if (opt == 'h')
			return cli_help(usage_text);
		if (!cli_common_opt(cli, opt, optarg))
			return cli_usage("check", "unknown option");
	}
	if (optind < argc)
		return cli_usage("check", "unexpected argument '%s'", argv[optind]);
	if (sl_repo_find(&repo, cli->dir, &err) || sl_repo_require_init(&repo, &err) ||
	    (n = system_check(&repo, &problems, &nwo, &err)) < 0) {
		rc = cli_report(&err);
		goto out;
	}
	if (cli->json) {
		rc = print_json(sl_buf_cstr(&problems), n, nwo);
		goto out;
	}
	/* file names and values from work orders: escaped, as queue prints them */
	for (const char *p = sl_buf_cstr(&problems); *p;) {
		size_t len = strcspn(p, "\n");
		char *line = strndup(p, len);

		printf("%s\n", line ? cli_esc(line) : "(out of memory)");
		free(line);
		p += len + (p[len] == '\n');
	}
	if (n) {
		printf("%d problem%s found in the config and %zu work order%s\n", n,
		       n == 1 ? "" : "s", nwo, nwo == 1 ? "" : "s");
		rc = CLI_FAIL;
	} else {
		printf("ok: the config and %zu work order%s are valid\n", nwo, nwo == 1 ? "" : "s");
		rc = CLI_OK;
	}
out:
	sl_buf_release(&problems);
	sl_repo_release(&repo);
	return rc;
}
