/*
 * libFuzzer target for the work-order parser: any bytes go through
 * queue_parse() and, when they parse, queue_validate() and the context-path
 * helper. Nothing may crash, leak or read out of bounds.
 *
 *   cmake -S . -B build/fuzz -DCMAKE_C_COMPILER=clang -DSLUICE_FUZZ=ON
 *   cmake --build build/fuzz --target fuzz_front_matter
 *   mkdir -p /tmp/corpus
 *   build/fuzz/tests/fuzz/fuzz_front_matter -max_len=4096 /tmp/corpus \
 *       fixtures/work_orders/valid fixtures/work_orders/invalid
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "queue/queue.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct queue_wo *wo = NULL;
	struct sl_err err = SL_ERR_INIT;
	size_t i;

	if (queue_parse(&wo, "fuzz.md", data, size, &err) == 0) {
		queue_validate(wo, &err);
		for (i = 0; wo->context && wo->context[i]; i++)
			free(queue_context_path(wo->context[i]));
		queue_wo_free(wo);
	}
	return 0;
}
