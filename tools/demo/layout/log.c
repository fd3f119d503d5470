// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>

#include "log.h"

static enum log_level log_threshold = LOG_DEBUG;

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *const prefix[] = { "debug", "info", "warn" };
	va_list ap;

	if (level < log_threshold)
		return;
	printf("layout-demo %s: ", prefix[level]);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}
