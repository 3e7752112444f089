/*
 * libFuzzer target for the reviewer's reply parsers: any bytes go through
 * reviewer_verdict_parse() (protocol sluice), the verdict extraction from
 * model output (mode command: plain, fenced, or braces after prose), the
 * chat-completions reply (protocol openai), and the token redaction of
 * replies; and the same bytes as a diff in a review request, cut anywhere. Nothing may crash, leak or read out of bounds, and nothing but a
 * well-formed approve for the request's tree approves.
 *
 *   cmake -S . -B build/fuzz -DCMAKE_C_COMPILER=clang -DSLUICE_FUZZ=ON
 *   cmake --build build/fuzz --target fuzz_verdict
 *   mkdir -p /tmp/corpus
 *   build/fuzz/tests/fuzz/fuzz_verdict -max_len=4096 /tmp/corpus fixtures/reviewer/replies
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reviewer/reviewer.h"
#include "reviewer/reviewer_int.h"

#define TREE "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
#define TOKEN "tok"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A verdict that parsed: it approves nothing but TREE, and only as approve. */
static void check(struct reviewer_verdict *v)
{
	json_t *j = reviewer_verdict_to_json(v);

	if (reviewer_verdict_approves_tree(v, "0000000000000000000000000000000000000000") ||
	    (reviewer_verdict_approves_tree(v, TREE) && strcmp(v->verdict, "approve")) ||
	    strpbrk(v->reviewer, "\r\n"))
		abort();
	json_decref(j);
	reviewer_verdict_release(v);
}

static void from_object(json_t *o)
{
	struct reviewer_verdict v = REVIEWER_VERDICT_INIT;
	struct sl_err err = SL_ERR_INIT;

	reviewer__redact_json(o, TOKEN);
	if (reviewer_verdict_from_json(&v, o, TREE, &err) == 0)
		check(&v);
	json_decref(o);
}

/* The bytes as a diff, cut at a size taken from the input: valid JSON text whatever they are. */
static void as_diff(const uint8_t *data, size_t size)
{
	struct reviewer_input in;
	struct sl_err err = SL_ERR_INIT;
	json_t *req = NULL;
	char *text;

	memset(&in, 0, sizeof(in));
	in.run_id = "run";
	in.kind = "build";
	in.tree = TREE;
	in.diff = (const char *)data;
	in.diff_len = size;
	in.diff_max = size ? 1 + data[0] % size : 1;
	if (reviewer_request_new(&req, &in, &err) != 0)
		abort();
	if (!(text = json_dumps(req, JSON_COMPACT)) ||
	    json_string_length(json_object_get(req, "diff")) > 3 * in.diff_max)
		abort();
	free(text);
	json_decref(req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reviewer_verdict v = REVIEWER_VERDICT_INIT;
	struct sl_err err = SL_ERR_INIT;
	struct sl_buf b = SL_BUF_INIT;
	json_t *o = NULL;

	if (reviewer_verdict_parse(&v, (const char *)data, size, TREE, &err) == 0)
		check(&v);
	sl_err_clear(&err);
	if (sl_buf_add(&b, data, size) == 0) {
		/* mode command: the text as a C string, as the reply buffer hands it on */
		if (reviewer__extract_json(&o, sl_buf_cstr(&b), &err) == 0)
			from_object(o);
		sl_err_clear(&err);
		if (reviewer__openai_verdict(&o, b.ptr ? b.ptr : "", b.len, &err) == 0)
			from_object(o);
		sl_err_clear(&err);
		reviewer__redact_buf(&b, TOKEN);
	}
	sl_buf_release(&b);
	as_diff(data, size);
	return 0;
}
