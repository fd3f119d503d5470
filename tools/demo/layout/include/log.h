/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LAYOUT_LOG_H
#define LAYOUT_LOG_H

#include "common.h"

enum log_level {
	LOG_DEBUG,
	LOG_INFO,
	LOG_WARN,
};

void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
