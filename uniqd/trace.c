// SPDX-License-Identifier: GPL-2.0
/* The one instance of uniqd's tracepoints (trace.h). */
#define CREATE_TRACE_POINTS
#include "trace.h"
