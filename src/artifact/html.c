/* HTML pages: escaping, a page with a sticky error, the states' colours (report, sluice serve). */
#include "artifact/artifact.h"
#include "store/store.h"
#include "core/buf.h"
#include "core/utf8.h"

#include <stdarg.h>
#include <string.h>

/*
 * Text from outside (an invalid work order's title is stored as written)
 * as the CLI shows it (cli_esc): control characters, line breaks, C1 codes,
 * line separators and bidirectional overrides as \n, \x1b, \u202e; bytes
 * that are not UTF-8 as \xff. Returns 1 when it wrote the escape of the
 * character at *s (advanced past it), 0 when *s is plain text for the caller.
 */
int artifact_visible(struct sl_buf *b, const char **s, int *error)
{
	const unsigned char *p = (const unsigned char *)*s;
	unsigned long cp;
	size_t l = sl_utf8_seq(p, 4, &cp); /* NUL-terminated: the terminator ends a sequence */

	if (!l) {
		*error = sl_buf_addf(b, "\\x%02x", *p);
		l = 1;
	} else if (cp == '\n' || cp == '\t' || cp == '\r')
		*error = sl_buf_puts(b, cp == '\n' ? "\\n" : cp == '\t' ? "\\t" : "\\r");
	else if (sl_utf8_hidden(cp) && cp < 0x80)
		*error = sl_buf_addf(b, "\\x%02lx", cp);
	else if (sl_utf8_hidden(cp))
		*error = sl_buf_addf(b, "\\u%04lx", cp);
	else if (l > 1)
		*error = sl_buf_add(b, p, l);
	else
		return 0;
	*s += l;
	return 1;
}

/* Escapes for HTML text and attributes. */
int artifact_html_esc(struct sl_buf *b, const char *s)
{
	int error = 0;

	while (s && *s && !error) {
		if (artifact_visible(b, &s, &error))
			continue;
		switch (*s) {
		case '&': error = sl_buf_puts(b, "&amp;"); break;
		case '<': error = sl_buf_puts(b, "&lt;"); break;
		case '>': error = sl_buf_puts(b, "&gt;"); break;
		case '"': error = sl_buf_puts(b, "&quot;"); break;
		case '\'': error = sl_buf_puts(b, "&#39;"); break;
		default: error = sl_buf_add(b, s, 1);
		}
		s++;
	}
	return error;
}

void artifact_put(struct artifact_page *p, const char *s)
{
	if (!p->error)
		p->error = sl_buf_puts(p->b, s);
}

void artifact_put_esc(struct artifact_page *p, const char *s)
{
	if (!p->error)
		p->error = artifact_html_esc(p->b, s);
}

void artifact_putf(struct artifact_page *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (!p->error)
		p->error = sl_buf_vaddf(p->b, fmt, ap);
	va_end(ap);
}

/* The colour of a run state's or a work-order state's name (NULL: the default grey). */
const char *artifact_state_color(const char *state)
{
	static const char *const run_colors[RUN_STATE_COUNT] = {
		[RUN_MERGED] = "#2e7d32",	   [RUN_FAILED] = "#c62828",
		[RUN_REJECTED] = "#c62828",	   [RUN_ABANDONED] = "#757575",
		[RUN_MERGE_CONFLICT] = "#ef6c00",  [RUN_AWAITING_REVIEW] = "#f9a825",
		[RUN_REVIEWING] = "#f9a825",	   [RUN_APPROVED] = "#66bb6a",
		[RUN_BUILDING] = "#1565c0",	   [RUN_GATING] = "#6a1b9a",
		[RUN_PREPARING] = "#00838f",	   [RUN_MERGING] = "#558b2f",
		[RUN_RESOLVING] = "#d84315",	   [RUN_QUEUED] = "#90a4ae",
		[RUN_REPORTED] = "#2e7d32",
	};
	static const char *const wo_colors[WO_STATE_COUNT] = {
		[WO_DONE] = "#2e7d32",	  [WO_FAILED] = "#c62828",  [WO_INVALID] = "#c62828",
		[WO_BLOCKED] = "#ef6c00", [WO_RUNNING] = "#1565c0", [WO_WAITING] = "#90a4ae",
		[WO_READY] = "#42a5f5",	  [WO_SKIPPED] = "#bdbdbd",
	};
	enum run_state rs;
	enum wo_state ws;
	const char *c = NULL;

	if (run_state_parse(state, &rs) == 0)
		c = run_colors[rs];
	else if (wo_state_parse(state, &ws) == 0)
		c = wo_colors[ws];
	return c ? c : "#9e9e9e";
}

const char artifact_page_css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#212121;background:#fff}"
	"h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ddd;margin-top:28px}"
	"h3{font-size:15px;margin:18px 0 6px}table{border-collapse:collapse;margin:6px 0}"
	"td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}"
	"th{background:#f5f5f5}.st{color:#fff;border-radius:3px;padding:0 5px;font-size:12px}"
	"td:first-child,code{white-space:nowrap}code{font:12px monospace}"
	".muted{color:#757575}section{margin-bottom:18px}";

void artifact_badge(struct artifact_page *p, const char *state)
{
	artifact_putf(p, "<span class=\"st\" style=\"background:%s\">", artifact_state_color(state));
	artifact_put_esc(p, state);
	artifact_put(p, "</span>");
}

