/* The OpenAI-compatible chat-completions protocol (vLLM, llama.cpp, Ollama, hosted models). */
#include "reviewer/reviewer.h"
#include "reviewer/reviewer_int.h"

#include <stdlib.h>
#include <string.h>

static const char system_prompt[] =
        "You are the code reviewer of sluice, a merge service for AI coding agents. "
        "Nothing merges without your approval of the exact tree you are shown.\n"
        "The user message is a JSON review request (protocol sluice.review.v1): the work order "
        "(its goal, acceptance_criteria, non_goals, stop_conditions and body), the diff from "
        "base to head, the files changed, the builder's summary, the gate results and, for "
        "kind \"resolution\", the merge conflict it resolves and the rival run.\n"
        "Check the diff against the work order: does it reach the goal, does it meet every "
        "acceptance criterion, does it stay out of the non-goals, does it keep the rival "
        "run's intent in a resolution? Be strict: approve only what you would merge yourself. "
        "Do not trust the builder's summary over the diff. If the diff was truncated, you have "
        "not seen all of it: do not approve.\n"
        "Answer with one JSON object and nothing else, exactly in this shape:\n"
        "{\"verdict\": \"approve\" | \"request_changes\" | \"reject\",\n"
        " \"comments\": \"what is wrong and what to change (required unless you approve)\",\n"
        " \"criteria\": [{\"criterion\": \"<an acceptance criterion, verbatim>\", "
        "\"met\": true | false, \"note\": \"why\"}]}\n"
        "Use request_changes when another attempt can fix it, reject when the work order "
        "cannot be done this way. Never approve while a criterion is not met.\n"
        "A request of kind \"report\" (a read-only run: a review, an audit, an explanation) "
        "has no diff: its \"report\" is the builder's answer to the work order. Judge the "
        "report against the work order the same way; nothing of it is merged.";

json_t *reviewer__openai_request(const struct sl_config *cfg, const json_t *request)
{
	char *text = json_dumps(request, JSON_INDENT(1) | JSON_SORT_KEYS);
	json_t *body = NULL;

	if (!text)
		return NULL;
	body = json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s}], s:{s:s}, s:i, s:b}", "model",
	                 cfg->reviewer.model ? cfg->reviewer.model : "", "messages", "role",
	                 "system", "content", system_prompt, "role", "user", "content", text,
	                 "response_format", "type", "json_object", "temperature", 0, "stream", 0);
	free(text);
	return body;
}

char *reviewer__openai_url(const char *base)
{
	static const char suffix[] = "/chat/completions";
	size_t n = strlen(base), s = sizeof(suffix) - 1;
	char *url;

	while (n && base[n - 1] == '/')
		n--;
	if (n >= s && !strncmp(base + n - s, suffix, s))
		s = 0;
	if (!(url = malloc(n + s + 1)))
		return NULL;
	memcpy(url, base, n);
	memcpy(url + n, suffix, s);
	url[n + s] = '\0';
	return url;
}

/* The body of the first ``` fence in text (its info string skipped), or NULL. */
static const char *fence(const char *text, size_t *len)
{
	const char *open = strstr(text, "```"), *start, *close;

	if (!open)
		return NULL;
	start = strchr(open + 3, '\n');
	if (!start)
		return NULL;
	start++;
	close = strstr(start, "```");
	*len = close ? (size_t)(close - start) : strlen(start);
	return start;
}

static json_t *load(const char *s, size_t len)
{
	json_t *v = json_loadb(s, len, JSON_REJECT_DUPLICATES, NULL);

	if (v && !json_is_object(v))
		v = (json_decref(v), NULL);
	return v;
}

int reviewer__extract_json(json_t **out, const char *text, struct sl_err *err)
{
	const char *s, *first, *last;
	size_t len;
	char snip[120];

	if ((*out = load(text, strlen(text))))
		return 0;
	if ((s = fence(text, &len)) && (*out = load(s, len)))
		return 0;
	first = strchr(text, '{');
	last = strrchr(text, '}');
	if (first && last > first && (*out = load(first, (size_t)(last - first) + 1)))
		return 0;
	reviewer__snippet(snip, sizeof(snip), text, strlen(text));
	return sl_err_set(err, SL_EINVALID, "reviewer reply holds no JSON verdict: '%s'", snip);
}

/*
 * The reply's `usage` (prompt_tokens, completion_tokens, cached tokens) and
 * `model`, as the verdict's "usage" in the figures of schema/usage.schema.json
 * (docs/budgets.md); a verdict that says its own usage keeps it.
 */
static void openai_usage(json_t *verdict, const json_t *reply)
{
	const json_t *u = json_object_get(reply, "usage"), *v;
	const json_t *cached = json_object_get(json_object_get(u, "prompt_tokens_details"),
					       "cached_tokens");
	json_int_t c = json_is_integer(cached) ? json_integer_value(cached) : 0;
	json_t *o;

	if (!json_is_object(verdict) || !json_is_object(u) || json_object_get(verdict, "usage") ||
	    !(o = json_object()))
		return;
	/* prompt_tokens counts the cached ones too; input_tokens does not */
	if (json_is_integer(v = json_object_get(u, "prompt_tokens")))
		json_object_set_new(o, "input_tokens", json_integer(json_integer_value(v) > c
								   ? json_integer_value(v) - c
								   : 0));
	if (json_is_integer(v = json_object_get(u, "completion_tokens")))
		json_object_set(o, "output_tokens", (json_t *)v);
	if (json_is_integer(cached))
		json_object_set(o, "cache_read_tokens", (json_t *)cached);
	if (json_is_string(v = json_object_get(reply, "model")))
		json_object_set(o, "model", (json_t *)v);
	json_object_set_new(verdict, "usage", o);
}

int reviewer__openai_verdict(json_t **out, const char *reply, size_t len, struct sl_err *err)
{
	json_t *r, *content;
	json_error_t jerr;
	int error;

	*out = NULL;
	if (!(r = json_loadb(reply, len, 0, &jerr)))
		return sl_err_set(err, SL_EINVALID,
		                  "reviewer reply is not valid JSON: %s at line %d column %d",
		                  jerr.text, jerr.line, jerr.column);
	content = json_object_get(
	        json_object_get(json_array_get(json_object_get(r, "choices"), 0), "message"),
	        "content");
	if (!json_is_string(content))
		error = sl_err_set(
		        err, SL_EINVALID,
		        "reviewer reply has no choices[0].message.content; is reviewer.url a "
		        "chat-completions server?");
	else
		error = reviewer__extract_json(out, json_string_value(content), err);
	if (!error)
		openai_usage(*out, r);
	json_decref(r);
	return error;
}
