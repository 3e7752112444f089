#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>

enum sl_log_level sl_log_level = SL_LOG_WARN;

static sl_log_sink log_sink;
static void *log_data;

void sl_log_set_sink(sl_log_sink sink, void *data)
{
	log_sink = sink;
	log_data = data;
}

const char *sl_log_level_name(enum sl_log_level level)
{
	static const char *names[] = { "error", "warning", "info", "debug" };

	return (unsigned)level < 4 ? names[level] : "log";
}

void sl_log__write(enum sl_log_level level, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log_sink)
		log_sink(level, msg, log_data);
	else
		fprintf(stderr, "sluice: %s: %s\n", sl_log_level_name(level), msg);
}
