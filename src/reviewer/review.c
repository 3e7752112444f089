/* reviewer_review(): one review, through the configured transport, failing closed. */
#include "reviewer/reviewer.h"
#include "reviewer/reviewer_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPLY_DEFAULT ((size_t)1 << 20)

static const char *request_tree(json_t *request)
{
	return json_string_value(json_object_get(request, "tree"));
}

static int ask(const struct sl_config *cfg, const char *body, const char *token,
               struct sl_buf *reply, struct reviewer_log *log, struct sl_err *err)
{
	char *url;
	int error;

	if (cfg->reviewer.mode == SL_REVIEWER_COMMAND)
		return reviewer__command(cfg, body, reply, log, err);
	if (cfg->reviewer.protocol != SL_PROTOCOL_OPENAI)
		return reviewer__http_post(cfg, cfg->reviewer.url, body, token, reply, log, err);
	if (!cfg->reviewer.url || !*cfg->reviewer.url)
		return sl_err_set(err, SL_EINVALID,
		                  "reviewer.url is not set; set it in .system/config.yaml");
	if (!(url = reviewer__openai_url(cfg->reviewer.url)))
		return sl_err_set(err, SL_ERROR, "out of memory");
	error = reviewer__http_post(cfg, url, body, token, reply, log, err);
	free(url);
	return error;
}

/* The body to send, with the token redacted (a diff or a summary could hold it). */
static char *request_body(const struct sl_config *cfg, json_t *request, const char *token)
{
	json_t *chat = NULL;
	char *body, *red;

	if (cfg->reviewer.mode != SL_REVIEWER_HTTP || cfg->reviewer.protocol != SL_PROTOCOL_OPENAI)
		body = json_dumps(request, JSON_COMPACT | JSON_SORT_KEYS);
	else if ((chat = reviewer__openai_request(cfg, request)))
		body = json_dumps(chat, JSON_COMPACT);
	else
		body = NULL;
	json_decref(chat);
	if (!body || !token || !strstr(body, token))
		return body;
	red = reviewer__redact_str(body, token);
	free(body);
	return red;
}

/* The verdict object of a reply, redacted. */
static int reply_object(json_t **out, const struct sl_config *cfg, struct sl_buf *reply,
                        const char *token, struct sl_err *err)
{
	json_error_t jerr;

	*out = NULL;
	if (reviewer__redact_buf(reply, token) < 0)
		return sl_err_set(err, SL_ERROR, "out of memory reading the reviewer reply");
	if (cfg->reviewer.mode == SL_REVIEWER_HTTP && cfg->reviewer.protocol == SL_PROTOCOL_OPENAI)
		return reviewer__openai_verdict(out, sl_buf_cstr(reply), reply->len, err);
	if (cfg->reviewer.mode == SL_REVIEWER_COMMAND)
		return reviewer__extract_json(out, sl_buf_cstr(reply), err);
	if (!(*out = json_loadb(sl_buf_cstr(reply), reply->len, JSON_REJECT_DUPLICATES, &jerr)))
		return sl_err_set(err, SL_EINVALID,
		                  "reviewer reply is not valid JSON: %s at line %d column %d",
		                  jerr.text, jerr.line, jerr.column);
	return 0;
}

static const char *default_name(const struct sl_config *cfg)
{
	if (cfg->reviewer.name && *cfg->reviewer.name)
		return cfg->reviewer.name;
	if (cfg->reviewer.mode == SL_REVIEWER_COMMAND)
		return cfg->reviewer.command && cfg->reviewer.command[0] ? cfg->reviewer.command[0]
		                                                         : "command";
	if (cfg->reviewer.protocol == SL_PROTOCOL_OPENAI && cfg->reviewer.model &&
	    *cfg->reviewer.model)
		return cfg->reviewer.model;
	return "reviewer";
}

static int verdict(struct reviewer_verdict *out, const struct sl_config *cfg, json_t *v,
                   const char *tree, const char *token, struct sl_err *err)
{
	char *name;
	int error;

	reviewer__redact_json(v, token);
	if ((error = reviewer_verdict_from_json(out, v, tree, err)) < 0)
		return error;
	if (*out->reviewer)
		return 0;
	if ((error = reviewer__check_name(default_name(cfg), strlen(default_name(cfg)), err)) < 0) {
		reviewer_verdict_release(out);
		return error;
	}
	if (!(name = strdup(default_name(cfg)))) {
		reviewer_verdict_release(out);
		return sl_err_set(err, SL_ERROR, "out of memory");
	}
	free(out->reviewer);
	out->reviewer = name;
	return 0;
}

static int check_mode(const struct sl_config *cfg, json_t *request, struct sl_err *err)
{
	const char *tree = request_tree(request);

	if (cfg->reviewer.mode != SL_REVIEWER_HTTP && cfg->reviewer.mode != SL_REVIEWER_COMMAND)
		return sl_err_set(err, SL_EINVALID,
		                  "reviewer.mode is manual; approve with 'sluice approve RUN' or "
		                  "set reviewer.mode");
	if (!tree || !*tree)
		return sl_err_set(err, SL_EINVALID, "review request has no tree id");
	return 0;
}

/* Last line of defence: no token in the message that becomes a run's reason. */
static void redact_err(struct sl_err *err, const char *token)
{
	char *red;

	if (!err || !token || !*token || !strstr(err->msg, token))
		return;
	red = reviewer__redact_str(err->msg, token);
	snprintf(err->msg, sizeof(err->msg), "%s", red ? red : "reviewer error " REVIEWER_REDACTED);
	free(red);
}

int reviewer_review(const struct sl_config *cfg, json_t *request, struct reviewer_verdict *out,
                    struct reviewer_log *log, struct sl_err *err)
{
	struct reviewer_log dummy;
	const char *token = NULL;
	struct sl_buf reply;
	json_t *v = NULL;
	char *body = NULL;
	int error;

	*out = (struct reviewer_verdict)REVIEWER_VERDICT_INIT;
	if (!log)
		log = &dummy;
	memset(log, 0, sizeof(*log));
	sl_buf_init(&reply, cfg->reviewer.max_reply ? cfg->reviewer.max_reply : MAX_REPLY_DEFAULT);
	if ((error = check_mode(cfg, request, err)) < 0 ||
	    (error = reviewer__token(&token, cfg, err)) < 0)
		goto out;
	if (!(body = request_body(cfg, request, token))) {
		error = sl_err_set(err, SL_ERROR, "cannot serialize the review request");
		goto out;
	}
	if ((error = ask(cfg, body, token, &reply, log, err)) < 0 ||
	    (error = reply_object(&v, cfg, &reply, token, err)) < 0)
		goto out;
	error = verdict(out, cfg, v, request_tree(request), token, err);
out:
	if (error < 0) {
		reviewer_verdict_release(out);
		redact_err(err, token);
	}
	json_decref(v);
	free(body);
	sl_buf_release(&reply);
	return error;
}
