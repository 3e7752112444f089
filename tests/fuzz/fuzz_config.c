/*
 * libFuzzer target for the config parser: any bytes go through
 * sl_config_parse() (the walk of `sluice check` and of every load), and a
 * config that parses is freed. Nothing may crash, leak or read out of
 * bounds; every problem must be a line of text.
 *
 *   cmake -S . -B build/fuzz -DCMAKE_C_COMPILER=clang -DSLUICE_FUZZ=ON
 *   cmake --build build/fuzz --target fuzz_config
 *   mkdir -p /tmp/corpus
 *   build/fuzz/tests/fuzz/fuzz_config -max_len=4096 /tmp/corpus fixtures/config
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_config *cfg = NULL;
	struct sl_buf problems = SL_BUF_INIT;
	struct sl_err err = SL_ERR_INIT;
	int n;

	n = sl_config_parse(&cfg, "fuzz.yaml", (const char *)data, size, &problems, &err);
	if (n > 0 && (!problems.len || !memchr(problems.ptr, '\n', problems.len)))
		abort(); /* a problem counted must be reported */
	if (n == 0 && !cfg)
		abort();
	sl_config_free(cfg);
	sl_buf_release(&problems);
	return 0;
}
