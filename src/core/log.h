#ifndef SL_CORE_LOG_H
#define SL_CORE_LOG_H
/*
 * Leveled logging through one macro that checks the level before it
 * formats anything. The CLI chooses the level and the sink; the default sink
 * writes "sluice: <level>: <message>" lines to stderr.
 */
enum sl_log_level { SL_LOG_ERROR = 0, SL_LOG_WARN, SL_LOG_INFO, SL_LOG_DEBUG };

extern enum sl_log_level sl_log_level;

typedef void (*sl_log_sink)(enum sl_log_level level, const char *msg, void *data);

void sl_log_set_sink(sl_log_sink sink, void *data);
void sl_log__write(enum sl_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const char *sl_log_level_name(enum sl_log_level level);

#define sl_log(level, ...)                                                                         \
	do {                                                                                       \
		if ((level) <= sl_log_level)                                                       \
			sl_log__write((level), __VA_ARGS__);                                       \
	} while (0)

#endif
