/* core/repo: who sluice's commits are by (sl_repo_identity()). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/repo.h"

static void test_valid(void **state)
{
	char big[SL_IDENTITY_MAX + 1];

	(void)state;
	assert_true(sl_identity_valid("Ada Lovelace"));
	assert_true(sl_identity_valid("ada@example.com"));
	assert_false(sl_identity_valid(NULL));
	assert_false(sl_identity_valid(""));
	assert_false(sl_identity_valid("Eve <eve@x>"));
	assert_false(sl_identity_valid("two\nlines"));
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_false(sl_identity_valid(big));
}

static void test_no_repository(void **state)
{
	struct sl_identity who;

	(void)state;
	sl_repo_identity(&who, NULL, NULL, NULL);
	assert_string_equal(who.name, SL_IDENTITY_NAME);
	assert_string_equal(who.email, SL_IDENTITY_EMAIL);
	sl_repo_identity(&who, NULL, "Bot", "bot@x");
	assert_string_equal(who.name, "Bot");
	assert_string_equal(who.email, "bot@x");
	sl_repo_identity(&who, NULL, "Bad <x>", NULL); /* refused: the default */
	assert_string_equal(who.name, SL_IDENTITY_NAME);
}

/* The repository's user.name and user.email; the config's name wins, each on its own. */
static void test_repository_config(void **state)
{
	char dir[] = "/tmp/sluice-identity-XXXXXX";
	git_repository *repo = NULL;
	git_config *cfg = NULL;
	struct sl_identity who;
	char cmd[128];

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(git_repository_init(&repo, dir, 0), 0);
	assert_int_equal(git_repository_config(&cfg, repo), 0);
	assert_int_equal(git_config_set_string(cfg, "user.name", "Repo Person"), 0);
	assert_int_equal(git_config_set_string(cfg, "user.email", "repo@example.org"), 0);
	sl_repo_identity(&who, dir, NULL, NULL);
	assert_string_equal(who.name, "Repo Person");
	assert_string_equal(who.email, "repo@example.org");
	sl_repo_identity(&who, dir, "Bot", NULL);
	assert_string_equal(who.name, "Bot");
	assert_string_equal(who.email, "repo@example.org");
	git_config_free(cfg);
	git_repository_free(repo);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_no_repository),
		cmocka_unit_test(test_repository_config),
	};
	int rc;

	git_libgit2_init();
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	git_libgit2_shutdown();
	return rc;
}
