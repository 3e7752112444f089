/*
 * Which merged run a killed merge left unsealed (docs/ARCHITECTURE.md, One
 * run, from queued to merged): every merge seals the newest merged run
 * first, so only that one can lack manifest.json; the runner writes it.
 */
#include "artifact/artifact.h"
#include "store/store.h"
#include "core/fs.h"

#include <stdlib.h>

const char *artifact_unsealed_newest(const struct sl_repo *repo, const struct store_run *runs,
				     size_t n)
{
	const struct store_run *newest = NULL;
	char *manifest, *tomb;
	int unsealed;

	for (size_t i = 0; i < n; i++)
		if (runs[i].state == RUN_MERGED &&
		    (!newest || runs[i].finished_ms > newest->finished_ms))
			newest = &runs[i];
	if (!newest)
		return NULL;
	manifest = sl_repo_run_path(repo, newest->id, "manifest.json");
	tomb = artifact_tombstone_path(repo, newest->id);
	unsealed = manifest && tomb && !sl_path_exists(manifest) && !sl_path_exists(tomb);
	free(manifest);
	free(tomb);
	return unsealed ? newest->id : NULL;
}
