/* sluice init: set up .system/ in this repository (docs/design.md, The .system folder). */
#include "cli/cli.h"
#include "core/repo.h"
#include "runner/runner.h"
#include "system/system.h"

#include <getopt.h>
#include <stdio.h>

static const char usage_text[] =
        "usage: sluice init [--inbox DIR] [--target BRANCH] [-C DIR]\n"
        "\n"
        "Set up sluice in a git repository: create .system/ with config.yaml (every\n"
        "key documented), sluice.db, runs/ and the lock file; add '/.system/' to\n"
        ".git/info/exclude so that git status and git add -A never see it; create\n"
        "the inbox directory. Running it again changes nothing and says so; a\n"
        "missing piece (the database, the exclude line) is put back.\n"
        "\n"
        "options:\n"
        "  --inbox DIR      where work orders are dropped, relative to the repository\n"
        "                   root (default: work_orders)\n"
        "  --target BRANCH  the branch approved runs merge into (default: the branch\n"
        "                   HEAD names; required when HEAD is detached or has no commit)\n"
        "  -C DIR           run as if started in DIR\n"
        "  -h, --help       show this help\n"
        "\n"
        "examples:\n"
        "  sluice init\n"
        "  sluice init --target develop --inbox tasks\n"
        "  sluice -C ~/src/app init\n"
        "\n"
        "Then set 'builder' in .system/config.yaml and add a cron line:\n"
        "  * * * * * cd /path/to/repo && sluice tick\n";

#define OPT_INBOX 2001
#define OPT_TARGET 2002

static void print_note(const char *line, void *data)
{
	(void)data;
	printf("%s\n", line);
}

static void print_done(const struct sl_repo *repo, const struct system_init_result *res,
		       const char *inbox)
{
	if (res->changed && res->target)
		printf("initialized sluice in %s/.system\n"
		       "next: set 'builder' in .system/config.yaml, drop work orders into %s/,\n"
		       "and run 'sluice check', 'sluice queue', then 'sluice tick' (from cron)\n",
		       repo->root, inbox);
	else if (res->changed)
		printf("already initialized in %s/.system; put back what was missing\n",
		       repo->root);
	else
		printf("already initialized in %s/.system; nothing changed\n", repo->root);
}

int cmd_init(struct cli *cli, int argc, char **argv)
{
	static const struct option longopts[] = {
	        CLI_COMMON_LONGOPTS,
	        {"inbox", required_argument, NULL, OPT_INBOX},
	        {"target", required_argument, NULL, OPT_TARGET},
	        {NULL, 0, NULL, 0},
	};
	struct system_init_opts o = SYSTEM_INIT_OPTS_INIT;
	struct system_init_result res = {0, NULL};
	struct sl_repo repo = SL_REPO_INIT;
	struct sl_err err = SL_ERR_INIT;
	int opt, rc = CLI_OK;

	o.inbox = "work_orders";
	o.note = print_note;
	optind = 0;
	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		if (opt == 'h')
			return cli_help(usage_text);
		if (opt == OPT_INBOX)
			o.inbox = optarg;
		else if (opt == OPT_TARGET)
			o.target = optarg;
		else if (!cli_common_opt(cli, opt, optarg))
			return cli_usage("init", "unknown option");
	}
	if (optind < argc)
		return cli_usage("init", "unexpected argument '%s'", argv[optind]);
	if (sl_repo_find(&repo, cli->dir, &err) || system_init(&repo, &o, &res, &err))
		rc = cli_report(&err);
	else
		print_done(&repo, &res, o.inbox);
	system_init_result_release(&res);
	sl_repo_release(&repo);
	return rc;
}
